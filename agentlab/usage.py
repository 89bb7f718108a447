"""Tokens and money: what each turn of the loop sent, received and cost.

The API is stateless, so every request sends the whole history again: the
input of turn 5 holds turns 1 to 4. ``context_growth`` shows that resending
turn by turn; prompt caching (``AgentLoop(..., cache=True)``) makes the
resent part a cheap cache read instead of full-price input.

    loop = al.AgentLoop(client, "How many .py files are here?")
    loop.run()
    from agentlab.usage import report
    report(loop)                  # one row per turn, totals and an estimated cost

Everything here is plain data and small functions: ``turn_usage`` (a list of
dicts), ``totals``, ``context_growth`` (rows), ``estimate_cost`` (a ``Cost``),
``growth_table`` (Markdown). Prices come from the model table, ``models.json`` (``agentlab.models``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentlab import models
from agentlab.i18n import t

__all__ = [
    "USAGE_KEYS",
    "Cost",
    "GrowthRow",
    "Price",
    "UsageReport",
    "context_growth",
    "estimate_cost",
    "full_input",
    "growth_table",
    "over_budget",
    "price_for",
    "prices",
    "report",
    "totals",
    "turn_usage",
    "usage_of",
]

USAGE_KEYS = (
    "input_tokens",  # input after the last cache breakpoint: full price
    "output_tokens",
    "cache_creation_input_tokens",  # input written to the cache: a little above full price
    "cache_read_input_tokens",  # input read from the cache: about a tenth of the price
)
PRICES_FILE = models.MODELS_FILE  # prices live in the model table


def _get(obj: Any, key: str, default: Any = None) -> Any:
    return obj.get(key, default) if isinstance(obj, Mapping) else getattr(obj, key, default)


# ---------------------------------------------------------------------------
# Usage per turn, totals
# ---------------------------------------------------------------------------


def usage_of(item: Any) -> dict[str, int]:
    """The four usage counts of a response (``Message``, dict) or of a usage object."""
    usage = _get(item, "usage", None)
    if usage is None:
        usage = item
    return {k: int(_get(usage, k, 0) or 0) for k in USAGE_KEYS}


def turn_usage(source: Any) -> list[dict[str, int]]:
    """One usage dict per model request.

    ``source`` is an ``AgentLoop`` or ``LoopResult`` (their ``.turn_usage``), a
    list of responses, a list of usage dicts, or one response.
    """
    if hasattr(source, "turn_usage"):
        return [usage_of(u) for u in source.turn_usage]
    if isinstance(source, (list, tuple)):
        return [usage_of(item) for item in source]
    return [usage_of(source)]


def full_input(usage: Mapping[str, int]) -> int:
    """Everything the model read in one request: input + cache reads + cache writes."""
    return (
        usage.get("input_tokens", 0)
        + usage.get("cache_read_input_tokens", 0)
        + usage.get("cache_creation_input_tokens", 0)
    )


def totals(source: Any) -> dict[str, int]:
    """Sums over all turns, plus ``full_input_tokens`` and ``total_tokens`` (in + out)."""
    rows = turn_usage(source)
    total = {k: sum(u[k] for u in rows) for k in USAGE_KEYS}
    total["full_input_tokens"] = sum(full_input(u) for u in rows)
    total["total_tokens"] = total["full_input_tokens"] + total["output_tokens"]
    return total


# ---------------------------------------------------------------------------
# Prices and cost
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens for the models whose name starts with ``prefix``."""

    prefix: str
    input: float
    output: float
    cache_write: float
    cache_read: float

    def cost(self, usage: Mapping[str, int]) -> float:
        """Dollars for one turn's usage."""
        return (
            usage.get("input_tokens", 0) * self.input
            + usage.get("output_tokens", 0) * self.output
            + usage.get("cache_creation_input_tokens", 0) * self.cache_write
            + usage.get("cache_read_input_tokens", 0) * self.cache_read
        ) / 1_000_000


def prices() -> dict[str, Any]:
    """Every known price, by model id or prefix, with the date they were checked."""
    data = models.table()
    rows = {k: row["prices"] for k, row in data["models"].items()}
    rows.update(data.get("other_prices", {}))
    return {"checked": data["checked"], "source": data["sources"]["pricing"], "models": rows}


def price_for(model: str | None) -> Price | None:
    """The price of ``model`` (its row in ``models.json``, else the longest matching prefix)."""
    found = models.price(model)
    if found is None:
        return None
    prefix, row = found
    return Price(prefix, **{k: float(v) for k, v in row.items()})


@dataclass(frozen=True)
class Cost:
    """An estimated cost. ``dollars`` is None when it cannot be estimated; ``note`` says why."""

    dollars: float | None
    model: str | None
    note: str

    def __str__(self) -> str:
        return self.note


def model_of(source: Any) -> str | None:
    """The model that answered: the last response's ``model``, else the loop's setting.

    The offline demo answers under the name asked for, but it is the demo that ran.
    """
    demo = getattr(_get(source, "client", None), "demo_model", None)
    if isinstance(demo, str):
        return demo
    response = _get(source, "response", None)
    if response is not None and _get(response, "model", None):
        return str(_get(response, "model"))
    if isinstance(source, (list, tuple)) and source and _get(source[-1], "model", None):
        return str(_get(source[-1], "model"))
    if _get(source, "model", None):
        return str(_get(source, "model"))
    if hasattr(source, "step"):  # an AgentLoop that has not asked yet: the default model
        return models.DEFAULT_MODEL
    return None


def estimate_cost(source: Any, model: str | None = None) -> Cost:
    """The estimated cost of every turn in ``source`` (see ``turn_usage``).

    ``model`` defaults to the model that answered (an ``AgentLoop`` knows it;
    for a ``LoopResult`` or plain usage dicts pass it). The offline demo model
    costs nothing; a model with no price in ``models.json`` gives ``dollars=None``.
    """
    model = model or model_of(source)
    if model is None:
        return Cost(None, None, t("usage.no_model"))
    price = price_for(model)
    if price is None:
        return Cost(None, model, t("usage.no_price", model=model))
    dollars = sum(price.cost(u) for u in turn_usage(source))
    return Cost(
        dollars, model, t("usage.estimate", dollars=dollars, model=model, checked=_checked())
    )


def _checked() -> str:
    return str(prices().get("checked", "?"))


# ---------------------------------------------------------------------------
# Context growth: the history is resent every turn
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GrowthRow:
    """One turn: what was sent and how much of it came from earlier turns.

    ``sent`` is the full input of the request. ``resent`` is the part that
    repeats the previous request and its reply (the history, system prompt and
    tools sent again); ``new`` is the rest (tool results, a new question).
    """

    turn: int
    sent: int
    resent: int
    new: int
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    output_tokens: int
    sent_so_far: int


def context_growth(source: Any) -> list[GrowthRow]:
    """One ``GrowthRow`` per turn (see ``turn_usage`` for what ``source`` may be)."""
    rows: list[GrowthRow] = []
    so_far, before = 0, 0  # before: what the previous turn read and wrote
    for i, u in enumerate(turn_usage(source), start=1):
        sent = full_input(u)
        resent = min(sent, before) if i > 1 else 0
        so_far += sent
        rows.append(
            GrowthRow(
                turn=i,
                sent=sent,
                resent=resent,
                new=sent - resent,
                input_tokens=u["input_tokens"],
                cache_read_input_tokens=u["cache_read_input_tokens"],
                cache_creation_input_tokens=u["cache_creation_input_tokens"],
                output_tokens=u["output_tokens"],
                sent_so_far=so_far,
            )
        )
        before = sent + u["output_tokens"]
    return rows


def growth_table(source: Any) -> str:
    """``context_growth`` as a Markdown table with a total row and one sentence."""
    rows = context_growth(source)
    cols = ("turn", "sent", "resent", "new", "cache_read", "cache_write", "output", "total_sent")
    head = [t(f"usage.col.{c}") for c in cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for r in rows:
        cells = (r.turn, r.sent, r.resent, r.new, r.cache_read_input_tokens,
                 r.cache_creation_input_tokens, r.output_tokens, r.sent_so_far)  # fmt: skip
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    sent = sum(r.sent for r in rows)
    resent = sum(r.resent for r in rows)
    total = (t("usage.total"), sent, resent, sent - resent,
             sum(r.cache_read_input_tokens for r in rows),
             sum(r.cache_creation_input_tokens for r in rows),
             sum(r.output_tokens for r in rows), sent)  # fmt: skip
    lines.append("| " + " | ".join(f"**{c}**" for c in total) + " |")
    return "\n".join(lines) + "\n\n" + t("usage.growth", turns=len(rows), sent=sent, resent=resent)


@dataclass(frozen=True)
class UsageReport:
    """Per-turn rows, totals and the estimated cost; shows as a table in a notebook."""

    rows: list[GrowthRow]
    totals: dict[str, int]
    cost: Cost
    table: str

    def __repr__(self) -> str:
        dollars = "?" if self.cost.dollars is None else f"${self.cost.dollars:.4f}"
        return (
            f"UsageReport(turns={len(self.rows)}, input={self.totals['full_input_tokens']}, "
            f"output={self.totals['output_tokens']}, cost={dollars})"
        )

    def _repr_markdown_(self) -> str:
        return f"{self.table}\n\n{self.cost.note}\n"


def report(source: Any, model: str | None = None) -> UsageReport:
    """Everything above for one loop (or result, or list of responses)."""
    return UsageReport(
        rows=context_growth(source),
        totals=totals(source),
        cost=estimate_cost(source, model),
        table=growth_table(source),
    )


# ---------------------------------------------------------------------------
# Budgets (checked by AgentLoop before each request)
# ---------------------------------------------------------------------------


def over_budget(
    source: Any, *, max_total_tokens: int | None = None, max_cost: float | None = None
) -> str:
    """Which budget ``source`` has used up, as a short phrase; "" if none.

    ``max_total_tokens`` counts every token read or written (input, cache
    reads and writes, output). ``max_cost`` is in dollars, estimated from
    ``models.json``; a model with no price stops the loop rather than run
    without a check. The turn that crosses a limit finishes; the next request
    is not sent. The requests of helper loops (``source.helpers_usage``: the
    ``task`` tool's) count too, each priced by the model that answered it.
    """
    helpers = getattr(source, "helpers_usage", None) or []
    if max_total_tokens is not None:
        used = totals(source)["total_tokens"] + totals(helpers)["total_tokens"]
        if used >= max_total_tokens:
            return t("budget.tokens", limit=max_total_tokens, used=used)
    if max_cost is not None:
        costs = [estimate_cost(source)] + [estimate_cost([h], h.get("model")) for h in helpers]
        for cost in costs:
            if cost.dollars is None:
                return t("budget.cost_unknown", limit=max_cost, model=cost.model)
        dollars = sum(cost.dollars or 0.0 for cost in costs)
        if dollars >= max_cost:
            return t("budget.cost", limit=max_cost, used=dollars)
    return ""

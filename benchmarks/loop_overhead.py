"""How much does agentlab's loop cost on top of the lesson's bare loop?

Runs 1,000 turns with a no-op tool, once through ``agentlab.agent_loop`` and
once through the lesson's loop, on the same kind of client, interleaved so
both see the same machine load, and prints the ratios of CPU time (best of 5):

- a client that parses each reply into a fresh ``Message`` the way the SDK
  does (``json.loads`` and ``anthropic._models.construct_type``, which is what
  ``anthropic._base_client.BaseClient._process_response_data`` calls when
  ``_strict_response_validation`` is off, the default): target <= 1.3;
- the checking ``ScriptedClient`` students use (it checks every request like
  the API, looking only at messages it has not seen): target <= 1.5;
- a client that does no work at all (it hands back the scripted replies and
  keeps nothing), which shows agentlab's own bookkeeping per turn in microseconds (target <= 10 µs),
  split into what the history checks (``check_at``, in rules.py) and the
  tool's input check (``Tool.run``, in tools/base.py) cost and the rest
  (loop.py and stepper.py), each measured by running again without it;
- the cost of the last 100 turns against turns 10-109 (target: flat, about 1.0), beside the
  same figure for the bare loop: what grows there is the client's own work
  (the checking client keeps a copy of each request's message list).

Both loops are handed the same client wrapper, which notes the time of each
request, so taking the time costs them the same.

The bookkeeping is also counted in Python bytecode instructions per turn, a
figure that does not move with the machine's load.

A last run goes through the real SDK over HTTP to the local Messages-API
server, where a request costs what it really costs to build, send and parse.

The first figures printed are the wall-time measurement, twice: on the client that
parses a fresh ``Message`` per reply as the SDK does, then on one that parses it with
``Message.model_validate_json`` (five times cheaper, so agentlab's share shows more); a no-op ``@al.tool``, 1,000 turns, the
garbage collector off, best of 7, interleaved with the lesson's bare loop;
targets: bookkeeping <= 10 µs a turn and agent_loop <= 1.5x the bare loop
(printed side by side), and flat per turn up to 1,000 turns (the cost per
turn over 1,000 turns against over 100, for both loops). On a machine shared with other work the
figures move by 10-20 % from run to run: compare ratios, not microseconds.

    python benchmarks/loop_overhead.py            # everything
    python benchmarks/loop_overhead.py --wall     # only the wall-time measurement
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure this checkout

import anthropic  # noqa: E402
from anthropic._models import construct_type  # noqa: E402
from anthropic.types import Message  # noqa: E402

import agentlab as al  # noqa: E402
from agentlab import history  # noqa: E402
from agentlab.fakeapi.offline import ScriptedClient, make_message, text, tool_use  # noqa: E402
from agentlab.tools.base import Tool  # noqa: E402

TURNS = 1000
ROUNDS = 5


@al.tool
def noop() -> str:
    """Do nothing."""
    return "ok"


def script(turns: int = TURNS) -> list[Any]:
    replies = [make_message([tool_use("noop", {}, id=f"toolu_{i:04d}")]) for i in range(turns - 1)]
    return replies + [make_message([text("done")])]


class FreshClient:
    """Plays the same script, but each reply arrives as JSON and is parsed into a
    new ``Message``, as the SDK parses an HTTP response (``construct_type``); with
    ``validated=True`` by pydantic's ``Message.model_validate_json`` instead, a parse
    about five times cheaper, so agentlab's share of a turn shows larger."""

    def __init__(self, turns: int = TURNS, validated: bool = False) -> None:
        self.replies = [json.dumps(m.model_dump(mode="json")).encode() for m in script(turns)]
        self.index, self.validated = 0, validated
        self.messages = self

    def create(self, **params: Any) -> Message:
        raw = self.replies[self.index]
        self.index += 1
        if self.validated:
            return Message.model_validate_json(raw)
        return construct_type(type_=Message, value=json.loads(raw))


class NoopClient:
    """Hands back the scripted replies and does nothing else (it keeps no request)."""

    def __init__(self) -> None:
        self.replies = SCRIPT
        self.index = 0
        self.messages = self

    def create(self, **params: Any) -> Message:
        self.index += 1
        return self.replies[self.index - 1]


def bare_loop(client: Any, messages: list[Any]) -> None:
    """The lesson's loop, unchanged but for the tool."""
    while True:
        response = client.messages.create(
            model="m", system="s", messages=messages, tools=[noop.definition], max_tokens=8000
        )
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return
        results = []
        for block in response.content:
            if block.type == "tool_use":
                output = noop.fn()
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
        messages.append({"role": "user", "content": results})


def agentlab_loop(client: Any, messages: list[Any]) -> None:
    al.agent_loop(messages, client, tools=[noop], max_turns=TURNS, system="s", model="m")


class Timed:
    """The client both loops are given: it passes each request on and notes when
    it was made (for the last turns against the first), so the time stamps cost both
    loops the same."""

    def __init__(self, client: Any, stamps: list[float]) -> None:
        self._create, self.stamps, self.messages = client.messages.create, stamps, self

    def create(self, **params: Any) -> Any:
        self.stamps.append(time.perf_counter())
        return self._create(**params)


SCRIPT = script()


def make_client(kind: str) -> Any:
    if kind == "fresh":
        return FreshClient()
    if kind == "noop":
        return NoopClient()
    return ScriptedClient(SCRIPT, check=kind == "checking")


def measure(run: Any, kind: str) -> tuple[float, list[float], list[Any]]:
    client = make_client(kind)
    messages: list[Any] = [{"role": "user", "content": "go"}]
    stamps: list[float] = []
    timed = Timed(client, stamps)
    start = time.process_time()  # CPU time: the machine may be busy with other work
    run(timed, messages)
    return time.process_time() - start, stamps, messages


def growth(runs: list[tuple[float, list[float], list[Any]]]) -> float:
    """The time of the last 100 turns against turns 10 to 109 (medians of the gaps
    between requests, the best of the rounds for each)."""
    gaps = [[b - a for a, b in zip(stamps, stamps[1:])] for _, stamps, _ in runs]
    early = min(statistics.median(g[10:110]) for g in gaps)
    late = min(statistics.median(g[-100:]) for g in gaps)
    return late / early


def compare(kind: str, label: str, target: float | None) -> None:
    measure(agentlab_loop, kind)  # warm up imports and caches
    bare, ours = [], []
    for _ in range(ROUNDS):  # interleaved: both see the same load
        bare.append(measure(bare_loop, kind))
        ours.append(measure(agentlab_loop, kind))
    assert all(len(r[2]) == 2 * TURNS for r in bare + ours)  # every turn ran
    t_bare, t_ours = min(b[0] for b in bare), min(o[0] for o in ours)
    print(f"{TURNS} turns on {label}, best of {ROUNDS}")
    print(f"  lesson's bare loop : {t_bare * 1000:8.1f} ms ({t_bare / TURNS * 1e6:6.1f} µs/turn)")
    print(f"  agentlab.agent_loop: {t_ours * 1000:8.1f} ms ({t_ours / TURNS * 1e6:6.1f} µs/turn)")
    goal = f"target <= {target}" if target else "no target: see the bookkeeping below"
    print(f"  ratio agent_loop / bare loop: {t_ours / t_bare:.2f}   ({goal})")
    print(f"  agentlab's last 100 turns vs turns 10-109: {growth(ours):.2f}   (target: flat, ~1.0)")
    print(
        f"  the bare loop's, on the same client       : {growth(bare):.2f}   (the client's share)"
    )


def bookkeeping() -> None:
    """agentlab's own cost per turn on a client that does nothing, and where it goes."""

    def overhead() -> float:
        bare = min(measure(bare_loop, "noop")[0] for _ in range(ROUNDS))
        ours = min(measure(agentlab_loop, "noop")[0] for _ in range(ROUNDS))
        return (ours - bare) / TURNS * 1e6

    overhead()  # warm up
    total = overhead()
    check_at, as_message, run = history.check_at, history.as_message, Tool.run
    history.check_at = lambda i, prev, message, **kw: []
    no_checks = overhead()
    history.as_message = as_appended
    no_history = overhead()
    Tool.run = lambda self, tool_input: self.fn(**tool_input)  # type: ignore[method-assign]
    none = overhead()
    history.check_at, history.as_message = check_at, as_message
    Tool.run = run  # type: ignore[method-assign]
    print("agentlab's bookkeeping per turn on a client that does nothing, best of", ROUNDS)
    print(f"  in all                                       : {total:6.1f} µs   (target <= 10)")
    print(f"  history checks (check_at, 2 a turn)          : {total - no_checks:6.1f} µs")
    print(f"  replies and results as dicts (as_message, 2) : {no_checks - no_history:6.1f} µs")
    print(f"  the tool's input check (Tool.run)            : {no_history - none:6.1f} µs")
    print(f"  the rest (loop.py's events, harness.run_one) : {none:6.1f} µs")


def as_appended(item: Any) -> dict[str, Any]:
    """What the bare loop appends, for ``bookkeeping``: the reply's own blocks, no copy."""
    if type(item) is list:
        return {"role": "user", "content": item}
    return {"role": "assistant", "content": item.content}


def instructions() -> None:
    """The same run counted in Python bytecode instructions: exact, whatever the
    machine's load (``sys.settrace`` with opcode events; slow, so one run each)."""
    count = [0]

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True

        def each(frame: Any, event: str, arg: Any) -> Any:
            if event == "opcode":
                count[0] += 1
            return each

        return each

    def counted(run: Any) -> float:
        measure(run, "noop")  # first uses (imports, caches) are not counted
        count[0] = 0
        sys.settrace(tracer)
        try:
            measure(run, "noop")
        finally:
            sys.settrace(None)
        return count[0] / TURNS

    bare, ours = counted(bare_loop), counted(agentlab_loop)
    print("Python bytecode instructions per turn on a client that does nothing (exact)")
    print(f"  lesson's bare loop : {bare:7.0f}")
    print(f"  agentlab.agent_loop: {ours:7.0f}   ({ours - bare:.0f} of bookkeeping)")


def over_http(turns: int = 100) -> None:
    """The same comparison through the real SDK and the local Messages-API server."""
    from agentlab.fakeapi.server import FakeMessagesServer

    def reply(body: dict[str, Any]) -> Any:  # a no-op tool call until the last turn
        done = len(body["messages"]) >= 2 * turns - 1
        return [text("done")] if done else [tool_use("noop", {})]

    def timed(run: Any) -> float:
        with FakeMessagesServer(reply, check=False) as server:
            client = anthropic.Anthropic(api_key="test", base_url=server.url, max_retries=0)
            messages: list[Any] = [{"role": "user", "content": "go"}]
            start = time.perf_counter()
            run(client, messages)
            return time.perf_counter() - start

    def ours(client: Any, messages: list[Any]) -> None:
        al.agent_loop(messages, client, tools=[noop], max_turns=turns, system="s", model="m")

    timed(ours)  # warm up
    t_bare = min(timed(bare_loop) for _ in range(2))
    t_ours = min(timed(ours) for _ in range(2))
    print(f"{turns} turns through the real SDK and the local server (HTTP), best of 2")
    print(f"  lesson's bare loop : {t_bare * 1000:8.1f} ms ({t_bare / turns * 1e3:6.2f} ms/turn)")
    print(f"  agentlab.agent_loop: {t_ours * 1000:8.1f} ms ({t_ours / turns * 1e3:6.2f} ms/turn)")
    print(f"  ratio agent_loop / bare loop: {t_ours / t_bare:.2f}   (target <= 1.3)")


def wall(rounds: int = 7, validated: bool = False) -> None:
    """Wall time, gc off, best of ``rounds``, interleaved, on the fresh-Message client; then
    the cost per turn over 100 turns beside over 1,000 (flat: the same), for both loops."""

    def timed(run: Any, turns: int = TURNS) -> tuple[float, list[float]]:
        client = FreshClient(turns, validated)
        messages: list[Any] = [{"role": "user", "content": "go"}]
        stamps: list[float] = []
        timed_client = Timed(client, stamps)
        start = time.perf_counter()
        run(timed_client, messages)
        took = time.perf_counter() - start
        assert len(messages) == 2 * turns  # every turn ran
        return took, stamps

    timed(agentlab_loop), timed(bare_loop)  # warm up imports and caches
    bare, ours, bare_100, ours_100 = [], [], [], []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):  # interleaved: both see the same load
            bare.append(timed(bare_loop))
            ours.append(timed(agentlab_loop))
        gc.collect()
        for _ in range(rounds):  # the same over 100 turns, for the cost per turn as it grows
            bare_100.append(min(timed(bare_loop, 100)[0] for _ in range(5)))
            ours_100.append(min(timed(agentlab_loop, 100)[0] for _ in range(5)))
    finally:
        if enabled:
            gc.enable()
    t_bare, t_ours = min(b[0] for b in bare), min(o[0] for o in ours)
    flat = growth([(t, stamps, []) for t, stamps in ours])
    how = "model_validate_json" if validated else "construct_type, as the SDK does"
    print(f"{TURNS} turns, wall time, gc off, best of {rounds}, each reply a fresh Message ({how})")
    print(f"  lesson's bare loop : {t_bare * 1000:8.1f} ms ({t_bare / TURNS * 1e6:6.1f} µs/turn)")
    print(f"  agentlab.agent_loop: {t_ours * 1000:8.1f} ms ({t_ours / TURNS * 1e6:6.1f} µs/turn)")
    keep, ratio = (t_ours - t_bare) / TURNS * 1e6, t_ours / t_bare
    print(f"  bookkeeping {keep:5.1f} µs/turn (target <= 10)   ratio {ratio:.2f} (target <= 1.5)")
    print("  cost per turn over 1,000 turns / over 100 turns (target: flat, ~1.0)")
    for name, long, short, note in (
        ("agent_loop", t_ours, ours_100, ""),
        ("bare loop ", t_bare, bare_100, "   (the client's share: each parsed reply is kept)"),
    ):
        per_100, per_1000 = min(short) / 100 * 1e6, long / TURNS * 1e6
        print(f"    {name}: {per_1000:6.1f} / {per_100:6.1f} µs = {per_1000 / per_100:.2f}{note}")
    print(f"  agentlab's last 100 turns vs turns 10-109: {flat:.2f}   (target: flat, ~1.0)")


def main() -> None:
    wall()
    wall(validated=True)
    if "--wall" in sys.argv:
        return
    compare("fresh", "a client that parses each reply into a fresh Message, as the SDK does", 1.3)
    compare("checking", "the checking ScriptedClient (default)", 1.5)
    compare("noop", "a client that does nothing", None)
    bookkeeping()
    instructions()
    if "--no-http" not in sys.argv:
        over_http()


if __name__ == "__main__":
    main()

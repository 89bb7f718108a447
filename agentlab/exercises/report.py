"""What ``check`` returns: which scenarios passed, and for each failure what was
expected and what happened; then, once each, a hint for every lesson idea the
failures break.

Hints nudge first. ``check`` counts, per exercise in one kernel, the tries on
which each idea failed (``tried``): an idea's first failure names what to look
at and holds no code of the answer, a second points at the exact field or line.
``level`` is the lowest of them: 3 (every idea failing now has failed three
times) also shows the answer, the reference solution.

A Report shows itself as HTML in a notebook, as Markdown where only Markdown
renders, and as plain text in a terminal (``print(report)``). Every piece of
text that came from the student's code or from a model is escaped. ``repr``
stays one short line, the same on every run, so nbval can compare it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from agentlab.i18n import gap, t

__all__ = ["Report", "Result"]


@dataclass(frozen=True)
class Result:
    """How one scenario went."""

    scenario: str  # a stable name, e.g. "parallel_calls"
    title: str  # one line: what the scenario gives and what it wants
    passed: bool
    expected: str = ""
    happened: str = ""
    idea: str = ""  # the lesson idea it is about, e.g. "pair_by_id"
    idea_title: str = ""
    hint: str = ""
    notes: tuple[str, ...] = ()  # "what a real harness must handle": never a failure
    printed: str = ""  # what the student's function printed
    timed_out: bool = False  # it was still running at the time limit
    stuck: bool = False  # and still running after we asked it to stop
    stub: bool = False  # it raised NotImplementedError


@dataclass(frozen=True)
class Report:
    """The checker's verdict on one exercise."""

    exercise: str
    results: tuple[Result, ...]
    problem: str = ""  # something wrong with the function as a whole (not callable, a stub...)
    level: int = 1  # how much the hints say: 1 where to look, 2 the exact line, 3 the answer
    answer: str = ""  # the reference solution, shown at level 3
    tried: tuple[tuple[str, int], ...] = ()  # (idea, level): an idea failed before says more

    # -- the verdict -------------------------------------------------------------
    @property
    def passed(self) -> bool:
        """True only when there were scenarios and every one of them passed."""
        return bool(self.results) and all(r.passed for r in self.results) and not self.problem

    @property
    def failures(self) -> list[Result]:
        return [r for r in self.results if not r.passed]

    def groups(self) -> list[tuple[Result, list[Result]]]:
        """Failures, with those where exactly the same happened folded into the first."""
        out: list[tuple[Result, list[Result]]] = []
        for r in self.failures:
            for first, same in out:
                if (first.expected, first.happened) == (r.expected, r.happened):
                    same.append(r)
                    break
            else:
                out.append((r, []))
        return out

    @property
    def notes(self) -> list[str]:
        seen: list[str] = []
        for r in self.results:
            seen += [n for n in r.notes if n not in seen]
        return seen

    @property
    def hints(self) -> list[str]:
        """The ideas the failures break, once each: ``["pair_by_id", ...]``."""
        out: list[str] = []
        for r in self.failures:
            if r.idea and r.idea not in out:
                out.append(r.idea)
        return out

    def hint_texts(self) -> list[tuple[str, str]]:
        """``(title, hint)`` for each idea the failures break, once each: a nudge, or the
        exact line for an idea that failed on an earlier try too (``tried``) or at level 2."""
        own = dict(self.tried)
        out = []
        for idea in self.hints:
            key = "ex.nudge" if max(self.level, own.get(idea, 1)) <= 1 else "ex.hint"
            out.append((t(f"ex.idea.{idea}"), t(f"{key}.{idea}")))
        return out

    def _next_step(self) -> str:
        """What the next try shows, or how the answer was reached."""
        if self.level <= 1:
            return t("ex.report.level1", name=self.exercise)
        if self.level == 2:
            return t("ex.report.level2", name=self.exercise)
        return t("ex.report.level3")

    def score(self, points: float = 1.0) -> float:
        """``points`` times the share of scenarios passed, for nbgrader's partial credit."""
        if not self.results or self.problem:
            return 0.0
        return round(points * sum(r.passed for r in self.results) / len(self.results), 2)

    def summary(self) -> str:
        n, total = sum(r.passed for r in self.results), len(self.results)
        if self.passed:
            return t("ex.report.all_passed", name=self.exercise, total=total)
        return t("ex.report.some_failed", name=self.exercise, n=n, total=total)

    # -- text ------------------------------------------------------------------
    def __repr__(self) -> str:
        n, total = sum(r.passed for r in self.results), len(self.results)
        return f"Report({self.exercise!r}, passed={self.passed}, scenarios={n}/{total})"

    def __str__(self) -> str:
        mark = "✓" if self.passed else "✗"
        lines = [f"{mark} {self.summary()}"]
        if self.problem:
            lines += ["", self.problem, "", t("ex.report.will_check")]
            lines += [f"  - {r.scenario}: {r.title}" for r in self.results]
            return "\n".join(lines)
        for r, same in self.groups():
            lines += ["", f"✗ {r.scenario}: {r.title}"]
            lines += _indent(t("ex.report.expected"), r.expected)
            lines += _indent(t("ex.report.happened"), r.happened)
            if r.printed:
                lines += _indent(t("ex.report.printed"), r.printed)
            if same:
                lines.append(f"  {t('ex.report.same', names=', '.join(x.scenario for x in same))}")
        if self.failures:
            lines += [""] + [
                f"{(k := t('ex.report.hint', idea=i))}{gap(k)}{h}" for i, h in self.hint_texts()
            ]
            if self.level >= 3 and self.answer:
                lines += ["", t("ex.report.answer")] + [
                    f"    {x}" for x in self.answer.splitlines()
                ]
            lines += ["", self._next_step()]
        passed = [r for r in self.results if r.passed]
        if passed:
            lines += ["", t("ex.report.passed_list", n=len(passed))]
            lines += [f"  ✓ {r.scenario}: {r.title}" for r in passed]
        if self.notes:
            lines += ["", t("ex.report.notes")] + [f"  - {n}" for n in self.notes]
        return "\n".join(lines)

    # -- Markdown ----------------------------------------------------------------
    def _repr_markdown_(self) -> str:
        mark = "✓" if self.passed else "✗"
        out = [f"**{mark} {_md(self.summary())}**", ""]
        if self.problem:
            out += [_md(self.problem), "", _md(t("ex.report.will_check"))]
            out += [f"- `{r.scenario}`: {_md(r.title)}" for r in self.results]
            return "\n".join(out) + "\n"
        for r, same in self.groups():
            out += [f"- ✗ `{r.scenario}`: {_md(r.title)}", ""]
            out += _md_block(t("ex.report.expected"), r.expected)
            out += _md_block(t("ex.report.happened"), r.happened)
            if r.printed:
                out += _md_block(t("ex.report.printed"), r.printed)
            if same:
                names = ", ".join(f"`{x.scenario}`" for x in same)
                out += [f"  {_md(t('ex.report.same', names=''))}{names}", ""]
        if self.failures:
            out += [
                f"- *{_md(k := t('ex.report.hint', idea=i))}*{gap(k)}{_md(h)}"
                for i, h in self.hint_texts()
            ]
            out.append("")
            if self.level >= 3 and self.answer:
                out += [_md(t("ex.report.answer")), ""] + _fenced(self.answer, "python") + [""]
            out += [_md(self._next_step()), ""]
        passed = [r for r in self.results if r.passed]
        if passed:
            out += [f"{_md(t('ex.report.passed_list', n=len(passed)))}", ""]
            out += [f"- ✓ `{r.scenario}`: {_md(r.title)}" for r in passed]
            out.append("")
        if self.notes:
            out += [f"*{_md(t('ex.report.notes'))}*", ""] + [f"- {_md(n)}" for n in self.notes]
        return "\n".join(out) + "\n"

    # -- HTML --------------------------------------------------------------------
    def _repr_html_(self) -> str:
        e = html.escape
        color = "#1a7f37" if self.passed else "#cf222e"
        mark = "✓" if self.passed else "✗"
        out = [
            '<div class="agentlab-report">',
            f'<p style="color:{color}"><strong>{mark} {e(self.summary())}</strong></p>',
        ]
        if self.problem:
            out.append(f"<p>{e(self.problem)}</p><p>{e(t('ex.report.will_check'))}</p><ul>")
            out += [f"<li><code>{e(r.scenario)}</code>: {e(r.title)}</li>" for r in self.results]
            out.append("</ul></div>")
            return "\n".join(out)
        if self.failures:
            out.append("<ol>")
            for r, same in self.groups():
                out += [
                    f"<li><p>✗ <code>{e(r.scenario)}</code>: {e(r.title)}</p>",
                    "<table>",
                    _row(t("ex.report.expected"), r.expected),
                    _row(t("ex.report.happened"), r.happened),
                ]
                if r.printed:
                    out.append(_row(t("ex.report.printed"), r.printed))
                out.append("</table>")
                if same:
                    names = ", ".join(f"<code>{e(x.scenario)}</code>" for x in same)
                    out.append(f"<p>{e(t('ex.report.same', names=''))}{names}</p>")
                out.append("</li>")
            out.append("</ol>")
            out += [
                f"<p><strong>{e(k := t('ex.report.hint', idea=i))}</strong>{gap(k)}{e(h)}</p>"
                for i, h in self.hint_texts()
            ]
            if self.level >= 3 and self.answer:
                out.append(
                    f"<p>{e(t('ex.report.answer'))}</p><pre><code>{e(self.answer)}</code></pre>"
                )
            out.append(f"<p><em>{e(self._next_step())}</em></p>")
        passed = [r for r in self.results if r.passed]
        if passed:
            out.append(
                f"<details><summary>{e(t('ex.report.passed_list', n=len(passed)))}</summary><ul>"
            )
            out += [f"<li>✓ <code>{e(r.scenario)}</code>: {e(r.title)}</li>" for r in passed]
            out.append("</ul></details>")
        if self.notes:
            out.append(f"<p><em>{e(t('ex.report.notes'))}</em></p><ul>")
            out += [f"<li>{e(n)}</li>" for n in self.notes]
            out.append("</ul>")
        out.append("</div>")
        return "\n".join(out)


_LEFT = 'style="text-align:left;vertical-align:top"'  # notebooks right-align table cells


def _row(label: str, value: str) -> str:
    e = html.escape
    return f"<tr><th {_LEFT}>{e(label)}</th><td {_LEFT}><pre>{e(value)}</pre></td></tr>"


def _indent(label: str, value: str) -> list[str]:
    lines = value.splitlines() or [""]
    return [f"  {label} {lines[0]}"] + [f"  {' ' * len(label)} {line}" for line in lines[1:]]


def _md(text: str) -> str:
    """Text safe to put in Markdown: no HTML, no accidental formatting."""
    text = html.escape(text, quote=False)
    for ch in "\\`*_[]#|$":
        text = text.replace(ch, "\\" + ch)
    return text


def _fenced(value: str, language: str = "text", indent: str = "") -> list[str]:
    fence = "```"
    while fence in value:
        fence += "`"
    lines = [f"{fence}{language}", *value.splitlines(), fence]
    return [indent + line for line in lines]


def _md_block(label: str, value: str) -> list[str]:
    return [f"  {_md(label)}", "", *_fenced(value, indent="  "), ""]

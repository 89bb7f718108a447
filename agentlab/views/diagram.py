"""The lesson's diagram of one loop turn, as inline SVG, with a stage lit up.

    user task -> request model -> tool_use? --no--> end of turn
                      ^              | yes
                      |          run tool -> pair by id -> append
                      +-------------------------------------+

Colours come from JupyterLab's theme (CSS variables in ``style`` attributes,
with light-theme fallbacks), so the boxes follow a dark theme instead of
glaring white; without Lab's stylesheet (GitHub, an HTML export) the
fallbacks draw the light picture.
"""

from __future__ import annotations

from agentlab.i18n import t
from agentlab.views.render import escape

__all__ = ["NODES", "diagram_svg"]

# node -> (x, y, width, height, shape); x, y is the top-left corner
NODES: dict[str, tuple[int, int, int, int, str]] = {
    "task": (60, 8, 180, 34, "pill"),
    "request": (50, 66, 200, 50, "box"),
    "decide": (70, 142, 160, 62, "diamond"),
    "end": (292, 152, 118, 42, "pill"),
    "execute": (50, 232, 200, 50, "box"),
    "pair": (50, 308, 200, 50, "box"),
    "append": (50, 384, 200, 50, "box"),
}

# The loop's next stage -> the nodes that light up, and the arrows leading to them.
STAGE_NODES = {
    "request": ("request",),
    "decide": ("decide",),
    "execute": ("execute",),
    "append": ("pair", "append"),
    "done": ("end",),
}
STAGE_EDGES = {
    "request": ("task-request", "append-request"),
    "decide": ("request-decide",),
    "execute": ("decide-execute",),
    "append": ("execute-pair", "pair-append"),
    "done": ("decide-end",),
}

WIDTH, HEIGHT = 420, 448
INK = "var(--al-fg,#1f2328)"
MUTED = "var(--al-muted,#57606a)"
LINE = "var(--al-muted,#8c959f)"
FILL = "var(--al-bg2,#f6f8fa)"
# state -> (fill, stroke and label colour); mixed with the theme so both themes read well
HOT = {
    "next": ("color-mix(in srgb,#d97706 20%,var(--al-bg,#fff))", "var(--al-wait,#9a4d00)"),
    "running": ("color-mix(in srgb,#2563eb 20%,var(--al-bg,#fff))", "var(--al-link,#1f5fbf)"),
    "ended": ("color-mix(in srgb,#1a7f37 16%,var(--al-bg,#fff))", "var(--al-ok,#1a7f37)"),
    "stopped": ("color-mix(in srgb,#cf222e 14%,var(--al-bg,#fff))", "var(--al-bad,#b0222c)"),
}


def _center(name: str) -> tuple[float, float]:
    x, y, w, h, _ = NODES[name]
    return x + w / 2, y + h / 2


def _paint(fill: str, stroke: str, width: float) -> str:
    return f'style="fill:{fill};stroke:{stroke};stroke-width:{width}"'


def _node(name: str, label: str, sub: str, state: str | None, tag: bool = True) -> str:
    """One box; ``state`` lights it (next, running, stopped); ``tag`` writes the
    state's word beside it (one word per picture, even when two boxes are lit)."""
    x, y, w, h, shape = NODES[name]
    fill, stroke = HOT.get(state or "", (FILL, LINE))
    paint = _paint(fill, stroke, 3 if state else 1.5)
    cx, cy = _center(name)
    out = [f'<g data-node="{name}" data-state="{state or ""}">']
    if shape == "diamond":
        points = f"{cx},{y} {x + w},{cy} {cx},{y + h} {x},{cy}"
        out.append(f'<polygon points="{points}" {paint}/>')
    else:
        rx = h / 2 if shape == "pill" else 10
        out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="{rx}" {paint}/>')
    ty = cy + (-3 if sub else 4.5)
    weight = 700 if state else 600
    out.append(
        f'<text x="{cx}" y="{ty}" text-anchor="middle" font-size="13.5" font-weight="{weight}" '
        f'style="fill:{INK}">{escape(label)}</text>'
    )
    if sub:
        out.append(
            f'<text x="{cx}" y="{cy + 13}" text-anchor="middle" font-size="10.5" '
            f'style="fill:{MUTED}">{escape(sub)}</text>'
        )
    if state and tag:
        word = t(f"diagram.{state}")
        if name == "end":  # below the node
            tx, ty, anchor, text = cx, y + h + 16, "middle", f"▲ {word}"
        elif name == "decide":  # left of the diamond: its right side has the "no" arrow
            tx, ty, anchor, text = x - 4, cy + 4, "end", f"{word} ▶"
        else:
            tx, ty, anchor, text = x + w + 8, cy + 4, "start", f"◀ {word}"
        out.append(
            f'<text x="{tx}" y="{ty}" text-anchor="{anchor}" font-size="11.5" font-weight="700" '
            f'data-tag="{state}" style="fill:{stroke}">{escape(text)}</text>'
        )
    out.append("</g>")
    return "".join(out)


def _edge(
    key: str, path: str, hot: str | None, label: str = "", at: tuple[float, float] = (0, 0)
) -> str:
    color = hot or LINE
    marker = "al-arrow-hot" if hot else "al-arrow"
    width = 2.5 if hot else 1.5
    out = (
        f'<path data-edge="{key}" data-hot="{"yes" if hot else ""}" d="{path}" '
        f'style="fill:none;stroke:{color};stroke-width:{width}" marker-end="url(#{marker})"/>'
    )
    if label:
        out += (
            f'<text x="{at[0]}" y="{at[1]}" font-size="11.5" font-weight="600" '
            f'style="fill:{color if hot else MUTED}">{escape(label)}</text>'
        )
    return out


def diagram_svg(stage: str = "request", running: bool = False, ended: str | None = None) -> str:
    """The loop diagram with ``stage`` (the loop's next stage) highlighted.

    ``running=True`` marks it as the stage that is running right now (blue)
    instead of the one that comes next (amber). ``ended``: for a finished loop,
    why (``loop.ended``): the model's own answer lights "no -> end of turn"
    as "ended here"; a turn limit, budget, interrupt or error lights the end
    alone, as "stopped".
    """
    state = "running" if running else "next"
    lit = set(STAGE_NODES.get(stage, ()))
    hot_edges = set(STAGE_EDGES.get(stage, ()))
    if stage == "done" and not running:  # where it ended, not a next step
        state = "ended" if ended in (None, "model") else "stopped"
        if state == "stopped":
            hot_edges = set()
    hot_color = HOT[state][1]

    def hot(key: str) -> str | None:
        return hot_color if key in hot_edges else None

    labels = {
        "task": (t("diagram.task"), ""),
        "request": (t("diagram.request"), t("diagram.request.sub")),
        "decide": (t("diagram.decide"), ""),
        "end": (t("diagram.end"), ""),
        "execute": (t("diagram.execute"), t("diagram.execute.sub")),
        "pair": (t("diagram.pair"), t("diagram.pair.sub")),
        "append": (t("diagram.append"), t("diagram.append.sub")),
    }
    arrow = 'viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" orient="auto-start-reverse"'
    defs = (
        "<defs>"
        f'<marker id="al-arrow" {arrow} markerWidth="9" markerHeight="9">'
        f'<path d="M0,0 L10,5 L0,10 z" style="fill:{LINE}"/></marker>'
        f'<marker id="al-arrow-hot" {arrow} markerWidth="10" markerHeight="10">'
        f'<path d="M0,0 L10,5 L0,10 z" style="fill:{hot_color}"/></marker>'
        "</defs>"
    )
    cx = 150
    edges = [
        _edge("task-request", f"M{cx},42 L{cx},64", hot("task-request")),
        _edge("request-decide", f"M{cx},116 L{cx},140", hot("request-decide")),
        _edge("decide-end", "M230,173 L290,173", hot("decide-end"), t("diagram.no"), (248, 166)),
        _edge(
            "decide-execute",
            f"M{cx},204 L{cx},230",
            hot("decide-execute"),
            t("diagram.yes"),
            (cx + 8, 222),
        ),
        _edge("execute-pair", f"M{cx},282 L{cx},306", hot("execute-pair")),
        _edge("pair-append", f"M{cx},358 L{cx},382", hot("pair-append")),
        _edge(
            "append-request",
            "M50,409 L22,409 Q14,409 14,401 L14,99 Q14,91 22,91 L48,91",
            hot("append-request"),
        ),
    ]
    loop_label = (
        f'<text x="9" y="250" font-size="11" style="fill:{MUTED}" transform="rotate(-90 9 250)" '
        f'text-anchor="middle">{escape(t("diagram.loop"))}</text>'
    )
    first = next((name for name in labels if name in lit), None)
    nodes = [
        _node(name, label, sub, state if name in lit else None, tag=name == first)
        for name, (label, sub) in labels.items()
    ]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" font-family="system-ui,-apple-system,Segoe UI,sans-serif" '
        f'data-stage="{escape(stage)}" data-running="{str(running).lower()}" '
        f'data-ended="{escape(ended or "")}">'
        f"<title>{escape(t('diagram.title'))}</title>{defs}{''.join(edges)}{loop_label}{''.join(nodes)}</svg>"
    )

"""``agentlab`` in a terminal: run the loop and watch each turn.

agentlab run "How many Python files are here?"      # offline demo unless a key is set
agentlab run --yes --max-turns 5 --save chat.json "List the files"
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentlab.i18n import t

__all__ = ["main"]


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentlab", description="Learn how an LLM agent loop works.")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the agent loop on one task, turn by turn")
    run.add_argument("task", help="what to ask, in plain words")
    run.add_argument(
        "--max-turns", type=_positive, default=10, help="most model requests (default 10)"
    )
    run.add_argument("--model", default=None, help="model name (with a real API key)")
    run.add_argument("--yes", action="store_true", help="run tools without asking")
    run.add_argument("--offline", action="store_true", help="use the demo model even with a key")
    run.add_argument("--lang", choices=["en", "zh"], default=None, help="language of what is shown")
    run.add_argument("--stream", action="store_true", help="show the model's text as it is written")
    run.add_argument(
        "--workspace", action="store_true", help="run commands in a fresh temporary folder"
    )
    run.add_argument("--save", metavar="PATH", help="write the history to PATH as JSON")
    run.add_argument("--record", metavar="PATH", help="record every request and reply (JSON lines)")
    run.add_argument("--cache", action="store_true", help="mark the history for prompt caching")
    run.add_argument(
        "--max-total-tokens", type=int, default=None, help="stop past this many tokens"
    )
    run.add_argument(
        "--max-cost", type=float, default=None, help="stop past this estimated cost ($)"
    )
    serve = sub.add_parser(
        "serve",
        add_help=False,
        help="serve the Messages API locally (the demo model) for a class; --help for options",
    )
    serve.add_argument("options", nargs="*", help="see agentlab serve --help")
    sub.add_parser("doctor", help="check what a class needs (model, bash, JupyterLab, fonts)")
    from agentlab import lessons

    lessons.add_arguments(
        sub.add_parser("lessons", help="copy the lessons into a folder and open JupyterLab")
    )
    return p


class _Printer:
    """Turns loop events into readable terminal output (with rich)."""

    def __init__(self, console: Any):
        self.console = console
        self.streaming = False
        self.decided: str | None = None

    def __call__(self, event: Any) -> None:
        from rich.markup import escape
        from rich.panel import Panel

        c, d = self.console, event.data
        if event.kind == "request":
            c.rule(f"[bold]turn {d['turn']}[/] · request")
        elif event.kind == "text":
            self.streaming = True
            c.print(escape(d["text"]), end="", style="green", soft_wrap=True)
        elif event.kind == "response":
            if self.streaming:
                c.print()
                self.streaming = False
                return
            for b in d["response"].content:
                if b.type == "text":
                    c.print(Panel(escape(b.text), title="assistant", border_style="green"))
        elif event.kind == "decision":
            dec = d["decision"]
            self.decided = dec.explanation
            c.print(
                f"[bold]decide[/] stop_reason={dec.reason!r} → [bold]{dec.action}[/]: {escape(dec.explanation)}"
            )
        elif event.kind == "tool_start":
            use = d["tool_use"]
            args = d["input"].get("command") if isinstance(d["input"], dict) else None
            c.print(
                f"[bold cyan]execute[/] {escape(use.name)}: [cyan]{escape(args or json.dumps(d['input']))}[/]"
            )
        elif event.kind == "results":
            for r in d["results"]:
                style = "red" if r.get("is_error") else "white"
                content = (
                    r["content"] if isinstance(r["content"], str) else json.dumps(r["content"])
                )
                title = f"tool_result {r['tool_use_id']}" + (
                    " (is_error)" if r.get("is_error") else ""
                )
                c.print(Panel(escape(content.rstrip()), title=title, border_style=style))
        elif event.kind == "done" and d["explanation"] != self.decided:
            c.print(f"[yellow]{escape(d['explanation'] or '')}[/]")


def _confirm(console: Any) -> Any:
    from agentlab.tools.policy import Verdict, describe_call

    def ask(call: Any) -> Verdict:
        console.print(f"[yellow]The model wants to run:[/] {describe_call(call)}")
        try:
            answer = input("Run it? y = yes, n [reason] = no, e NEW COMMAND = run this instead: ")
        except EOFError:
            answer = ""
        word, _, rest = answer.strip().partition(" ")
        if word.lower() in ("y", "yes"):
            return Verdict.approve()
        if word.lower() == "e" and rest.strip():
            return Verdict.edit({"command": rest.strip()})
        return Verdict.deny(rest.strip() if word.lower() in ("n", "no") else answer.strip())

    return ask


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from agentlab.errors import RequestError
    from agentlab.history import save
    from agentlab.i18n import set_language
    from agentlab.loop import AgentLoop, Interrupted
    from agentlab.offline import connect
    from agentlab.tools import bash, bash_tool, make_workspace
    from agentlab.tools.policy import Verdict

    console = Console(highlight=False)
    if args.lang:
        set_language(args.lang)
    if not args.task.strip():
        console.print("[red]The task is empty: say what the agent should do, in plain words.[/]")
        return 2
    if args.save and not Path(args.save).resolve().parent.is_dir():
        console.print(f"[red]Cannot save to {args.save}: that folder does not exist.[/]")
        return 2
    client = connect(offline=args.offline, model=args.model)
    if args.record:
        from agentlab.recording import record

        client = record(client, args.record)
    approve: Any = None
    if not args.yes:
        if sys.stdin.isatty():
            approve = _confirm(console)
        else:  # nobody to ask: run nothing the model asks for, and say why
            reason = "nobody can be asked (no terminal); rerun with --yes to allow tools"
            approve = lambda call: Verdict.deny(reason)  # noqa: E731
            console.print(
                "[yellow]No terminal to ask you, so no tool will run. Pass --yes to allow them.[/]"
            )
    tool = bash
    if args.workspace:
        folder = make_workspace()
        tool = bash_tool(cwd=folder)
        console.print(f"[dim]commands run in a fresh folder: {folder} (it is kept)[/]")
    tools = [tool]
    loop = AgentLoop(
        client,
        args.task,
        tools=tools,
        model=args.model,
        max_turns=args.max_turns,
        approve=approve,
        stream=args.stream,
        on_event=_Printer(console),
        cache=args.cache,
        max_total_tokens=args.max_total_tokens,
        max_cost=args.max_cost,
    )
    code = 0
    try:
        result = loop.run()
        if result.ended != "model" or result.stop_reason not in ("end_turn", "stop_sequence"):
            code = 1
    except RequestError as e:
        console.print(f"[red]{e.explanation}[/] {t('loop.request_failed')}")
        code = 2
    except Interrupted:  # the loop already said so (its "done" event)
        code = 130
    except KeyboardInterrupt:
        console.print(f"[yellow]{t('loop.request_failed')}[/]")
        code = 130
    if args.save:
        save(loop.messages, args.save)
        console.print(f"[dim]history saved to {args.save}[/]")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["doctor"]:
        from agentlab import doctor

        return doctor.main(argv[1:])
    if argv[:1] == ["serve"]:  # its options belong to agentlab.testing
        from agentlab import testing

        return testing.main(argv[1:])
    args = _parser().parse_args(argv)
    if args.command == "run":
        return run(args)
    if args.command == "lessons":
        from agentlab import lessons

        return lessons.run(args)
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

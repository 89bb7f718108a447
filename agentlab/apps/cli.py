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
from typing import Any, NoReturn

from agentlab.i18n import t

__all__ = ["main"]


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(t("cli.not_positive", value=text))
    return value


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line that names the help to read (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, t("cli.usage_error", prog=self.prog, message=message) + "\n")


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="agentlab", description=t("cli.help.about"))
    sub = p.add_subparsers(dest="command", parser_class=Parser)
    run = sub.add_parser("run", help=t("cli.help.run"))
    run.add_argument("task", help=t("cli.help.task"))
    run.add_argument("--max-turns", type=_positive, default=10, help=t("cli.help.max_turns"))
    run.add_argument("--model", default=None, help=t("cli.help.model"))
    run.add_argument(
        "--yes",
        action="store_true",
        help=t("cli.help.yes"),
    )
    run.add_argument("--offline", action="store_true", help=t("cli.help.offline"))
    run.add_argument("--lang", choices=["en", "zh"], default=None, help=t("cli.help.lang"))
    run.add_argument("--stream", action="store_true", help=t("cli.help.stream"))
    run.add_argument("--workspace", action="store_true", help=t("cli.help.workspace"))
    run.add_argument("--save", metavar="PATH", help=t("cli.help.save"))
    run.add_argument("--record", metavar="PATH", help=t("cli.help.record"))
    run.add_argument("--cache", action="store_true", help=t("cli.help.cache"))
    run.add_argument(
        "--max-total-tokens", type=int, default=None, help=t("cli.help.max_total_tokens")
    )
    run.add_argument("--max-cost", type=float, default=None, help=t("cli.help.max_cost"))
    serve = sub.add_parser(
        "serve",
        add_help=False,
        help=t("cli.help.serve"),
    )
    serve.add_argument("options", nargs="*", help=t("cli.help.serve_options"))
    sub.add_parser("doctor", help=t("cli.help.doctor"))
    from agentlab.apps import lessons

    lessons.add_arguments(sub.add_parser("lessons", help=t("cli.help.lessons")))
    return p


def _text(value: Any, style: str = "") -> Any:
    """Model or tool text for the terminal: escape sequences removed, never markup."""
    from rich.text import Text

    from agentlab.terminal import plain

    return Text(plain(str(value)), style=style)


class _Printer:
    """Turns loop events into readable terminal output (with rich).

    Everything that came from the model or a tool goes through ``_text``
    (escape sequences and control characters removed, no rich markup), and
    a command about to run is shown with ``visible`` (its control
    characters written out), so the screen cannot be made to lie.
    """

    def __init__(self, console: Any):
        self.console = console
        self.streaming = False
        self.decided: str | None = None

    def __call__(self, event: Any) -> None:
        from rich.panel import Panel
        from rich.text import Text

        from agentlab.terminal import visible

        c, d = self.console, event.data
        if event.kind == "request":
            c.rule(Text(t("cli.turn", n=d["turn"]), style="bold"))
        elif event.kind == "text":
            self.streaming = True
            c.print(_text(d["text"], "green"), end="", soft_wrap=True)
        elif event.kind == "response":
            if self.streaming:
                c.print()
                self.streaming = False
                return
            for b in d["response"].content:
                if b.type == "text":
                    c.print(Panel(_text(b.text), title="assistant", border_style="green"))
        elif event.kind == "decision":
            dec = d["decision"]
            self.decided = dec.explanation
            line = t("cli.decide", reason=dec.reason, action=dec.action)
            c.print(Text(line, style="bold"), _text(dec.explanation))
        elif event.kind == "tool_start":
            use = d["tool_use"]
            args = d["input"].get("command") if isinstance(d["input"], dict) else None
            shown = visible(args if isinstance(args, str) else json.dumps(d["input"]))
            c.print(Text(t("cli.execute", name=visible(use.name)), style="bold cyan"))
            c.print(Text(shown, style="cyan"))
        elif event.kind == "results":
            for r in d["results"]:
                style = "red" if r.get("is_error") else "white"
                content = (
                    r["content"] if isinstance(r["content"], str) else json.dumps(r["content"])
                )
                title = f"tool_result {r['tool_use_id']}" + (
                    " (is_error)" if r.get("is_error") else ""
                )
                c.print(Panel(_text(content.rstrip()), title=_text(title), border_style=style))
        elif event.kind == "done":
            if d["explanation"] != self.decided:
                c.print(_text(d["explanation"] or "", "yellow"))
            c.print(Text(t("cli.ended", how=t(f"cli.ended.{d['ended']}")), style="bold"))


def _confirm(console: Any, read: Any = input) -> Any:
    """The terminal approval prompt: shows the exact command, asks until it understands."""
    from rich.text import Text

    from agentlab.terminal import command_lines, command_warnings
    from agentlab.tools.policy import Verdict, describe_call, prompt_verdict

    def say(line: str) -> None:
        console.print(Text(line, style="yellow"))

    def ask(call: Any) -> Verdict:
        command = describe_call(call)
        lines, many = command_lines(command)
        console.print(Text(t("cli.wants_to_run"), style="yellow"))
        if many:  # said before and after, so it stands next to the prompt too
            console.print(Text(many, style="bold red"))
        for line in lines:
            console.print(Text("  │ ", style="yellow"), Text(line), sep="")
        # hidden characters, long runs of spaces, many lines: the views show the same
        for warning in command_warnings(command):
            console.print(Text(warning, style="bold red"))
        while True:
            answer = prompt_verdict(read, say, t("cli.prompt"))
            if not isinstance(answer, str):
                return answer
            if answer:  # "e <new command>"
                return Verdict.edit({"command": answer})
            say(t("cli.unknown_answer"))

    return ask


def run(args: argparse.Namespace) -> int:
    """``agentlab run``: the loop on one task, each turn printed as it happens."""
    from agentlab import errors

    previous, errors.offline_advice = errors.offline_advice, "agentlab run --offline"
    try:  # while it runs, advice names this command's flag, not a Python call
        return _run(args)
    finally:
        errors.offline_advice = previous


def _run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.text import Text

    from agentlab.errors import RequestError
    from agentlab.fakeapi.offline import asks_by_default, connect
    from agentlab.history import save
    from agentlab.i18n import set_language, task_language
    from agentlab.loop import Interrupted
    from agentlab.stepper import AgentLoop
    from agentlab.tools import bash, bash_tool, make_workspace

    console = Console(highlight=False, emoji=False)
    if args.lang:  # the language: --lang, else the task's own script, else the locale (LANG)
        set_language(args.lang)
    elif task_language(args.task):
        set_language(task_language(args.task))
    if not args.task.strip():
        console.print(Text(t("cli.empty_task"), style="red"))
        return 2
    if args.save and not Path(args.save).resolve().parent.is_dir():
        console.print(Text(t("cli.no_folder", path=args.save), style="red"))
        return 2
    client = connect(offline=args.offline, model=args.model)
    # One rule (README, "Approval"): the offline demo runs tools unasked; a
    # real model (a key or a base URL) asks before each tool unless --yes.
    approve: Any = None
    if not args.yes and asks_by_default(client):
        if not sys.stdin.isatty():
            console.print(Text(t("cli.no_terminal"), style="red"))
            return 2
        approve = _confirm(console)
    if args.record:
        from agentlab.fakeapi.recording import record

        client = record(client, args.record)
    tool = bash
    if args.workspace:
        folder = make_workspace(keep=True)  # printed below: it is there to look at after
        tool = bash_tool(cwd=folder)
        console.print(Text(t("cli.workspace", folder=str(folder)), style="dim"))
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
        console.print(_text(e.explanation, "red"), Text(t("loop.request_failed")))
        code = 2
    except Interrupted:  # the loop already said so (its "done" event)
        code = 130
    except KeyboardInterrupt:
        console.print(Text(t("loop.request_failed"), style="yellow"))
        code = 130
    if args.save:
        save(loop.messages, args.save)
        console.print(Text(t("cli.saved", path=args.save), style="dim"))
    return code


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["doctor"]:
        from agentlab.apps import doctor

        return doctor.main(argv[1:])
    if argv[:1] == ["serve"]:  # its options belong to agentlab.fakeapi.server
        from agentlab.fakeapi import server as testing

        return testing.main(argv[1:])
    if "--lang" in argv[:-1]:  # so that --help is in that language too
        from agentlab.i18n import set_language

        choice = argv[argv.index("--lang") + 1]
        if choice in ("en", "zh"):
            set_language(choice)
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if args.command is None:
        print(t("cli.no_command"), file=sys.stderr)
        return 2
    if extra:  # named on the subcommand, so the line points at its own --help
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices[args.command].error(t("cli.unknown_arguments", args=" ".join(extra)))
    if args.command == "run":
        return run(args)
    if args.command == "lessons":
        from agentlab.apps import lessons

        return lessons.run(args)
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

"""Write the instructors' sheet of mistakes students make, from the checker itself.

    python tools/make_instructor_pack.py           # write docs/instructors/mistakes.md
    python tools/make_instructor_pack.py --check   # exit 1 if the committed page is out of date

The page is made by ``tools/make_mistakes.py``: every wrong answer in
``tests/exercises_wrong.py`` run through ``agentlab.exercises.check``, with the report it
gets. Nothing on the page is typed by hand: change a hint and run this again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "instructors" / "mistakes.md"
sys.path.insert(0, str(ROOT / "tests"))


def page() -> str:
    """The sheet as ``tools/make_mistakes.py`` (the exercises' own generator) writes it."""
    sys.path.insert(0, str(ROOT / "tools"))
    from make_mistakes import page as mistakes_page  # type: ignore[import-not-found]

    return str(mistakes_page())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare with the committed page")
    args = parser.parse_args(argv)
    text = page()
    if args.check:
        if not PAGE.exists() or PAGE.read_text("utf-8") != text:
            print(
                f"{PAGE.relative_to(ROOT)} is out of date: run python tools/make_instructor_pack.py"
            )
            return 1
        return 0
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(text, "utf-8")
    print("wrote", PAGE.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

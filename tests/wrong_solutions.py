"""Which rules each wrong solution of the workshop fails, when every check runs: a rule is told
apart when at least one wrong solution fails it and no other rule.

    python -m tests.wrong_solutions                  # every exercise (minutes on a quiet machine)
    python -m tests.wrong_solutions 07-what-survives # one

tests/test_workshop.py runs a wrong solution on its own rule's checks only (it must fail there,
in the words failures.txt holds); a check that every wrong solution also fails for another reason
could be made weaker, or broken, and no wrong solution would say so. This runs all checks on each
wrong solution and prints, per exercise and rule, the wrong solutions that fail that rule alone,
and for the others which rules they fail besides. The exit status is 1 when a rule has none.
Not part of .ci/run: it runs every check of every exercise on every wrong solution.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
from pathlib import Path

import pytest

from workshop.reference import EXERCISES, ROOT, build_variant, rule_of, variants

RULE_TEST = re.compile(r"test_rule(\d+)_")


class FailedRules:
    """A pytest plugin: the rules whose checks failed in one run."""

    def __init__(self) -> None:
        self.rules: set[int] = set()

    def pytest_runtest_logreport(self, report) -> None:
        if report.failed and report.when == "call":
            found = RULE_TEST.search(report.nodeid)
            if found:
                self.rules.add(int(found[1]))


def failed_rules(exercise: str, script: Path) -> set[int]:
    """The rules whose checks fail on `script`, every check run, as an attendee runs them."""
    collector = FailedRules()
    modules = set(sys.modules)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    pytest.main(
        [f"workshop/{exercise}", "--solution", str(script), "-p", "no:xdist", "-q",
         "--tb=no", "-p", "no:cacheprovider"],
        plugins=[collector],
    )  # its output goes to the log given to main()
    for name in set(sys.modules) - modules:  # the exercise's test file is imported anew each run
        if "test_exercise" in name or name.startswith("conftest"):
            del sys.modules[name]
    return collector.rules


def report(exercise: str, folder: Path) -> tuple[dict[int, list[str]], dict[str, set[int]]]:
    """For each rule, the wrong solutions that fail it alone; and what every wrong one fails."""
    fails = {}
    for wrong in variants(exercise, "wrong"):
        (folder / wrong).mkdir(parents=True)
        script = build_variant(exercise, wrong, folder / wrong)
        fails[wrong] = failed_rules(exercise, script)
    rules = sorted({rule_of(wrong) for wrong in fails})
    alone = {rule: [wrong for wrong, failed in fails.items() if failed == {rule}]
             for rule in rules}
    return alone, fails


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exercises", nargs="*", metavar="EXERCISE", help=", ".join(EXERCISES))
    parser.add_argument("--log", default=os.devnull, help="where the checks' own output goes")
    options = parser.parse_args()
    os.chdir(ROOT)
    untold = []
    lines = []
    for exercise in options.exercises or list(EXERCISES):
        with (tempfile.TemporaryDirectory() as folder,
              open(options.log, "a", encoding="utf-8") as log, contextlib.redirect_stdout(log)):
            alone, fails = report(exercise, Path(folder))
        for rule, wrongs in alone.items():
            lines.append(f"{exercise} rule {rule}: " + (", ".join(wrongs) or "NONE fails it alone"))
            if not wrongs:
                untold.append(f"{exercise} rule {rule}")
        for wrong, failed in fails.items():
            if failed != {rule_of(wrong)}:
                lines.append(f"  {wrong} fails rules {sorted(failed) or 'none'}")
    print("\n".join(lines))
    print(f"rules no wrong solution tells apart: {', '.join(untold) or 'none'}")
    return 1 if untold else 0


if __name__ == "__main__":
    sys.exit(main())

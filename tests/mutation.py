"""Mutation testing, one chosen module at a time: how many planted bugs the tests catch.

    python -m tests.mutation rules          # one target (see TARGETS), a few minutes
    python -m tests.mutation --list         # the targets, their code and their tests

mutmut (requirements-mutation.txt) changes one thing at a time in the target's code (a `<` for a
`<=`, a string, a deleted call) and runs the tests that reach the function it changed. A mutant the
tests pass is a bug they would miss. The run works in a copy of the project under .mutation/, so
the checkout is never changed, and it reads only the test files named in the target: on a shared
machine each run takes minutes, not the suite's hour per mutant. Not part of .ci/run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"

# A target: the files to mutate; optionally the functions (mutmut's names, globs allowed) when
# only part of a file is in scope; and the tests that matter for it.
TARGETS = {
    "rules": {
        "files": ["scripted/rules.py"],
        # plain_text() and declared_tools() also serve the scenario's checks (test_server.py's)
        "tests": [
            "tests/test_rules.py",
            "tests/test_server.py::test_scripted_tool_call_must_fit_the_declared_schema",
            "tests/test_server.py::test_failed_expect_is_a_problem_and_a_400",
            "tests/test_server.py::test_tracks_route_requests_by_their_first_user_message",
        ],
    },
    "server-rules": {
        "files": ["scripted/server.py"],
        "functions": [
            "x_signature_errors",
            "x_breakpoints",
            "x_count_usage",
            "xǁScriptedAPIǁ_answer",
            "xǁScriptedAPIǁ_endpoint_refuses",
            "xǁScriptedAPIǁ_missing_thinking_errors",
            "xǁScriptedAPIǁ_prefill_errors",
            "xǁScriptedAPIǁ_too_long",
        ],
        "tests": ["tests/test_rules.py"],
    },
    "budget": {
        "files": ["plumbing/budget.py"],
        "tests": ["tests/test_plumbing_rules.py"],
    },
    "replies": {
        "files": ["plumbing/replies.py"],
        "tests": ["tests/test_plumbing_rules.py"],
    },
    "subagents": {
        "files": ["plumbing/subagents.py"],
        "tests": ["tests/test_plumbing_rules.py"],
    },
    "checks": {
        "files": ["plumbing/checks.py"],
        "tests": ["tests/test_plumbing_rules.py"],
    },
    "turns": {
        "files": ["plumbing/turns.py"],
        "tests": ["tests/test_plumbing_rules.py", "tests/test_plumbing_turns.py"],
    },
    "deny-list": {
        "files": ["plumbing/commands.py"],
        "functions": ["x_refuse_if_blocked", "x_blocklist_spelling"],
        "tests": ["tests/test_plumbing_rules.py"],
    },
    "numbers": {
        "files": ["docsgen/numbers.py"],
        # page_numbers() and benchmark_figures() gather the site's figures (the docs build and
        # tests/test_docs.py check them); these are the rules they are gathered by
        "functions": [
            "x_constant", "x_number_constants", "x_environment_default", "x_setting_default",
            "x_as_shown", "x_code_lines", "x_plumbing_line", "x_plumbing_import_lines",
            "x_lesson_code_lines", "x_changed_lines", "x_main_agent_input", "x_cache_writes",
            "x_model_numbers", "x_caching_numbers", "x_fill_in*",
        ],
        "tests": ["tests/test_generators.py"],
    },
    "changes": {
        "files": ["docsgen/changes.py"],
        "tests": ["tests/test_generators.py"],
    },
    "workshop": {
        "files": ["workshop/reference.py"],
        "tests": ["tests/test_workshop_rules.py"],
    },
}


def copy_project(into: Path) -> None:
    """The files git knows of, or would (new ones included), as they are in the checkout."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() and not name.startswith(".mutation/"):
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)


def mutmut_settings(target: dict, into: Path) -> str:
    """The [tool.mutmut] table for this target. Everything but the target's files is copied as
    it is, so the tests find the rest of the project beside the mutated code."""
    others = sorted(
        entry.name for entry in into.iterdir()
        if entry.name not in ("mutants", ".git") and not entry.name.startswith(".mutation")
    )
    lines = [
        "\n[tool.mutmut]",
        f"source_paths = {quoted(target['files'])}",
        f"also_copy = {quoted(others)}",
        f"pytest_add_cli_args_test_selection = {quoted(target['tests'])}",
        'pytest_add_cli_args = ["-p", "no:xdist", "-p", "no:randomly", "-q"]',
        "use_git_change_detection = false",
    ]
    return "\n".join(lines) + "\n"


def quoted(names: list[str]) -> str:
    return "[" + ", ".join(f'"{name}"' for name in names) + "]"


def mutant_patterns(target: dict) -> list[str]:
    """mutmut's names for the mutants of the chosen functions (all of the file's when none)."""
    patterns = []
    for file in target["files"]:
        module = file.removesuffix(".py").replace("/", ".")
        for function in target.get("functions", ["*"]):
            patterns.append(f"{module}.{function}__mutmut_*")
    return patterns


def tally(into: Path, patterns: list[str]) -> Counter:
    """Each mutant's outcome, from `mutmut results --all true`, for the chosen functions."""
    from fnmatch import fnmatch

    listed = subprocess.run(
        [mutmut(), "results", "--all", "true"], cwd=into, capture_output=True, text=True,
        check=True,
    ).stdout
    outcomes = Counter()
    for line in listed.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name and any(fnmatch(name, pattern) for pattern in patterns):
            outcomes[status] += 1
            if status not in ("killed", "timeout"):
                print(f"  {status}: {name}")
    return outcomes


def mutmut() -> str:
    return str(Path(sys.executable).with_name("mutmut"))


def run(name: str, children: int) -> Counter:
    target = TARGETS[name]
    into = WORK / name
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    copy_project(into)
    with open(into / "pyproject.toml", "a", encoding="utf-8") as settings:
        settings.write(mutmut_settings(target, into))
    patterns = mutant_patterns(target)
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": ""}
    environment.pop("PYTHONDONTWRITEBYTECODE")
    subprocess.run(
        [mutmut(), "run", "--max-children", str(children), *patterns],
        cwd=into, env=environment, check=False,
    )
    outcomes = tally(into, patterns)
    total = sum(outcomes.values())
    killed = outcomes["killed"] + outcomes["timeout"]
    share = f"{100 * killed / total:.1f}%" if total else "-"
    print(f"{name}: {total} mutants, {killed} killed ({share}), {total - killed} left: "
          f"{dict(outcomes)}")
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=", ".join(TARGETS))
    parser.add_argument("--list", action="store_true", help="list the targets and stop")
    parser.add_argument("--children", type=int, default=1,
                        help="mutants tested at once (default 1: the machine is shared)")
    options = parser.parse_args()
    if options.list or not options.targets:
        for name, target in TARGETS.items():
            print(f"{name}: {', '.join(target['files'])} "
                  f"{target.get('functions', '')} <- {', '.join(target['tests'])}")
        return
    unknown = [name for name in options.targets if name not in TARGETS]
    if unknown:
        parser.error(f"no such target {', '.join(unknown)}; the targets: {', '.join(TARGETS)}")
    for name in options.targets:
        run(name, options.children)


if __name__ == "__main__":
    main()

"""The workshop (workshop/): every exercise is complete, its reference solution applies, and its
checks tell right from wrong.

The exercises' own tests run against the reference solutions in the main test run (testpaths
includes workshop/). Here each exercise runs again, in this process (pytester), against:
- the untouched version script an attendee starts from: its tests must fail (exit code 1), not
  break (2 interrupted, 4 usage error, 5 no tests), and every failure must name the rule of the
  README that is not met yet;
- every wrong solution in workshop/<exercise>/wrong/: the reference with one rule broken the way
  participants break it. Only the tests of that rule run (test_rule<N>_...), up to the first
  failure, which must name the rule;
- every right solution in workshop/<exercise>/right/: another correct solution the README allows,
  worded or built differently for the rules its name starts with, which must pass every test.
Every rule has at least one of each.

The inner runs are cheap: an exercise's checks run once (one pytest session) for all of its
scripts, each test once per script (EachScript): a session of its own per script cost 0.15 s of
CPU before its first check ran, 147 times. What they import (the SDK, rich, prompt_toolkit, the
plumbing) is imported once, here, by loading the scripts the exercises start from before the first
run (what_the_scripts_import); pytester forgets the modules a run imports. The captured logs and
long tracebacks are left out.
"""

import difflib
import os
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import jsonschema  # noqa: F401 - imported once for all inner runs, see above
import pytest
import yaml  # noqa: F401

from docsgen.numbers import constant
from tests.agents import ROOT, load_script
from workshop.reference import (
    EXERCISES,
    WORKSHOP,
    DiffDoesNotApply,
    apply_diff,
    build_variant,
    main,
    rule_of,
    rules_of,
    variants,
)

EXERCISE_FILES = ["README.md", "README_ja.md", "test_exercise.py", "solution.diff"]
WRONG = [(exercise, wrong) for exercise in EXERCISES for wrong in variants(exercise, "wrong")]
RIGHT = [(exercise, right) for exercise in EXERCISES for right in variants(exercise, "right")]
RULE_TEST = re.compile(r"test_rule(\d+)_")


def run_exercise(pytester, monkeypatch, exercise: str, script, *options: str, plugins=()):
    """Run an exercise's tests on script, in this process, as an attendee would type it in the
    project folder. The installed plugins are not looked up again for each run (reading every
    package's entry points cost a fifth of a run): the checks use none of them."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester.runpytest_inprocess(
        f"workshop/{exercise}",
        "--solution",
        str(script),
        "-p",
        "no:xdist",
        "-q",
        "--tb=native",  # the message names the rule; native is cheap (no source is parsed)
        "--show-capture=no",
        "-p",
        "no:unraisableexception",  # it collects garbage five times at the end of each run
        *options,
        plugins=list(plugins),
    )


class EachScript:
    """A plugin for an exercise's run: every test runs once on each script, as a run with
    --solution SCRIPT runs it. A wrong solution's script runs only the tests of the rule it
    breaks, up to its first failure (as `-x -k test_rule<N>_` would); the others run every test.
    `runs` tells each report's run ("start", "wrong/3-limit-per-file", ...) and test, as a run of
    one script names it."""

    def __init__(self, scripts: dict[str, Path], rules: dict[str, int]):
        self.scripts = scripts  # run: its script
        self.rules = rules  # run of a wrong solution: the rule whose tests it runs
        self.runs: dict[str, tuple[str, str]] = {}  # node id: its run, its test
        self.stopped: set[str] = set()  # the wrong solutions that failed once

    @pytest.hookimpl(trylast=True)  # after the test's own parameters: its id ends with the run
    def pytest_generate_tests(self, metafunc) -> None:
        # a parameter of the name shadows the script_path fixture of workshop/conftest.py
        if "script_path" in metafunc.fixturenames:
            metafunc.parametrize("script_path", list(self.scripts.values()), ids=list(self.scripts))

    def pytest_collection_modifyitems(self, config, items) -> None:
        for item in items:
            script = item.callspec.params["script_path"]
            run = next(run for run, path in self.scripts.items() if path == script)
            if item.name.endswith(f"[{run}]"):
                test = item.name.removesuffix(f"[{run}]")
            elif item.name.endswith(f"-{run}]"):
                test = item.name.removesuffix(f"-{run}]") + "]"
            else:
                raise pytest.UsageError(f"{item.nodeid}: its id does not end with {run}")
            self.runs[item.nodeid] = (run, test)

        def selected(item) -> bool:
            run, test = self.runs[item.nodeid]
            return run not in self.rules or test.startswith(f"test_rule{self.rules[run]}_")

        config.hook.pytest_deselected(items=[item for item in items if not selected(item)])
        items[:] = [item for item in items if selected(item)]

    def pytest_runtest_protocol(self, item, nextitem):
        if self.runs[item.nodeid][0] in self.stopped:
            return True  # the wrong solution failed already: its run stops there
        return None

    def pytest_runtest_logreport(self, report) -> None:
        run = self.runs[report.nodeid][0]
        if report.failed and run in self.rules:
            self.stopped.add(run)


EXERCISE_RUNS = (  # the tests below that read a run of an exercise's checks
    "test_the_untouched_starting_point_fails_and_each_failure_names_its_rule",
    "test_each_wrong_solution_fails_the_test_of_the_rule_it_breaks",
    "test_each_other_right_solution_passes",
)
# each exercise's runs, kept for one pytest session: a process that runs the suite again (a
# mutation tool, with its bug planted) must run the checks again, not read the last results
RUNS = pytest.StashKey[dict[str, dict[str, SimpleNamespace]]]()


@pytest.fixture(scope="module")
def what_the_scripts_import() -> None:
    """What the scripts the exercises start from import (the SDK, rich, prompt_toolkit, the
    plumbing, the MCP SDK), imported once, before the first run of a worker that runs one, and
    not at collection. Before pytester: it forgets, when its test ends, every module imported
    while it was in use, and a package with a compiled part (cryptography, under the MCP SDK)
    fails when its Python modules are imported a second time."""
    for base in sorted(set(EXERCISES.values())):
        load_script(ROOT / base)  # exercise: the result of each of its runs


def runs_of(exercise: str, request, pytester, monkeypatch, tmp_path_factory) -> dict:
    """Every run of the exercise this test session selects (the untouched start, wrong and right
    solutions), in one pytest session of the exercise's checks; made by the first test of the
    exercise that needs it. Each run's result: its failed checks, with what each says
    (what_it_says); whether any report failed; how many checks passed; the run's output."""
    kept = request.config.stash.setdefault(RUNS, {})
    if "MUTANT_UNDER_TEST" in os.environ:
        # a mutation run (mutmut) gives a check's mutants only the tests that called the check
        # in its clean run: each test runs its own script, so each one calls the checks itself
        key = request.node.nodeid
        wanted = [request.node.callspec.params]
    else:
        key = exercise
        wanted = [
            item.callspec.params
            for item in request.session.items
            if item.originalname in EXERCISE_RUNS and item.callspec.params["exercise"] == exercise
        ]
    if key in kept:
        return kept[key]
    scripts = {}
    rules = {}
    for params in wanted:
        if "wrong" in params:
            rules[params["wrong"]] = rule_of(params["wrong"])
        variant = params.get("wrong") or params.get("right")
        if variant:
            scripts[variant] = build_variant(exercise, variant, tmp_path_factory.mktemp("variant"))
        else:
            scripts["start"] = ROOT / EXERCISES[exercise]
    plugin = EachScript(scripts, rules)
    done = run_exercise(
        pytester, monkeypatch, exercise, ROOT / EXERCISES[exercise], plugins=[plugin]
    )
    output = "\n".join(done.outlines[-60:] + done.errlines[-60:])
    reports = done.reprec.getreports(("pytest_runtest_logreport",))
    results = {}
    for run, script in scripts.items():
        mine = [report for report in reports if plugin.runs[report.nodeid][0] == run]
        failed = [report for report in mine if report.failed and report.when == "call"]
        results[run] = SimpleNamespace(
            ret=done.ret,
            failures=failed,
            said={
                f"{run} {plugin.runs[report.nodeid][1]}": what_it_says(report, script.parent)
                for report in failed
            },
            any_failed=any(report.failed for report in mine),
            what_failed="\n".join(report.longreprtext for report in mine if report.failed),
            passed=sum(report.passed and report.when == "call" for report in mine),
            output=output,
        )
    kept[key] = results
    return results


def what_it_says(report, solution: Path) -> str:
    """A failed check's message as the attendee reads it: the words the check wrote, without
    pytest's `assert ...` explanation under them, and with what changes from run to run written
    the same way each time: the inner run's temporary folders (<tmp>, with / between folders on
    every system), the folder of the script under test (<solution>), the scripted server's ids
    and an object's address."""
    message = report.longrepr.reprcrash.message.split("\nassert ")[0]
    message = message.removeprefix("AssertionError: ")
    root = os.environ["PYTEST_DEBUG_TEMPROOT"]  # set by pytester for the inner run
    for folder, name in ((root, "<tmp>"), (str(solution), "<solution>")):
        for spelling in spellings(folder):
            message = message.replace(spelling, name)
    message = re.sub(
        r"(<tmp>|<solution>)(?:[/\\]+pytest-of-[^/\\]+[/\\]+pytest-\d+)?([^\s'\"]*)",
        lambda path: path[1] + re.sub(r"\\+", "/", path[2]),
        message,
    )
    # pytest numbers a test's folder by the tests of its name that ran before it in the run
    # (test_rule6_..._0, _1, ...); one run holds every script's tests, so each is written as _0
    message = re.sub(r"(<tmp>/test_\w{1,30}?)\d+(?=[-/'\"\s]|$)", r"\g<1>0", message)
    # the scripted server numbers its ids by the calls of the whole run (toolu_01scripted0007)
    message = re.sub(r"\b(toolu_|msg_)01scripted\d{4}\b", r"\g<1>01scripted<n>", message)
    # a validation error of the MCP SDK links pydantic's docs for the version installed
    message = re.sub(r"(errors\.pydantic\.dev/)\d[\w.]*/", r"\g<1><version>/", message)
    return re.sub(r" at 0x[0-9a-fA-F]+>", ">", message)


def spellings(folder: str) -> list[str]:
    """How a check may print a folder, longest first: as given and resolved (Windows' short
    C:\\Users\\RUNNER~1 and its long name), with \\ or / between folders (as_posix()), and in a
    repr, each \\ doubled."""
    forms = []
    for form in {folder, str(Path(folder).resolve())}:
        forms += [form, form.replace("\\", "/"), form.replace("\\", "\\\\")]
    return sorted(set(forms), key=len, reverse=True)


FAILURES_HEADER = """\
# What each check of this exercise says when it fails, word for word: on the script an attendee
# starts from ("start"), and on each wrong solution (the first check of its rule that fails).
# tests/test_workshop.py compares the runs with this file. After changing a check's words, write
# it again with:  WORKSHOP_MESSAGES=write python -m pytest tests/test_workshop.py -p no:xdist
"""


def said_before(exercise: str) -> dict[str, str]:
    """The messages workshop/<exercise>/failures.txt holds, by "<run> <test>"."""
    path = WORKSHOP / exercise / "failures.txt"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return {
        key: message.strip("\n")
        for key, message in re.findall(r"^== (.+)\n((?:(?!== ).*\n?)*)", text, re.MULTILINE)
    }


def run_of(key: str) -> str:
    """The run an entry of failures.txt is from: "start", or a wrong solution's name."""
    return key.split()[0]


def compare_with_failures_txt(exercise: str, run: str, said: dict[str, str]) -> None:
    """The messages of one run (start, or a wrong solution), by "<run> <test>", must be the ones
    failures.txt holds; with WORKSHOP_MESSAGES=write, they are written there instead."""
    before = said_before(exercise)
    mine = {key: message for key, message in before.items() if run_of(key) == run}
    if os.environ.get("WORKSHOP_MESSAGES") == "write":
        others = {key: message for key, message in before.items() if key not in mine}
        entries = {**others, **said}
        # the start first, then the wrong solutions by name; a run's checks in the order they ran
        keys = sorted(entries, key=lambda key: (run_of(key) != "start", run_of(key)))
        text = FAILURES_HEADER + "".join(f"\n== {key}\n{entries[key]}\n" for key in keys)
        (WORKSHOP / exercise / "failures.txt").write_text(text, encoding="utf-8")
        return
    assert said == mine, (
        f"workshop/{exercise}/failures.txt holds other words for {run}; if the new ones are "
        "meant, write it again (see its first lines)\n"
        + "\n".join(
            difflib.unified_diff(
                [f"{key}: {text}" for key, text in mine.items()],
                [f"{key}: {text}" for key, text in said.items()],
                "failures.txt",
                "this run",
                lineterm="",
            )
        )
    )


def test_every_exercise_folder_is_listed_and_complete():
    folders = sorted(
        path.name for path in WORKSHOP.iterdir() if path.is_dir() and path.name[:2].isdigit()
    )
    assert folders == sorted(EXERCISES)
    for folder in folders:
        missing = [name for name in EXERCISE_FILES if not (WORKSHOP / folder / name).is_file()]
        assert not missing, f"workshop/{folder} lacks {missing}"


@pytest.mark.parametrize("exercise", EXERCISES)
@pytest.mark.parametrize("readme", ["README.md", "README_ja.md"])
def test_each_readme_gives_the_start_and_the_check_command_of_its_exercise(exercise, readme):
    text = (WORKSHOP / exercise / readme).read_text(encoding="utf-8")
    base = EXERCISES[exercise]
    windows_base = base.replace("/", "\\")  # exercise 8 starts from a file in its own folder
    for command in (
        f"cp {base} workshop/{exercise}/mine.py",
        f"copy {windows_base} workshop\\{exercise}\\mine.py",
        f"python -m pytest workshop/{exercise} --solution workshop/{exercise}/mine.py",
    ):
        assert command in text, f"workshop/{exercise}/{readme} does not show {command}"


def readme_rules(exercise: str, readme: str) -> list[int]:
    """The numbers of the rules a README lists under its first numbered list."""
    text = (WORKSHOP / exercise / readme).read_text(encoding="utf-8")
    return [int(number) for number in re.findall(r"^(\d+)\. \*\*", text, re.MULTILINE)]


def test_exercise_5_says_the_report_budget_v3_has():
    """The exercise starts from v3's one report budget: both READMEs name it with v3's number (they
    once said a report entered the context whole)."""
    budget = constant(ROOT / "v3_subagents.py", "REPORT_BUDGET")
    said = {
        "README.md": f"`REPORT_BUDGET` ({budget:,} characters)",
        "README_ja.md": f"`REPORT_BUDGET`（{budget:,} 文字）",
    }
    for readme, words in said.items():
        assert words in (WORKSHOP / "05-report-modes" / readme).read_text(encoding="utf-8"), readme


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_rule_of_a_readme_has_a_test_a_wrong_and_a_right_solution(exercise):
    rules = readme_rules(exercise, "README.md")
    assert rules == list(range(1, len(rules) + 1)) and rules, f"{exercise}: rules {rules}"
    assert readme_rules(exercise, "README_ja.md") == rules, f"{exercise}: README_ja.md differs"
    tested = {
        int(number)
        for number in RULE_TEST.findall((WORKSHOP / exercise / "test_exercise.py").read_text())
    }
    broken = {rule_of(wrong) for wrong in variants(exercise, "wrong")}
    other_ways = {rule for right in variants(exercise, "right") for rule in rules_of(right)}
    assert tested == set(rules), f"{exercise}: rules {rules}, tests for {sorted(tested)}"
    assert broken == set(rules), f"{exercise}: rules {rules}, wrong solutions for {sorted(broken)}"
    assert other_ways == set(rules), (
        f"{exercise}: rules {rules}, right solutions for {sorted(other_ways)}"
    )
    assert len(variants(exercise, "wrong")) >= 4


@pytest.mark.parametrize("exercise", EXERCISES)
def test_the_untouched_starting_point_fails_and_each_failure_names_its_rule(
    exercise, what_the_scripts_import, request, pytester, monkeypatch, tmp_path_factory
):
    done = runs_of(exercise, request, pytester, monkeypatch, tmp_path_factory)["start"]
    assert done.ret == 1 and done.failures, done.output
    for report in done.failures:
        rule = RULE_TEST.search(report.nodeid)[1]
        assert f"rule {rule}: " in report.longreprtext, (
            f"{report.nodeid} fails without saying which rule is missing:\n{report.longreprtext}"
        )
    compare_with_failures_txt(exercise, "start", done.said)


@pytest.mark.parametrize(("exercise", "wrong"), WRONG, ids=[f"{e[:2]}-{w}" for e, w in WRONG])
def test_each_wrong_solution_fails_the_test_of_the_rule_it_breaks(
    exercise, wrong, what_the_scripts_import, request, pytester, monkeypatch, tmp_path_factory
):
    rule = rule_of(wrong)
    done = runs_of(exercise, request, pytester, monkeypatch, tmp_path_factory)[wrong]
    assert done.ret in (0, 1) and done.failures, done.output
    assert any(f"rule {rule}: " in report.longreprtext for report in done.failures), "\n".join(
        report.longreprtext for report in done.failures
    )
    compare_with_failures_txt(exercise, wrong, done.said)


@pytest.mark.parametrize(("exercise", "right"), RIGHT, ids=[f"{e[:2]}-{r}" for e, r in RIGHT])
def test_each_other_right_solution_passes(
    exercise, right, what_the_scripts_import, request, pytester, monkeypatch, tmp_path_factory
):
    done = runs_of(exercise, request, pytester, monkeypatch, tmp_path_factory)[right]
    assert done.ret in (0, 1) and done.passed and not done.any_failed, (
        done.what_failed or done.output
    )


def test_a_windows_temp_folder_reads_the_same_however_a_check_prints_it(monkeypatch):
    r"""On Windows the temp folder is C:\Users\RUNNER~1\... (its short name) and a check may print
    it with / (as_posix()) or in a repr; failures.txt holds <tmp> for each."""
    monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", r"C:\Users\RUNNER~1\AppData\Local\Temp\t0")
    message = ("AssertionError: read C:/Users/RUNNER~1/AppData/Local/Temp/t0/pytest-of-me/"
               r"pytest-2/a.txt, not 'C:\\Users\\RUNNER~1\\AppData\\Local\\Temp\\t0\\b.txt'"
               "\nassert False")
    report = SimpleNamespace(longrepr=SimpleNamespace(reprcrash=SimpleNamespace(message=message)))
    assert what_it_says(report, Path("solution")) == "read <tmp>/a.txt, not '<tmp>/b.txt'"


def test_a_diff_applies_after_unrelated_edits_and_a_stale_one_says_where(tmp_path):
    base = [f"line {number}" for number in range(1, 21)]
    solution = base[:10] + ["added"] + base[10:]
    diff = "\n".join(
        difflib.unified_diff(base, solution, "a/script.py", "b/script.py", lineterm="")
    )
    (tmp_path / "script.py").write_text("\n".join(["new first line", *base]) + "\n")
    apply_diff(diff, tmp_path)
    assert (tmp_path / "script.py").read_text().splitlines() == ["new first line", *solution]
    (tmp_path / "script.py").write_text("\n".join(base).replace("line 10", "line ten") + "\n")
    with pytest.raises(DiffDoesNotApply, match="script.py: the lines of hunk @@ -8,6 \\+8,7 @@"):
        apply_diff(diff, tmp_path)


def test_the_reference_tool_starts_from_an_empty_folder_and_empties_only_its_own(
    tmp_path, monkeypatch, capsys
):
    folder = tmp_path / "solution"
    for variant in ("right/1-2-3-4-5-a-migration-skill", None):  # the second has no db-migration
        arguments = ["06-your-own-skill", str(folder)] + (["--variant", variant] if variant else [])
        monkeypatch.setattr(sys, "argv", ["workshop.reference", *arguments])
        assert main() == 0
    assert sorted(path.name for path in (folder / "skills").iterdir()) == ["changelog-entry"]
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    monkeypatch.setattr(sys, "argv", ["workshop.reference", "01-search-tool", str(other)])
    with pytest.raises(SystemExit, match="is not empty"):
        main()
    assert (other / "keep.txt").read_text() == "mine"


def test_a_diff_can_create_files_in_new_folders(tmp_path):
    apply_diff(
        "--- /dev/null\n+++ b/skills/new/SKILL.md\n@@ -0,0 +1,2 @@\n+---\n+name: new\n", tmp_path
    )
    assert (tmp_path / "skills" / "new" / "SKILL.md").read_text() == "---\nname: new\n"


TRAINER_ROW = re.compile(r"^\| (\d) \| [^|]+ \| (\d+) \| (\d+) \| (\d+) \|", re.MULTILINE)


@pytest.mark.parametrize("language", ["docs_en", "docs_ja"])
def test_the_trainer_notes_give_each_exercises_rules_and_solutions(language):
    text = (ROOT / language / "trainer.md").read_text(encoding="utf-8")
    stated = {
        int(number): tuple(int(count) for count in counts)
        for number, *counts in TRAINER_ROW.findall(text)
    }
    actual = {
        int(exercise[:2]): (
            len(readme_rules(exercise, "README.md")),
            len(variants(exercise, "wrong")),
            len(variants(exercise, "right")),
        )
        for exercise in EXERCISES
    }
    assert stated == actual
    for exercise in EXERCISES:
        for wrong in variants(exercise, "wrong"):
            assert f"`{wrong}`" in text, f"{language}/trainer.md does not name {exercise}'s {wrong}"


@pytest.mark.parametrize("language", ["docs_en", "docs_ja"])
def test_the_timetables_add_up(language):
    """Each block starts when the one before it ends."""
    text = (ROOT / language / "workshop.md").read_text(encoding="utf-8")
    for table in re.split(r"\n###? ", text):
        rows = re.findall(r"^\| (\d+):(\d\d) \| (\d+) \|", table, re.MULTILINE)
        starts = [int(hours) * 60 + int(minutes) for hours, minutes, _ in rows]
        ends = [start + int(length) for start, (_, _, length) in zip(starts, rows, strict=True)]
        assert starts[1:] == ends[:-1], f"{language}/workshop.md: {rows}"


def test_no_page_of_the_participants_path_links_the_trainer_notes():
    participant_pages = [
        *WORKSHOP.glob("*.md"),
        *WORKSHOP.glob("*/README*.md"),
        *(page for language in ("docs_en", "docs_ja") for page in (ROOT / language).glob("*.md")),
    ]
    for page in participant_pages:
        if page.name not in ("workshop.md", "trainer.md"):
            assert "trainer.md" not in page.read_text(encoding="utf-8"), page

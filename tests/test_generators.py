"""The docs generators' rules, on small sources that tell them apart: what counts as lesson code
(docsgen/numbers.py), how a number is read from a script and written on a page, every figure a
build gathers (page_numbers(), on demo and benchmark figures given here), and what the "What
changed" card says one version adds to the one before (docsgen/changes.py).

Each fixture has what a wrong rule would count differently: an indented comment beside a top-level
one, a docstring of a function and of a class, a plumbing import block of two statements after one
that is not from the plumbing, tools and functions that are new beside ones that only moved, demo
calls whose first, second and last figures all differ.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest

from docsgen.changes import (
    Changes,
    card,
    card_files,
    diff_counts,
    served_tools,
    tool_names,
    what_changed,
)
from docsgen.charts import GISTDEX
from docsgen.hood import FIRST_CALLS
from docsgen.numbers import (
    as_shown,
    benchmark_figures,
    cache_writes,
    caching_numbers,
    changed_lines,
    code_lines,
    constant,
    fill_in,
    lesson_code_lines,
    main_agent_input,
    model_numbers,
    number_constants,
    page_numbers,
    plumbing_import_lines,
    plumbing_line,
    setting_default,
)
from scripted import ROOT, SCRIPTS
from scripted.models import MODELS
from scripted.warm import WarmPython

# -- what counts as lesson code --
LESSON = '''\
"""The lesson.

Two lines of docstring."""
import os
# -- plumbing -- what a first reading can skip
from plumbing.budget import clip
from plumbing.checks import (ToolError,
                             check_tool_call)
import json

    # an indented comment, as a commented-out line inside a block
TOOLS = [{"name": "bash"}]  # a comment after code is code


class Agent:
    """A class docstring."""

    def run(self):
        """One line."""
        # a comment in a function
        return "# not a comment"


def label():
    name = "a string first is code, not a docstring"
    return name
'''


def test_code_lines_leave_out_comments_however_indented_and_every_docstring():
    assert code_lines(LESSON) == [4, 6, 7, 8, 9, 12, 15, 18, 21, 24, 25, 26]


def test_the_plumbing_import_block_is_its_from_statements_after_the_heading():
    assert plumbing_line(LESSON) == 5
    assert plumbing_import_lines(LESSON) == {6, 7, 8}
    assert lesson_code_lines(LESSON) == 9  # 12 code lines, less the block's 3


@pytest.mark.parametrize("headings", [0, 2])
def test_a_script_needs_exactly_one_plumbing_heading(headings):
    source = "x = 1\n" + "# -- plumbing -- here\n" * headings
    with pytest.raises(ValueError, match=f"expected one .* heading, found {headings}"):
        plumbing_line(source)


def test_a_plumbing_import_before_the_heading_or_from_elsewhere_is_lesson_code():
    source = ("from plumbing.todo import Todo\n# -- plumbing -- skip\nfrom plumbingx import y\n"
              "from plumbing import budget\nfrom . import z\n")
    assert plumbing_import_lines(source) == {4}


@pytest.mark.parametrize(
    ("old", "new", "count"),
    [
        ("a\nb\nc\n", "a\nb\nc\n", 0),
        ("a\nb\nc\n", "a\nB\nc\n", 1),
        ("a\nb\nc\nd\n", "a\nd\n", 2),
        ("a\nb\n", "a\nb\nc\nd\n", 0),  # lines added remove nothing
        ("a\nb\nc\n", "x\ny\n", 3),
        ("a\nb\nc\nd\ne\n", "a\nB\nc\nD\ne\n", 2),
        # 300 lines of two kinds: a diff that took them as noise (difflib's autojunk) would
        # count all 300 as removed when only the last line moved to the top
        ("a\nb\n" * 150 + "c\n", "c\n" + "a\nb\n" * 150, 1),
    ],
    ids=["same", "one changed", "two removed", "only added", "all replaced", "two places",
         "many alike lines"],
)
def test_changed_lines_count_what_the_diff_marks_with_a_left_angle(old, new, count):
    assert changed_lines(old, new) == count


# -- numbers read from the source, written as the pages write them --
SCRIPT = '''\
import os
MODEL_ID = os.environ.get("MODEL_ID", "claude-sonnet-5-5")
MAX_TOKENS = int(os.environ.get("MAX_TOKENS", 64_000))
TIMEOUT = float(os.environ.get("TIMEOUT", "2.5"))
BUDGET = 30_000
RATIO = 0.2
lower = 5
NAME = "bash"
FLAG = True
A = B = 3
LIMITS = [1, 2]
LIMITS[0] = 3
os.environ["MODEL_ID"] = "set"
'''


def test_every_number_constant_and_setting_default_is_read_without_running_the_script(tmp_path):
    script = tmp_path / "v9.py"
    script.write_text(SCRIPT, encoding="utf-8")
    assert number_constants(script) == {"MAX_TOKENS": 64_000, "BUDGET": 30_000, "RATIO": 0.2}
    assert setting_default(script, "MODEL_ID") == "claude-sonnet-5-5"
    assert setting_default(script, "MAX_TOKENS") == 64_000
    assert constant(script, "NAME") == "bash" and constant(script, "LIMITS") == [1, 2]
    assert constant(script, "lower") == 5
    with pytest.raises(KeyError, match="v9.py has no constant MISSING"):
        constant(script, "MISSING")
    with pytest.raises(KeyError, match="v9.py has no setting TOOLS"):
        setting_default(script, "TOOLS")


@pytest.mark.parametrize(("value", "shown"), [(30_000, "30,000"), (999, "999"), (0.2, "0.2"),
                                              (1_234_567, "1,234,567"), (1234.5, "1234.5")])
def test_a_number_is_shown_with_thousands_separators(value, shown):
    assert as_shown(value) == shown


TRANSCRIPT = """\
> read_file notes.txt
  [tokens: in 1,200, out 80, cache write 0, cache read 0]
A line that is not a count.
    [tokens: in 9, out 9, cache write 9, cache read 9]
  [tokens: in 30, out 12, cache write 2,048, cache read 1,100]
"""


def test_the_input_of_each_call_is_read_off_the_transcript():
    assert main_agent_input(TRANSCRIPT) == [1_200, 30 + 2_048 + 1_100]
    assert cache_writes(TRANSCRIPT) == [0, 2_048]


def test_caching_figures_are_written_as_shares_and_a_ratio():
    figures = {"calls": 7, "input": 20_000, "read": 15_000, "limit": 18_000}
    assert caching_numbers(figures) == {
        "caching.calls": "7",
        "caching.input": "20,000",
        "caching.read": "15,000",
        "caching.limit": "18,000",
        "caching.read_share": "75.0%",
        "caching.limit_share": "90.0%",
        "caching.ratio": "0.833",
    }


def test_each_model_figure_is_named_by_model_and_field():
    numbers = model_numbers()
    assert numbers["models.claude-haiku-4-5.cache_minimum"] == "4,096"
    haiku = MODELS["claude-haiku-4-5"]
    assert numbers["models.claude-haiku-4-5.max_output"] == f"{haiku.max_output:,}"
    assert numbers["models.claude-sonnet-5-5.context_window"] == "1,000,000"


def test_a_page_gets_its_numbers_and_an_unknown_name_stops_the_build():
    numbers = {"v1.MAX_TOKENS": "64,000", "hygiene.ratio": "0.120"}
    page = "Up to {{ v1.MAX_TOKENS }} tokens, {{hygiene.ratio}} of it; {{  v1.MAX_TOKENS  }}."
    assert fill_in(page, numbers, "v1.md") == "Up to 64,000 tokens, 0.120 of it; 64,000."
    with pytest.raises(KeyError, match=r"v2.md quotes \{\{ v1.MAX_TOKEN \}\}, which "
                                       r"docsgen/numbers.py lacks"):
        fill_in("{{ v1.MAX_TOKEN }}", numbers, "v2.md")


# -- every figure of a build, gathered (page_numbers), from the benchmarks' output --
# Demo transcripts as the build records them: a main-agent call's counts on a line of its own
# (two spaces in), a tool call as "> name ...". Every call's figures differ, so that the first
# call, the second and the last cannot stand in for one another.
DEMOS = {
    "v1": (
        "  [tokens: in 521, out 80, cache write 0, cache read 0]\n"
        '> write_file {"path": "fizzbuzz.py"}\n'
        "  [tokens: in 7, out 40, cache write 222, cache read 514]\n"
        '> bash {"command": "python fizzbuzz.py"}\n'
        "  [tokens: in 9, out 31, cache write 31, cache read 1,010]\n"
    ),
    "v3": (
        "  [tokens: in 1,128, out 90, cache write 0, cache read 0]\n"
        '> Task {"description": "find the loader"}\n'
        '> Task {"description": "find the tests"}\n'
        "  [tokens: in 5, out 60, cache write 396, cache read 1,128]\n"
        "  [tokens: in 3, out 20, cache write 40, cache read 1,524]\n"
    ),
    "v4": (
        "  [tokens: in 0, out 50, cache write 2,000, cache read 0]\n"
        '> Skill {"name": "pdf"}\n'
        "  [tokens: in 0, out 70, cache write 145, cache read 2,000]\n"
        "  [tokens: in 0, out 30, cache write 12, cache read 2,145]\n"
    ),
    # the round that passes COMPACT_AT, the summary request, then the conversation after it
    "v5": (
        "  [tokens: in 0, out 222, cache write 1,474, cache read 0]\n"
        '> read_file {"path": "export.toml"}\n'
        "  [tokens: in 0, out 73, cache write 424, cache read 1,474]\n"
        '> bash {"command": "python export.py --verbose"}\n'
        "  [tokens: in 0, out 131, cache write 7,666, cache read 1,898]\n"
        "  [tokens: in 0, out 108, cache write 312, cache read 9,564]\n"
        "[compacted: 9,876 tokens of history went in, a summary of 108 tokens came out]\n"
        "  [tokens: in 0, out 85, cache write 557, cache read 1,034]\n"
        '> edit_file {"path": "export.toml"}\n'
        "  [tokens: in 0, out 55, cache write 133, cache read 1,591]\n"
    ),
}
HYGIENE = {"inline": 41_234, "delegated": 4_941}
CACHING = {"calls": 7, "input": 20_000, "read": 15_000, "limit": 18_000}
def way(billed, output, largest, overflows, summaries, facts, after_read=0, after_written=0):
    return {"billed": billed, "output": output, "largest": largest, "overflows": overflows,
            "summaries": summaries, "facts": facts, "facts_asked": 2, "after_read": after_read,
            "after_written": after_written}


COMPACTION = {  # one session played six ways, as bench/compaction.py --json gives it
    "resent": way(313_892, 818, 59_943, 2, 0, 0),
    "cached": way(316_903, 817, 105_017, 0, 0, 2),
    "clearing": way(248_833, 816, 23_450, 0, 0, 0),
    "lcc": way(223_286, 875, 56_612, 0, 1, 2, 1_031, 139),
    "compaction": way(173_358, 1_046, 25_530, 0, 4, 2, 1_034, 138),
    "lossy": way(173_245, 986, 25_515, 0, 4, 1, 1_033, 124),
    "no_breakpoint": way(178_114, 1_045, 25_529, 0, 4, 2, 0, 1_172),
}


@pytest.fixture
def built_numbers() -> dict[str, str]:
    """For each test anew: tests/mutation.py runs a test for a function only if the test itself
    called it (a fixture kept for the module would count for the first test alone)."""
    return page_numbers(HYGIENE, DEMOS, CACHING, COMPACTION)


def read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def test_the_benchmark_figures_and_the_demos_are_written_as_the_pages_quote_them(built_numbers):
    assert {name: built_numbers[name] for name in ("hygiene.inline", "hygiene.delegated",
                                                    "hygiene.ratio", "caching.read_share")} == {
        "hygiene.inline": "41,234", "hygiene.delegated": "4,941", "hygiene.ratio": "0.120",
        "caching.read_share": "75.0%",
    }
    demos = {name: value for name, value in built_numbers.items() if ".demo_" in name}
    assert demos == {
        "v1.demo_calls": "3", "v1.demo_tool_calls": "2", "v1.demo_first_input": "521",
        "v1.demo_first_write": "0",
        "v1.demo_second_write": "222", "v1.demo_last_read": "1,010",
        "v3.demo_calls": "3", "v3.demo_tool_calls": "2", "v3.demo_input_first": "1,128",
        "v3.demo_input_second": "1,529",
        "v4.demo_calls": "3", "v4.demo_tool_calls": "1", "v4.demo_cache_read": "2,145",
        "v5.demo_calls": "6", "v5.demo_tool_calls": "3", "v5.demo_over": "9,564",
        "v5.demo_summary_input": "9,876", "v5.demo_summary_read": "9,564",
        "v5.demo_after": "1,591", "v5.demo_after_read": "1,034", "v5.demo_summary_call": "4",
        "v1.demo_task_calls": "0", "v3.demo_task_calls": "2", "v4.demo_task_calls": "0",
        "v5.demo_task_calls": "0",
    }
    compaction = {name: value for name, value in built_numbers.items()
                  if name.startswith("compaction.") and name.count(".") == 2
                  and name.split(".")[1] in ("compaction", "lossy")}
    assert compaction == {
        "compaction.compaction.billed": "173,358", "compaction.compaction.output": "1,046",
        "compaction.compaction.largest": "25,530", "compaction.compaction.overflows": "0",
        "compaction.compaction.summaries": "4", "compaction.compaction.facts": "2",
        "compaction.compaction.facts_asked": "2",
        "compaction.compaction.after_read": "1,034", "compaction.compaction.after_written": "138",
        "compaction.lossy.billed": "173,245", "compaction.lossy.output": "986",
        "compaction.lossy.largest": "25,515", "compaction.lossy.overflows": "0",
        "compaction.lossy.summaries": "4", "compaction.lossy.facts": "1",
        "compaction.lossy.facts_asked": "2",
        "compaction.lossy.after_read": "1,033", "compaction.lossy.after_written": "124",
    }
    assert built_numbers["compaction.resent.overflows"] == "2"
    assert built_numbers["compaction.cached.largest"] == "105,017"
    assert built_numbers["compaction.vs_cached"] == "0.55"  # 173,358 billed against 316,903
    assert built_numbers["compaction.vs_resent"] == "0.55"  # against 313,892
    assert built_numbers["compaction.vs_clearing"] == "0.70"  # against 248,833
    assert built_numbers["compaction.saved_share"] == "45%"
    assert built_numbers["compaction.ways"] == "7"
    settings = number_constants(ROOT / "bench" / "compaction.py")
    assert {"WINDOW", "COMPACT_AT"} <= set(settings)
    for name, value in settings.items():
        assert built_numbers[f"compaction.{name}"] == as_shown(value)


# A figure of the compaction benchmark that drifts, and the chapter's sentence it would falsify.
DRIFTS = [
    ("resent", "overflows", 0, "without compaction the window overflows"),
    ("resent", "facts", 2, "after the overflows, the oldest results were cleared"),
    ("compaction", "largest", 60_000, "v5 stays inside the window"),
    ("compaction", "overflows", 1, "v5 stays inside the window"),
    ("compaction", "facts", 1, "v5's answer keeps both facts"),
    ("lossy", "facts", 2, "a summary that drops a fact loses it"),
    ("clearing", "facts", 1, "clearing stays inside the window but clears the facts"),
    ("lcc", "largest", 50_000, "learn-claude-code's rule keeps every read_file result"),
    ("lcc", "billed", 173_357, "v5 bills less input than the uncompacted session"),
    ("compaction", "output", 817, "the summaries cost output tokens"),
    ("compaction", "after_read", 0, "the first request after a compaction reads system"),
    ("no_breakpoint", "billed", 173_357, "the breakpoint at the system prompt's end saves input"),
    ("no_breakpoint", "after_read", 1_034, "the breakpoint at the system prompt's end saves"),
]


@pytest.mark.parametrize(("way", "name", "drifted", "sentence"), DRIFTS)
def test_a_compaction_figure_that_no_longer_bears_out_the_chapter_stops_the_build(
    way, name, drifted, sentence
):
    figures = {row: dict(result) for row, result in COMPACTION.items()}
    figures[way][name] = drifted
    with pytest.raises(ValueError, match="no longer bears out the v5 chapter: ") as refused:
        page_numbers(HYGIENE, DEMOS, CACHING, figures)
    assert sentence in str(refused.value)
    assert str(refused.value).count(";") == 0  # that sentence alone


def test_compact_at_s_ceiling_is_the_window_less_the_summary_s_reply_and_a_round_s_growth(
    built_numbers
):
    settings = number_constants(ROOT / "v5_compaction.py")
    reply = settings["MAX_TOKENS"]  # 64,000: the summary's reply, and the last round's
    result = settings["TOOL_RESULT_BUDGET"] // 4  # 7,500 tokens at four characters a token
    assert built_numbers["v5.round_growth"] == f"{reply + result:,}"
    assert built_numbers["v5.ceiling_200k"] == f"{200_000 - 2 * reply - result:,}"
    assert built_numbers["v5.ceiling_1m"] == f"{1_000_000 - 2 * reply - result:,}"
    assert (built_numbers["v5.window_200k"], built_numbers["v5.window_1m"]) == ("200,000",
                                                                               "1,000,000")


def test_without_compaction_figures_or_a_demo_its_numbers_are_left_out():
    numbers = page_numbers(HYGIENE, {"v1": DEMOS["v1"]}, CACHING)
    assert numbers["v1.demo_last_read"] == "1,010"
    assert [name for name in numbers if name.startswith("compaction.") or "v5.demo" in name
            or name.startswith(("v3.demo", "v4.demo"))] == []


def test_every_figure_read_from_the_code_is_the_one_in_its_file(built_numbers):
    assert built_numbers["api.cache_lookback"] == "20"  # the prompt caching page's look-back
    assert built_numbers["api.max_breakpoints"] == "4"
    hygiene, parallel = ROOT / "bench" / "context_hygiene.py", ROOT / "bench" / "parallel.py"
    assert built_numbers["hygiene.target"] == f"{constant(hygiene, 'TARGET_RATIO'):.2f}"
    assert built_numbers["hygiene.files"] == str(constant(hygiene, "FILES"))
    assert built_numbers["parallel.latency"] == str(constant(parallel, "LATENCY"))
    assert built_numbers["parallel.target"] == str(constant(parallel, "TARGET_RATIO"))
    tick = constant(ROOT / "plumbing" / "status.py", "PROGRESS_TICK")
    assert built_numbers["v3.progress_tick"] == str(tick)
    budget = constant(ROOT / "tests" / "test_diff_budget.py", "DIFF_BUDGET")
    assert built_numbers["diff.budget"] == str(budget)
    assert built_numbers["hood.first_calls"] == str(FIRST_CALLS)
    assert built_numbers["models.claude-sonnet-5-5.max_output"] == "128,000"
    for name, value in GISTDEX.items():
        assert built_numbers[f"gistdex.{name}"] == f"{value:,}"
    for module in ("prompt", "screen"):  # the modules whose figures the pages quote
        for name, value in number_constants(ROOT / "plumbing" / f"{module}.py").items():
            assert built_numbers[f"plumbing.{module}.{name}"] == as_shown(value)
    skills = [path for path in (ROOT / "skills").rglob("*") if path.is_file()]
    characters = sum(len(path.read_text(encoding="utf-8")) for path in skills)
    assert built_numbers["skills.characters"] == f"{round(characters, -2):,}"  # "about 8,600"
    # each script's size, settings and changes: its own
    for version, script in SCRIPTS.items():
        for name, value in number_constants(ROOT / script).items():
            assert built_numbers[f"{version}.{name}"] == as_shown(value), (version, name)
        assert built_numbers[f"{version}.lines"] == f"{len(read(script).splitlines()):,}"
        model = setting_default(ROOT / script, "MODEL_ID")
        assert built_numbers[f"{version}.default_model"] == model and model in MODELS
    v1 = read(SCRIPTS["v1"])  # the counts of code are the same rule for every version
    assert built_numbers["v1.code_lines"] == f"{len(code_lines(v1)):,}"
    assert built_numbers["v1.lesson_code_lines"] == f"{lesson_code_lines(v1):,}"
    max_tokens = setting_default(ROOT / SCRIPTS["v1"], "MAX_TOKENS")
    assert built_numbers["v1.MAX_TOKENS"] == f"{max_tokens:,}"  # 64,000, not 64000
    for older, newer in itertools.pairwise(SCRIPTS):
        removed = changed_lines(read(SCRIPTS[older]), read(SCRIPTS[newer]))
        assert built_numbers[f"{newer}.changed_lines"] == str(removed), newer
    assert "v1.changed_lines" not in built_numbers  # nothing comes before v1


def test_the_benchmarks_run_from_the_project_root_and_a_failure_shows_their_error(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # the build may be started from anywhere
    found = "import json, os; print(json.dumps({'bench': os.path.isdir('bench'), 'ratio': 0.5}))"
    assert benchmark_figures(found) == {"bench": True, "ratio": 0.5}
    with pytest.raises(RuntimeError) as failed:
        benchmark_figures("import sys; sys.exit('no session was played')")
    assert str(failed.value) == "the benchmarks failed:\nno session was played\n"


# A program as the docs build starts it (scripted/warm.py): what it can see of how it was started.
SEES = """
import os, sys
print("argv", sys.argv, "name", __name__, "path", sys.path[0], "cwd", os.getcwd())
print("env", os.environ.get("WARM_SETTING"), "encoding", sys.stdout.encoding, sys.stdin.isatty())
print("to stderr, after stdout", file=sys.stderr)
HOW
"""


ENDINGS = ["sys.exit(3)", "sys.exit('said')", "raise ValueError('broke')", "pass"]


@pytest.mark.parametrize("ending", ENDINGS)
def test_a_program_forked_from_the_warm_python_sees_what_a_new_interpreter_gives_it(
    tmp_path, ending
):
    """The docs build's demos and benchmarks start from a fork server that imported the SDK:
    each must run as `python PROGRAM` would (its argv, __main__, sys.path[0], working folder,
    environment, stream encoding, output order and exit code)."""
    script = tmp_path / "folder" / "program.py"
    script.parent.mkdir()
    script.write_text(SEES.replace("HOW", ending), encoding="utf-8")
    env = {**os.environ, "WARM_SETTING": "given", "PYTHONIOENCODING": "utf-8"}
    env.pop("PYTHONUNBUFFERED", None)  # stdout buffered, as on a file: stderr comes out first
    seen = {}
    for how in ("new interpreter", "forked"):
        output = tmp_path / f"{how}.txt"
        with WarmPython(ahead=[]) as python:
            if how == "new interpreter":
                python = WarmPython()  # outside a with block: `python ARGS` in a new process
            code = python.run([str(script), "one", "two words"], env, output, cwd=tmp_path)
            code_c = python.run(["-c", "import sys; print(sys.argv, repr(sys.path[0]))", "x"],
                                env, output, cwd=tmp_path)
        seen[how] = code, code_c, output.read_text(encoding="utf-8")
    assert seen["forked"] == seen["new interpreter"]
    code, code_c, printed = seen["forked"]
    assert code == {"sys.exit(3)": 3, "pass": 0}.get(ending, 1) and code_c == 0
    assert printed.count("said") == (ending == "sys.exit('said')")
    assert printed.startswith("to stderr, after stdout\n")
    assert f"argv ['{script}', 'one', 'two words'] name __main__ path {script.parent}" in printed
    assert f"cwd {tmp_path}" in printed and "env given encoding utf-8" in printed
    assert "['-c', 'x'] ''" in printed
    assert ("ValueError: broke" in printed) == (ending.startswith("raise"))


# -- the "What changed" card --
OLD = '''\
BASH = {"name": "bash", "input_schema": {}}
# -- the core loop --
def loop():
    return 1


def helper():
    return 2
'''
NEW = '''\
BASH = {"name": "bash", "input_schema": {}}
TODO = {"name": "todo", "input_schema": {}, "description": "Plan."}
READ = {"name": "read_file", "input_schema": {}}
AGAIN = {"name": "todo", "input_schema": {}}
NOT_A_TOOL = {"name": "x"}
# -- the core loop --
def loop():
    return 2


# a comment above a function is not part of it
def helper():
    return 2


class Board:
    pass


async def poll():
    pass
'''
DIFF = """\
--- a/v1.py
+++ b/v2.py
@@ -1,4 +1,7 @@
+TODO = 1
+--- not a file line
-    return 1
-+++ not a file line either
+    return 2
"""


def test_tool_names_are_every_schema_once_in_order():
    assert tool_names(NEW) == ["bash", "todo", "read_file"]


def test_the_diff_counts_leave_out_the_file_lines():
    assert diff_counts(DIFF) == (3, 2)


def test_what_changed_names_what_is_new_and_what_changed(tmp_path):
    old_file, new_file = tmp_path / "v1.py", tmp_path / "v2.py"
    old_file.write_text(OLD, encoding="utf-8")
    new_file.write_text(NEW, encoding="utf-8")
    sections = [["the core loop"], ["the core loop", "planning", "the REPL"]]
    changes = what_changed(old_file, new_file, sections, DIFF)
    assert (changes.tools, changes.sections, changes.functions, changes.changed) == (
        ["todo", "read_file"], ["planning", "the REPL"], ["Board", "poll"], ["loop"],
    )
    assert (changes.added, changes.removed) == (3, 2)
    english = card(changes, "v1", "v2", "en")
    assert english == (
        '<div class="admonition abstract hood-card" data-diff="v1-to-v2">\n'
        '<p class="admonition-title">What changed from v1 to v2</p>\n'
        '<dl class="hood-card-list">\n'
        '<dt>New tools</dt><dd data-key="tools"><code>todo</code>, <code>read_file</code></dd>\n'
        '<dt>New sections</dt><dd data-key="sections"><code>planning</code>, '
        "<code>the REPL</code></dd>\n"
        '<dt>New functions and classes</dt><dd data-key="functions"><code>Board</code>, '
        "<code>poll</code></dd>\n"
        '<dt>Changed functions</dt><dd data-key="changed"><code>loop</code></dd>\n'
        '<dt>Lines</dt><dd data-key="lines" data-added="3" data-removed="2">3 added, 2 removed '
        "(the full diff is below)</dd>\n"
        "</dl>\n</div>\n"
    )
    files = card_files("v1", "v2", changes)
    assert list(files) == [Path("changes/en/v1-to-v2.html"), Path("changes/ja/v1-to-v2.html")]
    assert files[Path("changes/en/v1-to-v2.html")] == english
    japanese = files[Path("changes/ja/v1-to-v2.html")]
    assert "v1 から v2 への変更" in japanese
    assert "追加 3 行、削除 2 行（差分全体はこの下）" in japanese


def test_a_card_with_nothing_new_says_none_and_escapes_names(tmp_path):
    old_file = tmp_path / "v1.py"
    old_file.write_text(OLD, encoding="utf-8")
    changes = what_changed(old_file, old_file, [["a<b"], ["a<b", "x & y"]], "")
    japanese = card(changes, "v1", "v2", "ja")
    assert '<dd data-key="tools">なし</dd>' in japanese
    assert '<dd data-key="sections"><code>x &amp; y</code></dd>' in japanese
    assert '<dd data-key="changed">なし</dd>' in japanese


def mcp_way(calls: int, result_tokens: int, total_input: int, read: int) -> dict:
    return {"modes": ["full"], "calls": calls, "result_tokens": result_tokens,
            "result_characters": result_tokens * 4 - 1, "input": total_input,
            "last_input": total_input - 7, "sections_read": read, "cut": False}


MCP = {  # one query answered several ways, as bench/mcp_budget.py --json gives it
    "query": "context budget", "budget": 30_000, "cap": 25_000, "top": 5,
    "sizes": {"summary": 1_330, "detailed": 15_174, "full": 321_272},
    "ways": {"full_uncut": mcp_way(2, 82_099, 84_808, 5), "full_cut": mcp_way(2, 7_725, 10_434, 1),
             "summary_cut": mcp_way(2, 362, 3_071, 0), "detailed_cut": mcp_way(2, 3_876, 6_585, 5),
             "summary_then_detailed": mcp_way(3, 4_238, 8_735, 5)},
}


def test_the_mcp_benchmark_figures_are_written_as_the_v6_chapter_quotes_them():
    """Each way's share of the uncut answer and of Claude Code's cap, the settings, and the input
    the second call of summary-then-detailed costs against detailed at once."""
    numbers = page_numbers(HYGIENE, {}, CACHING, COMPACTION, MCP)
    assert {name: numbers[f"mcp.{name}"] for name in (
        "query", "budget", "cap", "top", "sizes.full", "full_uncut.result_tokens",
        "full_cut.share", "full_uncut.of_cap", "full_cut.sections_read",
        "summary_then_detailed.share", "summary_then_detailed.calls", "second_call_input",
    )} == {
        "query": "context budget", "budget": "30,000", "cap": "25,000", "top": "5",
        "sizes.full": "321,272", "full_uncut.result_tokens": "82,099", "full_cut.share": "0.094",
        "full_uncut.of_cap": "3.3", "full_cut.sections_read": "1",
        "summary_then_detailed.share": "0.052", "summary_then_detailed.calls": "3",
        "second_call_input": "2,150",
    }
    assert "mcp.full_uncut.cut" not in numbers  # a yes/no, not a figure


def recorded(*tool_lists: list[str]) -> list[dict]:
    """A demo's recording: one request per list, declaring those tools."""
    return [{"raw": json.dumps({"tools": [{"name": name} for name in names]})}
            for names in tool_lists]


def test_the_card_names_the_tools_a_server_offered_in_the_demo_and_only_those():
    """v6's new tool is in no file: the demo's MCP server offered it. A tool the script writes
    is not named twice, and one the older demo already declared is not new."""
    old = recorded(["bash", "Skill"], ["bash", "Skill"])
    new = recorded(["bash", "Skill", "todo", "mcp__docs__search_docs"],
                   ["read_only_bash", "mcp__git__git_log", "mcp__docs__search_docs"])
    changes = Changes(["todo"], [], [], [], 3, 1)
    served = served_tools(old, new, changes)
    assert served == ["mcp__docs__search_docs", "read_only_bash", "mcp__git__git_log"]
    changes.served = ["mcp__docs__search_docs"]
    shown = card(changes, "v5", "v6", "en")
    assert ('<dd data-key="tools"><code>todo</code>, <code>mcp__docs__search_docs</code> (offered '
            "by the demo's MCP server)</dd>") in shown
    assert '<dd data-key="tools">なし</dd>' in card(Changes([], [], [], [], 0, 0), "v1", "v2", "ja")

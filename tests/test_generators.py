"""The docs generators' rules, on small sources that tell them apart: what counts as lesson code
(docsgen/numbers.py), how a number is read from a script and written on a page, and what the
"What changed" card says one version adds to the one before (docsgen/changes.py).

Each fixture has what a wrong rule would count differently: an indented comment beside a top-level
one, a docstring of a function and of a class, a plumbing import block of two statements after one
that is not from the plumbing, tools and functions that are new beside ones that only moved.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docsgen.changes import card, card_files, diff_counts, tool_names, what_changed
from docsgen.numbers import (
    as_shown,
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
    plumbing_import_lines,
    plumbing_line,
    setting_default,
)
from scripted.models import MODELS

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

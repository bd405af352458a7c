"""The workshop's rules on small inputs that tell them apart: where workshop/reference.py applies
a hunk when its lines occur more than once, and which words exercise 06's "when" rule takes as
"when" (in English in either case, in Japanese with the look-alikes it must refuse).

The whole exercises run in tests/test_workshop.py; these run in milliseconds.
"""

from __future__ import annotations

import importlib.util

import pytest

from workshop.reference import (
    MARKER,
    WORKSHOP,
    DiffDoesNotApply,
    apply_diff,
    diff_path,
    empty_folder,
    find_block,
    rule_of,
    rules_of,
)

def load_exercise(folder: str):
    path = WORKSHOP / folder / "test_exercise.py"
    spec = importlib.util.spec_from_file_location(f"exercise_{folder[:2]}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- a hunk goes where its lines are nearest to the line the diff names --
BODY = ["def first():", "    return value", "", "def second():", "    return value", ""]


def script(lines: list[str], tmp_path) -> None:
    (tmp_path / "script.py").write_text("\n".join(lines) + "\n", encoding="utf-8")


def edited(tmp_path) -> list[str]:
    return (tmp_path / "script.py").read_text(encoding="utf-8").splitlines()


EDIT_SECOND = """\
--- a/script.py
+++ b/script.py
@@ -4,2 +4,2 @@
 def second():
-    return value
+    return value * 2
"""


def test_a_hunk_whose_lines_occur_twice_is_applied_at_the_nearest_not_the_first(tmp_path):
    """`def second():` occurs once, but take a block that occurs twice: the return lines."""
    twice = """\
--- a/script.py
+++ b/script.py
@@ -5,1 +5,1 @@
-    return value
+    return value * 2
"""
    script(BODY, tmp_path)
    apply_diff(twice, tmp_path)
    assert edited(tmp_path) == BODY[:4] + ["    return value * 2", ""]


def test_the_nearest_place_wins_before_or_after_the_named_line(tmp_path):
    """The block is at lines 2, 9 and 14; the diff names line 10: 9 is nearer than 14, and
    also nearer than 2, the first."""
    lines = ["# a"] + ["x = 1", "y = 2"] + ["# b"] * 5 + ["x = 1", "y = 2"] + ["# c"] * 3 + [
        "x = 1", "y = 2"]
    diff = "--- a/script.py\n+++ b/script.py\n@@ -10,2 +10,2 @@\n x = 1\n-y = 2\n+y = 3\n"
    script(lines, tmp_path)
    apply_diff(diff, tmp_path)
    pairs = zip(lines, edited(tmp_path), strict=True)
    changed = [number for number, (old, new) in enumerate(pairs, 1) if old != new]
    assert changed == [10]


def test_find_block_looks_only_at_or_after_what_was_applied():
    old = ["a", "b", "a", "b", "a", "b"]
    assert find_block(old, ["a", "b"], 0, 0) == 0
    assert find_block(old, ["a", "b"], 1, 0) == 2  # 0 is nearer, but already applied
    assert find_block(old, ["a", "b"], 0, 3) == 2  # 2 and 4 are as near: the earlier
    assert find_block(old, ["a", "b"], 0, 5) == 4
    assert find_block(old, ["b", "b"], 0, 0) is None
    assert find_block(old, [], 3, 1) == 3 and find_block(old, [], 1, 4) == 4


def test_two_hunks_apply_in_order_and_a_line_without_its_space_is_context(tmp_path):
    lines = [f"line {number}" for number in range(1, 13)] + [""]
    diff = (
        "--- a/script.py\n+++ b/script.py\n"
        "@@ -2,2 +2,2 @@\n line 2\n-line 3\n+line three\n"
        "@@ -11,3 +11,3 @@\n line 11\n-line 12\n+line twelve\n\n"
        "\\ No newline at end of file\n"
    )
    script(lines, tmp_path)
    apply_diff(diff, tmp_path)
    expected = [*lines[:2], "line three", *lines[3:11], "line twelve", ""]
    assert edited(tmp_path) == expected


def test_a_stale_or_cut_off_diff_says_what_is_wrong(tmp_path):
    script(BODY, tmp_path)
    stale = EDIT_SECOND.replace("def second", "def third")
    with pytest.raises(DiffDoesNotApply, match=r"script.py: the lines of hunk @@ -4,2 \+4,2 @@ "
                                               r"are not in the file any more, starting with "
                                               r"'def third\(\):'"):
        apply_diff(stale, tmp_path)
    cut_off = "\n".join(EDIT_SECOND.splitlines()[:-1])
    with pytest.raises(DiffDoesNotApply) as raised:
        apply_diff(cut_off, tmp_path)
    assert str(raised.value) == "the diff ends in the middle of a hunk"
    assert edited(tmp_path) == BODY  # nothing written


def test_a_hunk_between_two_equally_near_places_takes_the_earlier(tmp_path):
    """`x = 1` is at lines 3 and 5; the diff names line 4: both are one line away."""
    lines = ["a", "b", "x = 1", "c", "x = 1", "d"]
    script(lines, tmp_path)
    apply_diff("--- a/script.py\n+++ b/script.py\n@@ -4,1 +4,1 @@\n-x = 1\n+x = 2\n", tmp_path)
    assert edited(tmp_path) == ["a", "b", "x = 2", "c", "x = 1", "d"]


def test_the_named_line_is_where_the_hunk_is_looked_for_not_a_line_before(tmp_path):
    """`x = 1` at lines 4 and 6; the diff names line 6: looked for from line 5, they would tie."""
    lines = ["a", "b", "c", "x = 1", "d", "x = 1"]
    script(lines, tmp_path)
    apply_diff("--- a/script.py\n+++ b/script.py\n@@ -6,1 +6,1 @@\n-x = 1\n+x = 2\n", tmp_path)
    assert edited(tmp_path) == ["a", "b", "c", "x = 1", "d", "x = 2"]


def test_lines_are_inserted_after_the_line_the_diff_names(tmp_path):
    script(["one", "two", "three"], tmp_path)
    apply_diff("--- a/script.py\n+++ b/script.py\n@@ -2,0 +3 @@\n+inserted\n", tmp_path)
    assert edited(tmp_path) == ["one", "two", "inserted", "three"]


def test_a_hunk_header_without_counts_means_one_line(tmp_path):
    script(["one", "two", "three"], tmp_path)
    apply_diff("--- a/script.py\n+++ b/script.py\n@@ -2 +2 @@\n-two\n+TWO\n", tmp_path)
    assert edited(tmp_path) == ["one", "TWO", "three"]


def test_an_empty_line_inside_a_hunk_is_context(tmp_path):
    script(["def f():", "    pass", "", "def g():", "    pass"], tmp_path)
    diff = ("--- a/script.py\n+++ b/script.py\n@@ -2,3 +2,3 @@\n     pass\n\n-def g():\n"
            "+def h():\n")
    apply_diff(diff, tmp_path)
    assert edited(tmp_path) == ["def f():", "    pass", "", "def h():", "    pass"]


def test_a_single_line_before_the_file_lines_is_skipped_and_an_empty_new_file_is_made(tmp_path):
    script(["one"], tmp_path)
    diff = ("diff --git a/script.py b/script.py\n--- a/script.py\n+++ b/script.py\n"
            "@@ -1 +1 @@\n-one\n+ONE\n--- /dev/null\n+++ b/empty.txt\n")
    apply_diff(diff, tmp_path)
    assert edited(tmp_path) == ["ONE"]
    assert (tmp_path / "empty.txt").read_text(encoding="utf-8") == "\n"


def test_the_reference_folder_is_made_marked_and_only_its_own_emptied(tmp_path):
    folder = tmp_path / "new" / "solution"
    empty_folder(folder)
    assert [path.name for path in folder.iterdir()] == [MARKER]
    assert (folder / MARKER).read_text(encoding="utf-8") == (
        "written by python -m workshop.reference, which empties this folder on its next run\n"
    )
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(SystemExit) as raised:
        empty_folder(other)
    assert str(raised.value) == (
        f"{other} is not empty, and workshop.reference did not write it: name a new folder or "
        "an empty one"
    )


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("--- a/v1_basic.py", "v1_basic.py"),
        ("+++ b/skills/x/SKILL.md\t2026-01-01", "skills/x/SKILL.md"),
        ("--- /dev/null", None),
        ("--- v1_basic.py", "v1_basic.py"),
        ("--- a/notes/my notes.txt\t2026-01-01 10:00", "notes/my notes.txt"),
    ],
)
def test_the_file_a_diff_header_names(header, name):
    assert diff_path(header) == name


@pytest.mark.parametrize(
    ("variant", "rules"),
    [("wrong/3-limit-per-file", [3]), ("right/2-3-6-sorted-by-key", [2, 3, 6]),
     ("right/12-a-name-2", [12]), ("wrong/no-number", [])],
)
def test_a_variant_names_its_rules_by_the_numbers_it_starts_with(variant, rules):
    assert rules_of(variant) == rules
    if rules:
        assert rule_of(variant) == rules[0]


# -- exercise 06, rule 3: the description says when to use the skill --
WHEN = load_exercise("06-your-own-skill").WHEN


@pytest.mark.parametrize(
    "description",
    [
        "Use when asked to update the changelog.",
        "Use it whenever a release is near.",
        "WHEN A RELEASE IS NEAR, add the entries.",
        "When asked, add entries.",
        "変更履歴の更新を頼まれたときに使います。",
        "頼まれた時に使います。",
        "リリースの際に使います。",
        "リリースの準備をする場合に使います。",
        "頼まれた時、使います。",
        "使うのは、頼まれた時\nです。",
    ],
)
def test_rule3_takes_these_as_saying_when(description):
    assert WHEN.search(description), description


EXCLUDED = [  # each a look-alike the rule's pattern leaves out on purpose
    "リリースノートもときどき見直します。",
    "リリース作業の時間を短縮します。",
    "リリースノートも同時に更新します。",
    "日時を見出しに書きます。", "当時の書き方に合わせます。", "常時使えます。",
    "随時更新します。", "臨時のリリースにも使えます。", "定時に書きます。",
    "毎時に更新します。", "一時に書き足します。", "瞬時に書きます。",
    "即時に反映します。", "何時にでも使えます。", "暫時お待ちください。",
    "国際化された変更履歴に使えます。", "実際に書き足します。", "交際費は書きません。",
    "締め切り間際に使えます。", "手際よく書きます。", "水際で止めます。", "窓際の席で書きます。",
    "Whence the changes came is written down.",
    "Somewhen the file gets long.",
]


@pytest.mark.parametrize("description", EXCLUDED)
def test_rule3_does_not_take_a_look_alike_as_when(description):
    assert not WHEN.search(description), WHEN.search(description)

"""The workshop (workshop/): every exercise is complete, its reference solution applies, and its
tests can fail.

The exercises' own tests run against the reference solutions in the main test run (testpaths
includes workshop/). Here each exercise runs once more, in this process (pytester), against the
untouched version script an attendee starts from: its tests must fail (exit code 1), not break (2
interrupted, 4 usage error, 5 no tests). """

import difflib

import pytest

from tests.agents import ROOT
from workshop.reference import EXERCISES, WORKSHOP, DiffDoesNotApply, apply_diff

EXERCISE_FILES = ["README.md", "README_ja.md", "test_exercise.py", "solution.diff"]


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
    for command in (
        f"cp {base} workshop/{exercise}/mine.py",
        f"copy {base} workshop\\{exercise}\\mine.py",
        f"python -m pytest workshop/{exercise} --solution workshop/{exercise}/mine.py",
    ):
        assert command in text, f"workshop/{exercise}/{readme} does not show {command}"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_the_untouched_starting_point_fails_the_exercise(exercise, pytester, monkeypatch):
    monkeypatch.chdir(ROOT)  # in this process, as an attendee would type it in the project folder
    done = pytester.runpytest_inprocess(
        f"workshop/{exercise}", "--solution", EXERCISES[exercise], "-p", "no:xdist", "-q"
    )
    summary = done.outlines[-1] if done.outlines else "\n".join(done.errlines)
    output = "\n".join(done.outlines[-60:] + done.errlines[-60:])
    assert done.ret == 1 and " failed" in summary, output


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


def test_a_diff_can_create_files_in_new_folders(tmp_path):
    apply_diff(
        "--- /dev/null\n+++ b/skills/new/SKILL.md\n@@ -0,0 +1,2 @@\n+---\n+name: new\n", tmp_path
    )
    assert (tmp_path / "skills" / "new" / "SKILL.md").read_text() == "---\nname: new\n"

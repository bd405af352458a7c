"""plumbing/files.py: a checked path is opened one folder at a time, so a folder swapped for a link
after the check redirects nothing; missing folders are made the same way; and a page of a huge
file costs about what it shows, with a count of lines that says when it is a lower bound."""

import shutil
import time

import pytest

from plumbing.checks import ToolError
from plumbing.files import (
    COUNT_LIMIT,
    page_note,
    read_lines,
    read_text_file,
    workdir_path,
    write_text_file,
)

@pytest.fixture
def work(tmp_path, monkeypatch):
    """The work folder, with a/b/notes.txt in it."""
    folder = tmp_path / "work"
    (folder / "a" / "b").mkdir(parents=True)
    (folder / "a" / "b" / "notes.txt").write_text("mine\n")
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def outside(tmp_path):
    """A folder outside the work folder, shaped like it: b/notes.txt holds a secret."""
    folder = tmp_path / "outside"
    (folder / "b").mkdir(parents=True)
    (folder / "b" / "notes.txt").write_text("secret\n")
    return folder


def swap_for_link(folder, target) -> None:
    """What another process may do between the check and the open."""
    shutil.rmtree(folder)
    folder.symlink_to(target)


@pytest.mark.parametrize(("swapped", "target"), [("a", ""), ("a/b", "b")],
                         ids=["the top folder", "the file's folder"])
def test_a_folder_swapped_for_a_link_after_the_check_redirects_nothing(
    work, outside, swapped, target
):
    checked = workdir_path("a/b/notes.txt")
    swap_for_link(work / swapped, outside / target)
    with pytest.raises(ToolError, match="reached through a link put in place of a folder"):
        write_text_file(checked, "pwned")
    with pytest.raises(ToolError, match="reached through a link put in place of a folder"):
        read_text_file(checked)
    with pytest.raises(ToolError, match="reached through a link put in place of a folder"):
        read_lines(checked, 1, 10, 100)
    assert (outside / "b" / "notes.txt").read_text() == "secret\n"


def test_missing_folders_are_made_and_one_made_a_link_meanwhile_is_refused(work, outside):
    write_text_file(workdir_path("new/deeper/made.txt"), "x")
    assert (work / "new" / "deeper" / "made.txt").read_text() == "x"
    checked = workdir_path("later/b/made.txt")
    (work / "later").symlink_to(outside)  # made by another process, before the tool makes it
    with pytest.raises(ToolError, match="reached through a link put in place of a folder"):
        write_text_file(checked, "pwned")
    assert sorted(path.name for path in outside.rglob("*")) == ["b", "notes.txt"]


def test_a_missing_file_is_named_in_full(work):
    with pytest.raises(FileNotFoundError, match=f"'{work}/a/nothing/here.txt'"):
        read_text_file(workdir_path("a/nothing/here.txt"))


def test_a_page_of_a_huge_file_reads_little_and_counts_at_least(work):
    with open(work / "huge.log", "wb") as file:
        file.write(b"a line\n" * 3000)  # text first (no NUL in the first 8 KiB), then...
        file.truncate(16 << 30)  # ...16 GiB of a hole: counting it all would take a minute
    started = time.monotonic()
    lines, total = read_lines(work / "huge.log", 1, 5, 100)
    assert time.monotonic() - started < 2
    assert lines == ["a line"] * 5
    assert page_note("huge.log", 1, 5, total) == [
        "[lines 1-5 of at least 3,001; the rest of the file was not counted; call read_file with "
        "offset=6 for more]"]


def test_a_huge_last_line_of_the_page_is_not_read_to_its_end(work):
    with open(work / "one-line.bin", "wb") as file:
        file.write(b"first\n" + b"x" * 9000)
        file.truncate(16 << 30)  # the second line runs on for 16 GiB
    lines, total = read_lines(work / "one-line.bin", 1, 2, 10)
    assert lines == ["first", "xxxxxxxxxx [line cut]"]
    assert (total.lines, total.complete) == (2, False)


@pytest.mark.parametrize(
    ("text", "limit", "lines"),
    [
        (b"a\nb\nc", 1, 3),  # the last line has no newline
        (b"a\nb\nc\n", 1, 3),
        (b"a\nb\n", 2, 2),  # the page ends where the file does
        (b"x" * 10_000 + b"\nz\n", 1, 2),  # the page's last line is longer than what is read
        (b"x" * 10_000, 1, 1),
        (b"a\n" + b"x" * 10_000, 2, 2),
    ],
)
def test_the_count_of_a_file_that_fits_the_budget_is_exact(work, text, limit, lines):
    (work / "f.txt").write_bytes(text)
    _, total = read_lines(work / "f.txt", 1, limit, 100)
    assert (total.lines, total.complete) == (lines, True)


def test_the_count_stops_after_its_budget(work):
    (work / "f.txt").write_bytes(b"\n" * (5 + COUNT_LIMIT + 10))
    _, total = read_lines(work / "f.txt", 1, 5, 100)
    assert (total.lines, total.complete) == (5 + COUNT_LIMIT + 1, False)  # and one more, at least

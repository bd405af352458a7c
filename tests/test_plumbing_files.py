"""plumbing/files.py: a checked path is opened one folder at a time (Linux, macOS), or looked at
before and after it is opened by name (Windows, which has no O_NOFOLLOW, O_NONBLOCK nor folder
descriptors), so a folder swapped for a link after the check redirects nothing; missing folders
are made the same way; line endings and Japanese stay exactly as they are; a link, a FIFO or a
device is refused at once; and a page of a huge file costs about what it shows, with a count of
lines that says when it is a lower bound.

Each OS's branch runs here by passing its description (plumbing/platforms.py); the POSIX ones
need folder descriptors, so on Windows only its own runs."""

import dataclasses
import os
import re
import shutil
import stat
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from plumbing.checks import ToolError
from plumbing.files import (
    COUNT_LIMIT,
    EDIT_LIMIT,
    LINK,
    NOT_REGULAR,
    LineCount,
    NotRegularFile,
    check_same_file,
    page_note,
    read_lines,
    read_text_file,
    workdir_path,
    write_text_file,
)
from plumbing.platforms import Shell, linux, macos, this_platform, windows
from tests.agents import fifo_at, symlink_or_skip

FILE_BRANCHES = {"windows": windows()}
if os.name == "posix":
    FILE_BRANCHES = {"linux": linux(), "macos": macos(), **FILE_BRANCHES}
each_os = pytest.mark.parametrize("platform", FILE_BRANCHES.values(), ids=FILE_BRANCHES)
posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs, /dev/null, open files swapped")


@pytest.fixture
def work(tmp_path, monkeypatch):
    """The work folder, with a/b/notes.txt in it."""
    folder = tmp_path / "work"
    (folder / "a" / "b").mkdir(parents=True)
    (folder / "a" / "b" / "notes.txt").write_bytes(b"mine\n")  # write_text: \r\n on Windows
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
    symlink_or_skip(folder, target, target_is_directory=True)


@each_os
@pytest.mark.parametrize(("swapped", "target"), [("a", ""), ("a/b", "b")],
                         ids=["the top folder", "the file's folder"])
def test_a_folder_swapped_for_a_link_after_the_check_redirects_nothing(
    work, outside, swapped, target, platform
):
    checked = workdir_path("a/b/notes.txt")
    swap_for_link(work / swapped, outside / target)
    refused = f"{checked} is reached through a link put in place of a folder after the check; "
    with pytest.raises(ToolError, match=re.escape(refused + "refused")):
        write_text_file(checked, "pwned", platform=platform)
    with pytest.raises(ToolError, match="reached through a link put in place of a folder"):
        read_text_file(checked, platform)
    with pytest.raises(ToolError, match="reached through a link put in place of a folder"):
        read_lines(checked, 1, 10, 100, platform)
    assert (outside / "b" / "notes.txt").read_text() == "secret\n"


@each_os
def test_missing_folders_are_made_and_one_made_a_link_meanwhile_is_refused(
    work, outside, platform
):
    write_text_file(workdir_path("new/deeper/made.txt"), "x", platform=platform)
    assert (work / "new" / "deeper" / "made.txt").read_text() == "x"
    checked = workdir_path("later/c/made.txt")
    symlink_or_skip(work / "later", outside, target_is_directory=True)  # by another process
    with pytest.raises(ToolError, match="reached through a link put in place of a folder"):
        write_text_file(checked, "pwned", platform=platform)
    assert sorted(path.name for path in outside.rglob("*")) == ["b", "notes.txt"]


@each_os
def test_a_missing_file_is_named_in_full(work, platform):
    missing = str(Path(work, "a", "nothing", "here.txt"))
    with pytest.raises(FileNotFoundError) as raised:
        read_text_file(workdir_path("a/nothing/here.txt"), platform)
    assert raised.value.filename == missing
    assert str(raised.value) == f"[Errno 2] No such file or directory: {missing!r}"


@each_os
def test_a_new_file_gets_the_usual_permissions_and_a_shorter_text_leaves_nothing_behind(
    work, platform
):
    """Made as an editor makes it (0o666 less the umask: not executable); written again with
    less, or with nothing, none of the old text is left."""
    umask = os.umask(0)
    os.umask(umask)
    path = workdir_path("made/new.txt")
    write_text_file(path, "a longer first text\n", platform=platform)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    write_text_file(path, "short\n", platform=platform)
    assert path.read_bytes() == b"short\n"
    write_text_file(path, "", platform=platform)
    assert path.read_bytes() == b""


@each_os
def test_a_file_with_two_names_is_read_but_not_written(work, platform):
    path = workdir_path("a/b/notes.txt")
    os.link(path, work / "other-name.txt")
    assert read_text_file(path, platform) == "mine\n"
    assert read_lines(path, 1, 5, 100, platform)[0] == ["mine"]
    with pytest.raises(ToolError) as refused:
        write_text_file(path, "changed\n", platform=platform)
    assert str(refused.value) == (
        "notes.txt has 2 names (hard links); writing would change the file under its other names "
        "too, maybe outside the work directory")
    assert (work / "other-name.txt").read_text() == "mine\n"


def test_edit_files_up_to_the_limit_are_read_whole_and_one_byte_more_is_refused(work):
    path = work / "big.txt"
    with open(path, "wb") as file:
        file.truncate(EDIT_LIMIT)  # sparse: no disk is spent
    assert len(read_text_file(path)) == EDIT_LIMIT
    with open(path, "ab") as file:
        file.write(b"x")
    with pytest.raises(ToolError) as refused:
        read_text_file(path)
    assert str(refused.value) == f"big.txt is over {EDIT_LIMIT:,} bytes; " + ADVICE[
        this_platform().shell.name][1]


# The tools' advice names what the bash tool's shell has: PowerShell has no sed, file or xxd.
ADVICE = {
    "bash": ("Try bash: file, xxd | head", "edit it with bash (sed)"),
    "PowerShell": ("Try the bash tool (PowerShell here): Format-Hex -Path FILE | Select-Object "
                   "-First 20", "edit it with the bash tool (PowerShell here: Get-Content, "
                   "-replace, Set-Content to a new file, then Move-Item)"),
}
ADVICE["sh"] = ADVICE["bash"]
SHELLS = {"linux": linux(), "windows, Git for Windows' bash":
          dataclasses.replace(windows(), shell=Shell("bash", r"C:\Git\bin\bash.exe")),
          "windows, no bash": dataclasses.replace(windows(), shell=Shell("PowerShell", "pwsh"))}


@pytest.mark.parametrize("platform", SHELLS.values(), ids=SHELLS)
def test_what_a_file_tool_refuses_is_advised_in_the_shell_the_bash_tool_runs(
        work, platform):
    """The words the model reads in the tool result (a ToolError's, as they are)."""
    (work / "early.bin").write_bytes(b"x\0")
    with pytest.raises(ToolError) as binary:
        read_lines(work / "early.bin", 1, 5, 100, platform)
    with open(work / "big.txt", "wb") as file:
        file.truncate(EDIT_LIMIT + 1)  # sparse: no disk is spent
    with pytest.raises(ToolError) as big:
        read_text_file(work / "big.txt", platform)
    binary_advice, edit_advice = ADVICE[platform.shell.name]
    assert str(binary.value) == "early.bin looks binary (2 bytes); read_file shows text. " + (
        binary_advice)
    assert str(big.value) == f"big.txt is over {EDIT_LIMIT:,} bytes; " + edit_advice


@each_os
def test_line_endings_and_japanese_stay_exactly_as_they_are(work, platform):
    """Without O_BINARY a Windows descriptor writes \n as \r\n (and \r\n as \r\r\n); text
    mode without newline="" does the same."""
    text = "一行目\r\n二行目\n三行目 🙂\r\n"
    path = workdir_path("日本語/メモ.txt")
    write_text_file(path, text, platform=platform)
    assert path.read_bytes() == text.encode("utf-8")
    assert read_text_file(path, platform) == text
    lines, total = read_lines(path, 2, 5, 100, platform)
    assert (lines, total.lines) == (["二行目", "三行目 🙂"], 3)


@each_os
@posix_only
def test_a_link_a_fifo_or_a_device_is_refused_at_once(work, platform):
    """A FIFO opened for reading waits for a writer: Linux and macOS open it with O_NONBLOCK,
    Windows (no FIFOs in folders; none of the flag) looks before opening."""
    symlink_or_skip(work / "link.txt", work / "a" / "b" / "notes.txt")
    with pytest.raises(NotRegularFile) as refused:
        read_text_file(work / "link.txt", platform)
    assert refused.value.what == LINK
    with pytest.raises(NotRegularFile) as refused:
        write_text_file(Path("/dev/null"), "x", platform=platform)
    assert refused.value.what == NOT_REGULAR
    for name, open_it in [("read", lambda fifo: read_lines(fifo, 1, 1, 10, platform)),
                          ("write", lambda fifo: write_text_file(fifo, "x", platform=platform))]:
        with fifo_at(work / name) as fifo:  # it unblocks a waiting open after 5 s
            started = time.monotonic()
            with pytest.raises(NotRegularFile, match="is not a regular file"):
                open_it(fifo)
            assert time.monotonic() - started < 4
    assert (work / "a" / "b" / "notes.txt").read_text() == "mine\n"


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


SWAP_ON_OPEN = {}  # a path -> what another process does to it as it is opened


def swap_as_it_is_opened(event: str, args: tuple) -> None:
    """An audit hook (sys.addaudithook): Python announces each os.open before it opens, so the
    swap lands between open_by_name()'s look and its open, as a racing process's would."""
    if event == "open" and isinstance(args[0], (str, os.PathLike)):
        swap = SWAP_ON_OPEN.pop(os.fspath(args[0]), None)
        if swap:
            swap()


@contextmanager
def swapped_when_opened(path: Path, swap):
    if not SWAP_ON_OPEN.get("hooked"):
        sys.addaudithook(swap_as_it_is_opened)  # once per process: a hook cannot be removed
        SWAP_ON_OPEN["hooked"] = True
    SWAP_ON_OPEN[os.fspath(path)] = swap
    try:
        yield
    finally:
        assert SWAP_ON_OPEN.pop(os.fspath(path), None) is None, "the path was never opened"


@posix_only
@pytest.mark.parametrize("tool", ["read", "page", "write"])
@pytest.mark.parametrize(("swapped", "refusal"), [
    ("a/b/notes.txt", "notes.txt is a symbolic link"),
    ("a/b", "reached through a link put in place of a folder"),
], ids=["the file", "its folder"])
def test_on_windows_a_link_swapped_in_as_the_file_is_opened_is_refused_after_the_open(
    work, outside, tool, swapped, refusal
):
    """Windows opens by name, following links: what the open met is caught only by
    check_same_file() after it. Taken here through the file tools' own calls, on Windows' branch,
    with the swap made while os.open runs (POSIX: Windows refuses to replace an open file, and
    makes links only for an administrator)."""
    path = workdir_path("a/b/notes.txt")
    secret = outside / "b" / "notes.txt"
    calls = {
        "read": lambda: read_text_file(path, windows()),
        "page": lambda: read_lines(path, 1, 10, 100, windows()),
        "write": lambda: write_text_file(path, "overwritten\n", platform=windows()),
    }

    def swap() -> None:
        place = work / swapped
        if place.is_dir():
            swap_for_link(place, outside / "b")
        else:
            place.unlink()
            place.symlink_to(secret)

    with swapped_when_opened(path, swap), pytest.raises(ToolError, match=refusal):
        calls[tool]()
    assert secret.read_text() == "secret\n"


@posix_only
def test_a_file_swapped_between_the_look_and_the_open_is_refused_after_it(work, outside):
    """Windows opens by name: what it opened must still be the file at the path. (Windows itself
    refuses to replace a file that is open, so the swap is made here on POSIX.)"""
    path = work / "a" / "b" / "notes.txt"
    (work / "other.txt").write_text("another file\n")
    with open(path, "rb") as file:
        opened = os.fstat(file.fileno())
        check_same_file(path, opened)
        os.replace(work / "other.txt", path)
        with pytest.raises(ToolError, match="notes.txt was replaced while it was being opened"):
            check_same_file(path, opened)
        path.unlink()
        symlink_or_skip(path, outside / "b" / "notes.txt")
        with pytest.raises(NotRegularFile, match="notes.txt is a symbolic link"):
            check_same_file(path, opened)


@each_os
@pytest.mark.parametrize("missing", ["a/b/missing.txt", "a/b/notes.txt/inside.txt"],
                         ids=["a file", "a file taken for a folder"])
def test_a_path_that_is_not_there_is_named_in_full_and_taken_for_no_link(work, platform, missing):
    path = workdir_path(missing)
    with pytest.raises((FileNotFoundError, NotADirectoryError)) as raised:
        read_text_file(path, platform)
    assert raised.value.filename == str(path)
    assert str(raised.value).startswith("[Errno ")


@each_os
def test_a_folder_is_named_as_the_os_names_it(work, platform):
    folder = str(work / "a" / "b")
    with pytest.raises(IsADirectoryError) as raised:
        read_text_file(Path(folder), platform)
    assert str(raised.value) == f"[Errno 21] Is a directory: {folder!r}"


def test_a_nul_byte_in_the_first_8_kib_means_binary_and_one_after_does_not(work):
    (work / "early.bin").write_bytes(b"x" * 8191 + b"\0")
    with pytest.raises(ToolError) as refused:
        read_lines(work / "early.bin", 1, 5, 100)
    assert str(refused.value) == (
        "early.bin looks binary (8,192 bytes); read_file shows text. "
        + ADVICE[this_platform().shell.name][0])
    (work / "late.txt").write_bytes(b"x" * 8192 + b"\0")
    assert read_lines(work / "late.txt", 1, 5, 100)[1].lines == 1


def test_a_line_keeps_its_own_end_and_a_broken_byte_shows_as_a_replacement(work):
    """Only the line ending is taken off: spaces, tabs and letters at the end stay; a byte that
    is no UTF-8 shows as U+FFFD instead of failing the read."""
    (work / "f.txt").write_bytes(b"two spaces  \r\nends in X\ntab\t\nbroken \xff byte\n")
    lines, total = read_lines(work / "f.txt", 1, 10, 100)
    assert lines == ["two spaces  ", "ends in X", "tab\t", "broken \ufffd byte"]
    assert (total.lines, total.complete) == (4, True)


def test_a_line_of_four_byte_characters_is_cut_only_past_the_limit(work):
    """read_lines reads at most 4 bytes a character and one more: a line of exactly the limit
    in emoji is whole, one more is cut."""
    (work / "f.txt").write_text("🙂" * 10 + "\n" + "🙂" * 11 + "\n", encoding="utf-8")
    lines, _ = read_lines(work / "f.txt", 1, 2, 10)
    assert lines == ["🙂" * 10, "🙂" * 10 + " [line cut]"]


def test_no_page_and_a_page_that_ends_with_the_file_count_exactly(work):
    (work / "f.txt").write_bytes(b"ab\ncd\n")
    assert read_lines(work / "f.txt", 1, 0, 100) == ([], LineCount(2, complete=True))
    assert read_lines(work / "f.txt", 1, 2, 100) == (["ab", "cd"], LineCount(2, complete=True))

"""plumbing/platforms.py: each OS's description asserted as data, field by field, so that a
branch another OS takes is pinned on this machine too; and a word quoted for each shell. The
mutation run of 2026-11-28 found most of macOS's and Windows' fields read by no test here."""

import locale
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from plumbing.platforms import (
    Shell,
    console_encoding,
    linux,
    macos,
    posix_shell,
    windows,
    windows_shell,
)

def fields(platform) -> dict:
    return {name: getattr(platform, name) for name in platform.__dataclass_fields__}


def flag(name: str) -> int:
    return getattr(os, name, 0)


# Python's os docs: O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY and O_PATH are POSIX (O_PATH Linux
# only); O_BINARY and CREATE_NEW_PROCESS_GROUP are Windows'. On an OS without one it is 0.
def test_linux_is_described_field_by_field():
    assert fields(linux()) == {
        "name": "linux", "binary": 0, "no_follow": flag("O_NOFOLLOW"),
        "no_block": flag("O_NONBLOCK"),
        "folder": (flag("O_PATH") or os.O_RDONLY) | flag("O_DIRECTORY") | flag("O_NOFOLLOW"),
        "folder_descriptors": os.open in os.supports_dir_fd, "new_session": True,
        "new_process_group": 0, "subreaper": True, "job_objects": False, "shell": posix_shell(),
        "output_encoding": locale.getpreferredencoding(False), "read_only_sandbox": "bubblewrap",
        "utf8_locale": "C.UTF-8"}


def test_macos_is_described_field_by_field():
    """No O_PATH, no subreaper; en_US.UTF-8, since C.UTF-8 exists only from macOS 15."""
    assert fields(macos()) == {
        "name": "macos", "binary": 0, "no_follow": flag("O_NOFOLLOW"),
        "no_block": flag("O_NONBLOCK"),
        "folder": os.O_RDONLY | flag("O_DIRECTORY") | flag("O_NOFOLLOW"),
        "folder_descriptors": os.open in os.supports_dir_fd, "new_session": True,
        "new_process_group": 0, "subreaper": False, "job_objects": False, "shell": posix_shell(),
        "output_encoding": locale.getpreferredencoding(False),
        "read_only_sandbox": "sandbox-exec", "utf8_locale": "en_US.UTF-8"}


@pytest.mark.skipif(os.name != "posix", reason="the POSIX flags it leaves out")
def test_macos_opens_a_folder_read_only_as_a_folder_without_following_a_link():
    assert macos().folder == os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW != os.O_RDONLY
    assert macos().folder & os.O_DIRECTORY and macos().folder & os.O_NOFOLLOW


def test_windows_is_described_field_by_field():
    """Job Objects come from kernel32, which only Windows has; Git for Windows' tools read
    C.UTF-8."""
    assert fields(windows()) == {
        "name": "windows", "binary": flag("O_BINARY"), "no_follow": 0, "no_block": 0,
        "folder": 0, "folder_descriptors": False, "new_session": False,
        "new_process_group": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0),
        "subreaper": False, "job_objects": sys.platform == "win32", "shell": windows_shell(),
        "output_encoding": console_encoding(), "read_only_sandbox": "", "utf8_locale": "C.UTF-8"}


@pytest.mark.skipif(sys.platform == "win32", reason="Windows asks its console")
def test_away_from_windows_its_console_is_taken_for_the_us_one():
    assert console_encoding() == "cp437"
    assert windows().output_encoding == "cp437"


def test_a_word_is_quoted_for_powershell_with_each_of_its_quotes_doubled():
    """PowerShell ends a single-quoted string on ' ‘ ’ ‚ ‛ (about_Quoting_Rules); doubled, each
    is literal."""
    powershell = Shell("PowerShell", "powershell.exe")
    assert powershell.quoted("it's ‘a’ ‚b‛") == "'it''s ‘‘a’’ ‚‚b‛‛'"
    assert powershell.quoted("plain") == "'plain'"


@pytest.mark.parametrize("name", ["bash", "sh"])
def test_a_word_is_quoted_for_a_posix_shell_as_shlex_does(name):
    word = "it's $HOME; rm -rf *"
    quoted = Shell(name, "/bin/" + name).quoted(word)
    assert quoted == shlex.quote(word) and shlex.split(quoted) == [word]


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell")
def test_linux_and_macos_run_commands_with_bash_where_there_is_one_else_sh(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert posix_shell() == Shell("sh", "/bin/sh")
    bash = tmp_path / "bash"
    bash.write_text("#!/bin/sh\n")
    bash.chmod(0o755)
    assert posix_shell() == Shell("bash", str(bash))


@pytest.mark.skipif(sys.platform == "win32", reason="makes a folder named C:\\Program Files")
@pytest.mark.parametrize("program_files", ["set", "unset"])
def test_windows_finds_git_bash_in_program_files_without_git_on_the_path(
    tmp_path, monkeypatch, program_files
):
    """Where ProgramFiles is unset, Windows' default C:\\Program Files: here a folder of that
    name in the current folder stands for it."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "Programs"
    if program_files == "set":
        monkeypatch.setenv("ProgramFiles", str(folder))
    else:
        monkeypatch.delenv("ProgramFiles", raising=False)
        folder = Path(r"C:\Program Files")
    (tmp_path / folder / "Git" / "bin").mkdir(parents=True)
    (tmp_path / folder / "Git" / "bin" / "bash.exe").write_bytes(b"")
    assert windows_shell() == Shell("bash", str(folder / "Git" / "bin" / "bash.exe"))

"""plumbing/sandbox.py: which sandbox each OS gets, the bwrap word when none is found, and the
refusal of a word Windows would split otherwise, word for word (the mutation run of 2026-11-28
found each read by no test on this machine)."""

import os
import sys

import pytest

from plumbing.checks import ToolError
from plumbing.platforms import linux, macos, windows
from plumbing.sandbox import (
    git_driver_settings,
    program_in,
    read_only_sandbox,
    sandbox_argv,
    windows_command_line,
)

@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in is a POSIX shell script")
def test_macos_gets_seatbelt_where_sandbox_exec_starts_and_windows_gets_none(tmp_path,
                                                                            monkeypatch):
    """A sandbox-exec that starts stands in for macOS's own: its OS description decides."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "sandbox-exec").write_text("#!/bin/sh\nexit 0\n")
    (folder / "sandbox-exec").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(folder), os.environ["PATH"]]))
    assert read_only_sandbox(macos()) == "sandbox-exec"
    assert read_only_sandbox(windows()) == ""
    assert read_only_sandbox(linux()) in ("bubblewrap", "")  # not Seatbelt, even where it starts


def test_without_bwrap_on_the_path_the_argument_list_names_it_plainly(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert sandbox_argv(tmp_path)[:3] == ["bwrap", "--die-with-parent", "--new-session"]


def test_a_word_windows_would_split_otherwise_is_refused_in_one_line():
    with pytest.raises(ToolError) as refused:
        windows_command_line(["git.exe", "log", 'say "hi"'])
    assert str(refused.value) == (
        "refused: 'say \"hi\"' cannot be passed on to a Windows program as one word (a double "
        "quote, two backslashes in a row or one at the end, or an empty word); write paths "
        "with /")


def test_a_setting_of_no_driver_before_a_drivers_leaves_the_driver_switched_off():
    """`diff.external` names no driver; the filter after it is switched off all the same."""
    settings = git_driver_settings("diff.external\0filter.lfs.clean\0")
    assert settings and all(setting.startswith("filter.lfs.") for setting in settings)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX's execute bit")
def test_a_file_that_is_not_executable_is_no_program(tmp_path, monkeypatch):
    monkeypatch.delenv("PATHEXT", raising=False)
    (tmp_path / "sort").write_text("#!/bin/sh\n")
    assert program_in(str(tmp_path), "sort") is None
    (tmp_path / "sort").chmod(0o755)
    assert program_in(str(tmp_path), "sort") == str(tmp_path / "sort")

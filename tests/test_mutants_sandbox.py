"""plumbing/sandbox.py: which sandbox each OS gets, the bwrap word when none is found, and the
refusal of a word Windows would split otherwise, word for word (the mutation run of 2026-11-28
found each read by no test on this machine); git's no-program flags around a `--`, the folders
of a PATH with spaces, and what a Windows program keeps of the environment, as data (the
mutants of 2026-11-28's run that no test had checked when it stopped)."""

import dataclasses
import os
import sys

import pytest

from plumbing.checks import ToolError
from plumbing.platforms import Shell, linux, macos, windows
from plumbing.sandbox import (
    GIT_SAFE_CONFIG,
    SEATBELT_PROFILE,
    git_driver_settings,
    launcher_environment,
    program_in,
    read_only_path,
    read_only_sandbox,
    read_only_stages,
    sandbox_argv,
    windows_command_line,
    without_git_programs,
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


def safe_config() -> list[str]:
    words = []
    for setting in GIT_SAFE_CONFIG:
        words += ["-c", setting]
    return words


def test_git_s_no_program_flags_go_before_its_first_double_dash_where_they_are_still_options():
    """After the first `--` every word is a path, a second `--` too: flags put after it would be
    file names, and the model's --textconv before it would win."""
    argv = ["git", "diff", "--textconv", "HEAD", "--", "a.txt", "--"]
    assert without_git_programs(argv, []) == [
        "git", *safe_config(), "diff", "--textconv", "HEAD",
        "--no-ext-diff", "--no-textconv", "--ignore-submodules", "--", "a.txt", "--"]


def test_git_grep_gets_no_textconv_before_its_pattern_and_every_driver_emptied():
    argv = ["git", "grep", "-n", "alpha"]
    assert without_git_programs(argv, ["filter.x.clean="]) == [
        "git", *safe_config(), "-c", "filter.x.clean=", "grep", "--no-textconv", "-n", "alpha"]


# macOS: /Applications/Visual Studio Code.app/Contents/Resources/app/bin; Windows: C:/Program Files
SPACED = "/Applications/Visual Studio Code.app/Contents/Resources/app/bin"


def test_a_folder_with_spaces_on_the_path_stays_one_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", os.pathsep.join([SPACED, "/usr/bin"]))
    assert read_only_path() == os.pathsep.join([SPACED, "/usr/bin"])
    for platform in (linux(), macos()):
        assert launcher_environment(str(tmp_path), platform)["PATH"] == read_only_path()


def test_with_powershell_no_git_folder_is_put_first(tmp_path, monkeypatch):
    """Git's folders come first only with Git's own bash, found beside them; PowerShell's
    program says nothing of where Git is."""
    monkeypatch.chdir(tmp_path)
    powershell = dataclasses.replace(windows(), shell=Shell("PowerShell", "powershell.exe"))
    assert launcher_environment(str(tmp_path), powershell)["PATH"] == read_only_path()


def test_a_windows_program_keeps_the_settings_it_needs_to_start_and_only_those_set(
        tmp_path, monkeypatch):
    monkeypatch.setenv("SYSTEMROOT", "C:\\Windows")
    monkeypatch.setenv("COMSPEC", "C:\\Windows\\system32\\cmd.exe")
    monkeypatch.delenv("WINDIR", raising=False)
    monkeypatch.delenv("PATHEXT", raising=False)
    env = launcher_environment(str(tmp_path), windows())
    assert {name: env.get(name) for name in ("SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT")} == {
        "SYSTEMROOT": "C:\\Windows", "WINDIR": None,
        "COMSPEC": "C:\\Windows\\system32\\cmd.exe", "PATHEXT": None}


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in is a POSIX shell script")
def test_on_macos_the_sandbox_exec_found_is_named_by_its_full_path(tmp_path_factory,
                                                                   monkeypatch):
    """Not the bare name: that would be looked up again on the command's PATH."""
    folder = tmp_path_factory.mktemp("bin")
    (folder / "sandbox-exec").write_text("#!/bin/sh\nexit 0\n")
    (folder / "sandbox-exec").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(folder), os.environ["PATH"]]))
    monkeypatch.chdir(tmp_path_factory.mktemp("work"))
    private = str(tmp_path_factory.mktemp("private"))
    [stage] = read_only_stages([["cat", "a.txt"]], private, [], "sandbox-exec", macos())
    assert stage[:5] == [str(folder / "sandbox-exec"), "-p", SEATBELT_PROFILE, "-D",
                         f"PRIVATE={os.path.realpath(private)}"]


def test_without_any_path_the_commands_get_an_empty_one(tmp_path, monkeypatch):
    """An agent started with no PATH at all (env -i): no folder to keep, and no error."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PATH")
    assert read_only_path() == ""
    assert launcher_environment(str(tmp_path), linux())["PATH"] == ""

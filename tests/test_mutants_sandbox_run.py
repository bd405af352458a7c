"""plumbing/sandbox.py, running a pipeline under the sandbox (the sandbox-run target): macOS's
branch through run_read_only(), with a stand-in sandbox-exec that notes how it was started and
runs the command; the start-up probe, which shows nothing and raises nothing when the sandbox
cannot start; the private folder a command gets; a repository whose drivers git cannot list; and
the clean-up on exit. Each test runs a few short commands at most (no bubblewrap)."""

import dataclasses
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import pytest
from rich.console import Console

from plumbing import sandbox
from plumbing.checks import ToolError
from plumbing.commands import sessions_file
from plumbing.platforms import linux, macos
from plumbing.sandbox import (
    note_read_only_protection,
    private_prefix,
    read_only_path,
    read_only_sandbox,
    remove_private_folders,
    run_read_only,
)
from plumbing.screen import Screen

pytestmark = pytest.mark.skipif(sys.platform == "win32",
                                reason="the stand-ins are POSIX shell scripts")
PARSING_ONLY = dataclasses.replace(linux(), read_only_sandbox="")


@pytest.fixture
def work(tmp_path_factory, monkeypatch):
    folder = tmp_path_factory.mktemp("work")
    monkeypatch.chdir(folder)
    return folder


def stand_in(folder, script: str) -> None:
    """A sandbox-exec in `folder`, first on the PATH (outside the work folder, where the agent
    looks for it)."""
    (folder / "sandbox-exec").write_text("#!/bin/sh\n" + script)
    (folder / "sandbox-exec").chmod(0o755)


@pytest.fixture
def seatbelt(tmp_path_factory, monkeypatch):
    """A sandbox-exec that writes the words it was started with before the command's (its -p,
    -D and PRIVATE=...) to a log, then runs the command as sandbox-exec would."""
    folder = tmp_path_factory.mktemp("bin")
    log = folder / "started.log"
    stand_in(folder, f'echo "$1 $3 $4" >> {log}\nshift 4\nexec "$@"\n')
    monkeypatch.setenv("PATH", os.pathsep.join([str(folder), os.environ["PATH"]]))
    return log


def test_on_macos_a_command_runs_inside_sandbox_exec_with_its_own_private_folder(work, seatbelt):
    """sandbox-exec is given the private folder the command gets as its temp folder, resolved;
    the folder is named so that the agent's exit finds it if a thread left it."""
    private, exit_code = run_read_only([["printenv", "TMPDIR"]], 10, threading.Event(), macos())
    assert exit_code == 0 and os.path.basename(private).startswith(private_prefix())
    assert seatbelt.read_text().splitlines()[-1] == f"-p -D PRIVATE={os.path.realpath(private)}"
    assert not os.path.exists(private)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_on_macos_git_lists_the_drivers_inside_sandbox_exec_too(work, seatbelt):
    """The listing of the repository's drivers, then the command: both in sandbox-exec, with the
    one private folder of this command."""
    output, exit_code = run_read_only([["git", "--version"]], 10, threading.Event(), macos())
    assert exit_code == 0 and output.startswith("git version"), output
    listing, command = seatbelt.read_text().splitlines()[-2:]
    assert listing == command and command.startswith("-p -D PRIVATE=/")


def test_on_macos_the_agent_notes_each_commands_session_for_its_exit(work, monkeypatch):
    """macOS has no subreaper: what a command leaves running is found on exit by its session,
    which run_read_only's commands note too (Linux's adopts them instead, and notes none)."""
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    run_read_only([["true"]], 10, threading.Event(), dataclasses.replace(macos(),
                                                                         read_only_sandbox=""))
    assert len(sessions_file().read_text(encoding="ascii").splitlines()) == 1
    sessions_file().unlink()
    run_read_only([["true"]], 10, threading.Event(), PARSING_ONLY)
    assert not sessions_file().exists()


def test_a_sandbox_that_cannot_start_shows_nothing_and_leaves_parsing_only(
        tmp_path, monkeypatch, capfd):
    """What the probe's sandbox-exec says stays off the screen; the note says why."""
    stand_in(tmp_path, "echo 'sandbox_apply: Operation not permitted'; echo 'on stderr' >&2\n"
                       "exit 1\n")
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path), os.environ["PATH"]]))
    buffer = io.StringIO()
    note_read_only_protection(Screen(Console(file=buffer, width=200)), macos())
    assert "parsing only here (sandbox-exec is missing or cannot start)" in buffer.getvalue()
    assert capfd.readouterr() == ("", "")


def test_a_sandbox_that_hangs_at_start_up_leaves_parsing_only_and_no_traceback(
        tmp_path, monkeypatch):
    """SANDBOX_START_WAIT, shortened here: a sandbox-exec that does not end in time is stopped
    and counts as one that cannot start (before, the agent stopped with TimeoutExpired)."""
    monkeypatch.setattr(sandbox, "SANDBOX_START_WAIT", 0.2)
    stand_in(tmp_path, "exec sleep 5\n")  # it would start, 5 s late
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path), os.environ["PATH"]]))
    assert read_only_sandbox(macos()) == ""


def test_the_sandbox_probe_starts_with_no_secret_and_the_commands_path(tmp_path, monkeypatch):
    """This sandbox-exec starts only where its environment holds no key and the PATH the
    commands get."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-the-key")
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path), os.environ["PATH"]]))
    stand_in(tmp_path, f'[ -z "$ANTHROPIC_API_KEY" ] && [ "$PATH" = "{read_only_path()}" ] '
                       '|| exit 1\nshift 4\nexec "$@"\n')
    assert read_only_sandbox(macos()) == "sandbox-exec"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_repository_whose_drivers_git_cannot_list_is_refused_with_gits_words(work):
    subprocess.run(["git", "init", "-q"], check=True)
    with open(work / ".git" / "config", "a", encoding="utf-8") as config:
        config.write("[broken\n")
    lines = (work / ".git" / "config").read_text(encoding="utf-8").count("\n")
    with pytest.raises(ToolError) as refused:
        run_read_only([["git", "status"]], 10, threading.Event(), PARSING_ONLY)
    assert str(refused.value) == (
        "refused: git could not list this repository's drivers to switch them off: "
        f"fatal: bad config line {lines} in file .git/config")


def test_on_exit_what_cannot_be_removed_is_left_without_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / f"{private_prefix()}a-file").write_text("not a folder")
    (tmp_path / f"{private_prefix()}left").mkdir()
    remove_private_folders()
    assert [path.name for path in tmp_path.iterdir()] == [f"{private_prefix()}a-file"]

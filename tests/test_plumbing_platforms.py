"""plumbing/platforms.py: what each OS offers, told apart on any machine, and the shell the bash
tool runs commands with (on Windows, Git for Windows' bash.exe when there is one, else
PowerShell)."""

import base64
import dataclasses
import os
import stat
import subprocess
import sys

import pytest

from plumbing.platforms import (
    Shell,
    linux,
    macos,
    shell_in_use,
    this_platform,
    windows,
    windows_shell,
)
from scripted.replay import SHELL_IN_USE

OS_OF_SYS_PLATFORM = {"win32": "windows", "darwin": "macos"}


def test_this_platform_is_the_os_this_runs_on():
    assert this_platform().name == OS_OF_SYS_PLATFORM.get(sys.platform, "linux")
    assert this_platform() == {"linux": linux, "macos": macos, "windows": windows}[
        this_platform().name]()


def test_windows_offers_no_link_refusing_open_no_fifo_flag_and_no_folder_descriptors():
    """Python's os docs: O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY and dir_fd are not on Windows; a
    descriptor opened without O_BINARY translates line endings."""
    offered = windows()
    assert (offered.no_follow, offered.no_block, offered.folder) == (0, 0, 0)
    assert not offered.folder_descriptors and not offered.new_session and not offered.subreaper
    assert offered.binary == getattr(os, "O_BINARY", 0)
    assert offered.new_process_group == getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    assert offered.read_only_sandbox == ""


@pytest.mark.skipif(os.name != "posix", reason="POSIX flags")
def test_linux_and_macos_refuse_links_and_fifos_at_open_and_only_linux_adopts_orphans():
    assert linux().no_follow == macos().no_follow == os.O_NOFOLLOW != 0
    assert linux().no_block == macos().no_block == os.O_NONBLOCK != 0
    assert linux().binary == macos().binary == 0
    assert (linux().subreaper, macos().subreaper) == (True, False)
    assert (linux().read_only_sandbox, macos().read_only_sandbox) == ("bubblewrap", "sandbox-exec")


def test_bash_and_sh_take_the_command_line_after_dash_c():
    command = "echo 'a  b' \"$HOME\" | grep -c 日本"
    assert Shell("bash", "/bin/bash").argv(command) == ["/bin/bash", "-c", command]
    assert Shell("sh", "/bin/sh").argv(command) == ["/bin/sh", "-c", command]


def test_powershell_gets_the_command_line_encoded_so_no_quote_is_lost():
    command = "Get-ChildItem \"C:\\My Files\" | Select-String 'ファイル' ; echo `$x"
    argv = Shell("PowerShell", "powershell.exe").argv(command)
    assert argv[:-1] == ["powershell.exe", "-NoProfile", "-NonInteractive", "-EncodedCommand"]
    assert base64.b64decode(argv[-1]).decode("utf-16-le") == command


def place_program(folder, name: str) -> None:
    """An empty program `name` that shutil.which finds in `folder` on this OS."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / (name + (".exe" if os.name == "nt" else ""))
    program.write_bytes(b"")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)


@pytest.mark.parametrize("git_folder", ["cmd", "mingw64/bin"])
def test_windows_runs_commands_with_the_bash_beside_git_for_windows(git_folder, tmp_path,
                                                                     monkeypatch):
    install = tmp_path / "Git"
    place_program(install / git_folder, "git")
    (install / "bin").mkdir()
    (install / "bin" / "bash.exe").write_bytes(b"")
    place_program(tmp_path / "System32", "bash")  # WSL's: starts Linux, not Windows' bash
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path / "System32"),
                                                str(install / git_folder)]))
    monkeypatch.setenv("ProgramFiles", str(tmp_path / "nothing here"))
    shell = windows_shell()
    assert (shell.name, shell.program) == ("bash", str(install / "bin" / "bash.exe"))


def test_windows_without_git_bash_runs_commands_with_powershell(tmp_path, monkeypatch):
    place_program(tmp_path / "System32", "bash")
    monkeypatch.setenv("PATH", str(tmp_path / "System32"))
    monkeypatch.setenv("ProgramFiles", str(tmp_path / "nothing here"))
    assert windows_shell() == Shell("PowerShell", "powershell.exe")
    place_program(tmp_path / "PowerShell" / "7", "pwsh")
    monkeypatch.setenv("PATH", str(tmp_path / "PowerShell" / "7"))
    shell = windows_shell()
    assert shell.name == "PowerShell"
    assert os.path.dirname(shell.program) == str(tmp_path / "PowerShell" / "7")


def test_the_model_is_told_the_os_and_the_shell_in_use():
    with_git_bash = dataclasses.replace(windows(), shell=Shell("bash", r"C:\Git\bin\bash.exe"))
    with_powershell = dataclasses.replace(windows(), shell=Shell("PowerShell", "powershell.exe"))
    assert shell_in_use(with_git_bash) == "bash on Windows"
    assert shell_in_use(with_powershell) == "PowerShell on Windows"
    assert shell_in_use(dataclasses.replace(macos(), shell=Shell("sh", "/bin/sh"))) == "sh on macOS"


@pytest.mark.parametrize("shell", [Shell("bash", "bash"), Shell("sh", "/bin/sh"),
                                   Shell("PowerShell", "pwsh")], ids=lambda shell: shell.name)
@pytest.mark.parametrize("offered", [linux, macos, windows])
def test_a_recording_made_on_one_os_replays_on_another(offered, shell):
    """The replay masks what the model is told of the OS and the shell, whatever they are."""
    where = shell_in_use(dataclasses.replace(offered(), shell=shell))
    told = f"The bash tool runs your commands with {where}."
    assert SHELL_IN_USE.sub("<shell> on <OS>", told) == (
        "The bash tool runs your commands with <shell> on <OS>.")

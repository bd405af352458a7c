"""What the operating system offers the file tools, the command runner and the bash tool.

`this_platform()` describes the OS this runs on. `linux()`, `macos()` and `windows()` describe
each OS so that a test can hand one to a function and take that OS's branch on any machine.
A flag this Python lacks is 0 in every description: a test on Linux that takes Windows' branch
opens files with Linux's flags, minus the ones Windows lacks.
"""

import base64
import locale
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

@dataclass(frozen=True)
class Shell:
    """The program the bash tool runs a command line with, and what the model is told it is."""
    name: str  # "bash", "sh", "PowerShell"
    program: str

    def argv(self, command: str) -> list[str]:
        """The words that run `command`. PowerShell gets it base64-encoded (-EncodedCommand):
        Windows passes one command line, and no quoting survives both its rules and PowerShell's."""
        if self.name == "PowerShell":
            encoded = base64.b64encode(command.encode("utf-16-le")).decode("ascii")
            return [self.program, "-NoProfile", "-NonInteractive", "-EncodedCommand", encoded]
        return [self.program, "-c", command]

    def quoted(self, word: str) -> str:
        """`word` as one literal word of this shell's command line. PowerShell closes a
        single-quoted string on ‘ ’ ‚ ‛ as well as ' (about_Quoting_Rules); doubled, each is
        literal."""
        if self.name == "PowerShell":
            return "'" + re.sub("(['\u2018\u2019\u201a\u201b])", r"\1\1", word) + "'"
        return shlex.quote(word)


@dataclass(frozen=True)
class Platform:
    name: str  # "linux", "macos" or "windows"
    # opening a file
    binary: int  # O_BINARY: without it, a Windows descriptor turns \n into \r\n
    no_follow: int  # O_NOFOLLOW: open refuses a link itself
    no_block: int  # O_NONBLOCK: a FIFO cannot make open wait (os.set_blocking undoes it after)
    folder: int  # the flags that open a folder only to open what is inside it
    folder_descriptors: bool  # os.open takes dir_fd: a path is opened one folder at a time
    # starting and ending a command
    new_session: bool  # POSIX start_new_session: the terminal's Ctrl-C does not reach it
    new_process_group: int  # Windows CREATE_NEW_PROCESS_GROUP: the console's Ctrl-C does not
    subreaper: bool  # Linux prctl: orphans come back to the agent; its memory is kept from them
    job_objects: bool  # Windows kernel32: a Job Object holds all a command starts, detached too
    # the bash tool
    shell: Shell
    output_encoding: str  # what a command's output that is not UTF-8 is read as
    read_only_sandbox: str  # the OS's own way to run a command read-only: "" if none
    utf8_locale: str  # a UTF-8 locale every supported version has (macOS: C.UTF-8 from 15 only)


OS_NAMES = {"linux": "Linux", "macos": "macOS", "windows": "Windows"}  # as the model is told


def this_platform() -> Platform:
    if sys.platform == "win32":
        return windows()
    if sys.platform == "darwin":
        return macos()
    return linux()


def shell_in_use(platform: Platform | None = None) -> str:
    """Where the bash tool's commands run, as the model is told: "bash on Linux", "PowerShell on
    Windows". The model then writes commands that run there."""
    platform = platform or this_platform()
    return f"{platform.shell.name} on {OS_NAMES[platform.name]}"


def linux() -> Platform:
    return Platform(
        name="linux", binary=0, no_follow=flag("O_NOFOLLOW"), no_block=flag("O_NONBLOCK"),
        folder=(flag("O_PATH") or os.O_RDONLY) | flag("O_DIRECTORY") | flag("O_NOFOLLOW"),
        folder_descriptors=os.open in os.supports_dir_fd, new_session=True,
        new_process_group=0, subreaper=True, job_objects=False, shell=posix_shell(),
        output_encoding=locale.getpreferredencoding(False), read_only_sandbox="bubblewrap",
        utf8_locale="C.UTF-8")


def macos() -> Platform:
    """Like Linux, without O_PATH and without a subreaper; Seatbelt (sandbox-exec) sandboxes."""
    return Platform(
        name="macos", binary=0, no_follow=flag("O_NOFOLLOW"), no_block=flag("O_NONBLOCK"),
        folder=os.O_RDONLY | flag("O_DIRECTORY") | flag("O_NOFOLLOW"),
        folder_descriptors=os.open in os.supports_dir_fd, new_session=True,
        new_process_group=0, subreaper=False, job_objects=False, shell=posix_shell(),
        output_encoding=locale.getpreferredencoding(False), read_only_sandbox="sandbox-exec",
        utf8_locale="en_US.UTF-8")


def windows() -> Platform:
    """No O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY or dir_fd (Python's os docs); O_BINARY instead."""
    return Platform(
        name="windows", binary=flag("O_BINARY"), no_follow=0, no_block=0, folder=0,
        folder_descriptors=False, new_session=False,
        new_process_group=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0), subreaper=False,
        job_objects=sys.platform == "win32", shell=windows_shell(),
        output_encoding=console_encoding(), read_only_sandbox="",
        utf8_locale="C.UTF-8")  # what Git for Windows' tools read; Windows' own read no LANG


def flag(name: str) -> int:
    return getattr(os, name, 0)


def posix_shell() -> Shell:
    bash = shutil.which("bash")
    if bash:
        return Shell("bash", bash)
    return Shell("sh", "/bin/sh")


def windows_shell() -> Shell:
    """Git for Windows' bash.exe, as Claude Code uses; else PowerShell. Not System32's bash.exe,
    which starts WSL's Linux rather than running on Windows."""
    bash = git_bash()
    if bash:
        return Shell("bash", bash)
    return Shell("PowerShell", shutil.which("pwsh") or "powershell.exe")


def git_bash() -> str | None:
    """bash.exe beside Git for Windows' git.exe (Git/cmd/git.exe → Git/bin/bash.exe), or in its
    usual install folder."""
    places = []
    git = shutil.which("git")
    if git:
        places += [Path(git).parent.parent / "bin" / "bash.exe",
                   Path(git).parent.parent.parent / "bin" / "bash.exe"]  # Git/mingw64/bin/git.exe
    places.append(Path(os.environ.get("ProgramFiles", r"C:\Program Files"), "Git", "bin",
                       "bash.exe"))
    for place in places:
        if place.is_file():
            return str(place)
    return None


def console_encoding() -> str:
    """The console's code page (cp932 in Japan, cp850 or cp437 in the West): what Windows programs
    write to a pipe. Python's own locale encoding is the ANSI code page, often another. Asked
    elsewhere (a test taking Windows' branch): cp437, the US console's."""
    if sys.platform != "win32":
        return "cp437"
    import ctypes  # windll exists on Windows only
    kernel32 = ctypes.windll.kernel32
    return f"cp{kernel32.GetConsoleOutputCP() or kernel32.GetOEMCP()}"

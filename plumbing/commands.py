"""Running a shell command with bounded output, and stopping it and all it started.

The lesson calls `run_command(command, timeout, stopped)`. How output is capped, how a runaway
command's whole process tree is ended, and how the agent keeps its key from the commands it runs,
lives here. psutil finds and ends the processes on Linux, macOS and Windows alike; Linux adds a
subreaper and keeps the agent's memory from its commands (prctl).
"""

import ctypes
import functools
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import psutil

from plumbing.checks import ToolError
from plumbing.platforms import Platform, this_platform

OUTPUT_LIMIT = 10_000_000  # bytes a command may write before it is stopped as a runaway
# What the SDK reads as credentials: never passed to a command. ANTHROPIC_CUSTOM_HEADERS may hold
# a gateway's Authorization header.
CREDENTIALS = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS"]
# In every command's environment, so in that of every process it starts, wherever it moves to
# (setsid, nohup, a double fork): "<the agent>/<the command>".
COMMAND_TAG = "AGENT_COMMAND"
END_WAIT = 2.0  # seconds to end a tree that keeps starting processes, and to collect them
LONGEST_PAUSE = 0.02  # seconds between two looks at a running command (Ctrl-C, time, output)
# prctl(2) options and the capability they take, from <linux/prctl.h> and <linux/capability.h>
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
CAP_SYS_PTRACE = 19

# The blocklist's entries however they are spelled; quotes and variables still get past it.
BLOCKED_PROGRAM_PATH = re.compile(r"^\S*/(?=(rm|sudo|mkfs|shutdown|reboot|dd)\S*$)")  # /bin/rm
RECURSIVE = r"(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)"
FORCE = r"(?:-[a-zA-Z]*f[a-zA-Z]*|--force)"
RM_RF = re.compile(rf"\brm (?=(?:-\S* )*{RECURSIVE} )(?=(?:-\S* )*{FORCE} )(?:-\S* )+")


def refuse_if_blocked(command: str, blocked_commands: list[str]) -> None:
    """A teaching guard, not a sandbox: refuse a command that matches the blocklist."""
    for blocked in blocked_commands:
        if blocked in command or blocked in blocklist_spelling(command):
            raise ToolError("refused: the command matches the blocklist of destructive commands "
                            "(a teaching guard)")


def blocklist_spelling(command: str) -> str:
    """The command as the blocklist reads it: one space between words (tabs, runs of spaces),
    programs without their folder, and rm's recursive and force options, in any order, as -rf."""
    words = [BLOCKED_PROGRAM_PATH.sub("", word) for word in command.split()]
    return RM_RF.sub("rm -rf ", " ".join(words) + " ")


def run_command(command: str, timeout: float, stopped: threading.Event,
                output_limit: int = OUTPUT_LIMIT, env: dict | None = None,
                platform: Platform | None = None) -> tuple[str, int]:
    """Run a shell command; return its output and exit code, or raise ToolError if stopped.
    `env`: the command's whole environment; by default the agent's, without its credentials."""
    # Output goes to a file, not a pipe: a job left running in the background cannot hang us.
    platform = platform or this_platform()
    if env is None:
        env = command_environment()
    tag = f"{agent_tag()}/{uuid.uuid4().hex}"
    guard_the_agent(platform)
    env = {**env, **output_in_utf8(platform), COMMAND_TAG: tag}
    with tempfile.TemporaryFile() as out:
        # Its own session (POSIX) or process group (Windows): the terminal's Ctrl-C reaches the
        # agent only, which then ends the command's whole tree itself.
        proc = subprocess.Popen(platform.shell.argv(command), stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=platform.new_session,
                                creationflags=platform.new_process_group)
        why_stopped = wait_or_stop(proc, out, timeout, stopped, output_limit, tag)
        out.seek(0)
        output = decoded(out.read(output_limit), platform.output_encoding).rstrip()
    if why_stopped:
        raise ToolError(f"{why_stopped}. Output so far:\n{output}")
    return output, proc.returncode


def command_environment() -> dict:
    """The agent's environment without the credentials it read: a project's install script or
    test suite that the agent runs does not get the API key."""
    return {name: value for name, value in os.environ.items() if name not in CREDENTIALS}


def output_in_utf8(platform: Platform) -> dict:
    """On Windows a console program writes to a file or pipe in the console's (OEM) code page,
    which the output is read with, but Python writes in the ANSI one (locale.getpreferredencoding:
    cp1252 where the console's is cp437 or cp850). Told to write UTF-8, read first, a Python
    program's output reads right whatever the two code pages are."""
    if platform.name == "windows":
        return {"PYTHONIOENCODING": "utf-8"}
    return {}


def decoded(output: bytes, encoding: str) -> str:
    """UTF-8, as most programs write; else the console's encoding (a Windows program's cp932,
    say). Never an error: a byte that means nothing there becomes a replacement character."""
    try:
        return output.decode("utf-8")
    except UnicodeDecodeError:
        return output.decode(encoding, errors="replace")


def wait_or_stop(proc: subprocess.Popen, out, timeout: float, stopped: threading.Event,
                 output_limit: int, tag: str) -> str:
    """Wait for a command. Stop it, and all it started, if it runs too long, writes too much,
    or Ctrl-C comes. Returns why it was stopped, or "" if it ended by itself."""
    deadline = time.monotonic() + timeout
    why_stopped = ""
    pause = 0.001  # short at first: most commands end within milliseconds
    # A thread waits for the command, so the loop wakes the moment it ends, not at its next look.
    waiter = threading.Thread(target=proc.wait, daemon=True)
    waiter.start()
    try:
        while waiter.is_alive() and not why_stopped:
            if stopped.is_set():  # Ctrl-C, seen in any thread (v3 runs subagents in threads)
                raise KeyboardInterrupt
            waiter.join(pause)
            pause = min(pause * 2, LONGEST_PAUSE)  # then less often: a long wait costs no CPU
            if time.monotonic() > deadline:
                why_stopped = f"timed out after {timeout:g} s and was stopped"
            elif os.fstat(out.fileno()).st_size > output_limit:
                why_stopped = f"stopped after writing more than {output_limit:,} bytes"
    finally:
        if proc.poll() is None:
            end_command(proc, tag)
    return why_stopped


def end_command(proc: subprocess.Popen, tag: str) -> None:
    """Kill a running command and every process it started: those below it, and those that left
    its tree (setsid, nohup, a double fork) and still carry its tag."""
    end_processes(lambda: [*process_tree(proc.pid), *tagged(tag)])
    proc.wait()


def end_every_process_started() -> None:
    """On exit: end what the commands left running (a background job, a server): whatever is
    below the agent (on Linux, orphans came back to it), and whatever carries its tag."""
    end_processes(lambda: [*process_tree(os.getpid())[1:], *tagged(agent_tag() + "/")])


# -- finding and ending processes (psutil: Linux, macOS, Windows) --
def end_processes(find) -> None:
    """Kill what `find()` returns, again until it returns nothing alive (a process may start
    another before it is killed), then collect them so none is left as a zombie."""
    killed = {}
    deadline = time.monotonic() + END_WAIT
    found = alive(find())
    while found and time.monotonic() < deadline:
        for process in found:
            killed[process.pid] = process
            try:
                process.kill()
            except psutil.Error:  # it ended meanwhile
                pass
        found = [process for process in alive(find()) if process.pid not in killed]
    collect(list(killed.values()), deadline)


def collect(processes: list, deadline: float) -> None:
    """Wait until the killed processes are gone: the agent's own children collected here (else
    they stay zombies), the others' left to their parents."""
    while processes and time.monotonic() < deadline:
        _, left = psutil.wait_procs(processes, timeout=0.005)
        processes = [process for process in left if not zombie_of_another(process)]


def zombie_of_another(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE and process.ppid() != os.getpid()
    except psutil.Error:  # collected meanwhile
        return True


def alive(processes: list) -> list:
    """The processes that still run: not ended, not zombies waiting to be collected."""
    running = []
    for process in processes:
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except psutil.Error:  # ended meanwhile
            pass
    return running


def process_tree(pid: int) -> list:
    """The process `pid` and every process below it."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:  # it ended meanwhile
        return []


def tagged(tag_start: str) -> list:
    """The processes whose COMMAND_TAG starts with `tag_start` (the environments of the user's
    own processes can be read; other users' are skipped)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(COMMAND_TAG, "").startswith(tag_start):
                found.append(process)
        except psutil.Error:  # ended meanwhile, or another user's
            pass
    return found


def agent_tag() -> str:
    """This agent: its process id and start time (an id alone may be a former agent's)."""
    return f"{os.getpid()}@{psutil.Process().create_time():.2f}"


# -- the agent's own process: it keeps its key, and its commands' orphans (Linux) --
@functools.cache
def libc():
    """The C library, for prctl(2); None where there is no prctl."""
    if sys.platform != "linux":
        return None
    return ctypes.CDLL(None, use_errno=True)


def guard_the_agent(platform: Platform) -> None:
    """Linux, before each command (it is cheap, and changes nothing the second time): the agent
    adopts whatever its commands leave running, so that it can end it on exit; and no command can
    read the agent's memory or environment, where the API key is (/proc/<pid>/environ): the agent
    is not dumpable, and CAP_SYS_PTRACE is gone from every program it starts, so a root in a
    container cannot either. (A root that keeps CAP_SYS_ADMIN owns the machine: it still can.)"""
    c_library = libc()
    if not platform.subreaper or c_library is None:
        return
    c_library.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    c_library.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    c_library.prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0)  # fails if not root: nothing to drop

"""Running a shell command with bounded output, and stopping it and all it started.

The lesson calls `run_command(command, timeout, stopped)`. How output is capped, how a runaway
command's whole process tree is ended, and how the agent keeps its key from the commands it runs,
lives here. The process tree and the key need Linux (/proc and prctl); elsewhere a command's
process group is ended, and the key is kept out of its environment only.
"""

import ctypes
import functools
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

from plumbing.checks import ToolError

OUTPUT_LIMIT = 10_000_000  # bytes a command may write before it is stopped as a runaway
# What the SDK reads as credentials: never passed to a command. ANTHROPIC_CUSTOM_HEADERS may hold
# a gateway's Authorization header.
CREDENTIALS = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS"]
REAP_WAIT = 1.0  # seconds to collect the processes of a tree that was killed
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
                output_limit: int = OUTPUT_LIMIT, env: dict | None = None) -> tuple[str, int]:
    """Run a shell command; return its output and exit code, or raise ToolError if stopped.
    `env`: the command's whole environment; by default the agent's, without its credentials."""
    # Output goes to a file, not a pipe: a job left running in the background cannot hang us.
    if env is None:
        env = command_environment()
    guard_the_agent()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env=env, preexec_fn=adopter_of_orphans())
        why_stopped = wait_or_stop(proc, out, timeout, stopped, output_limit)
        out.seek(0)
        output = out.read(output_limit).decode("utf-8", errors="replace").rstrip()
    if why_stopped:
        raise ToolError(f"{why_stopped}. Output so far:\n{output}")
    return output, proc.returncode


def command_environment() -> dict:
    """The agent's environment without the credentials it read: a project's install script or
    test suite that the agent runs does not get the API key."""
    return {name: value for name, value in os.environ.items() if name not in CREDENTIALS}


def wait_or_stop(proc: subprocess.Popen, out, timeout: float, stopped: threading.Event,
                 output_limit: int) -> str:
    """Wait for a command. Stop it, and all it started, if it runs too long, writes too much,
    or Ctrl-C comes. Returns why it was stopped, or "" if it ended by itself."""
    deadline = time.monotonic() + timeout
    why_stopped = ""
    pause = 0.001  # short at first: most commands end within milliseconds
    try:
        while proc.poll() is None and not why_stopped:
            if stopped.is_set():  # Ctrl-C, seen in any thread (v3 runs subagents in threads)
                raise KeyboardInterrupt
            time.sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE)  # then less often: a long wait costs no CPU
            if time.monotonic() > deadline:
                why_stopped = f"timed out after {timeout:g} s and was stopped"
            elif os.fstat(out.fileno()).st_size > output_limit:
                why_stopped = f"stopped after writing more than {output_limit:,} bytes"
    finally:
        if proc.poll() is None:
            end_command(proc)
    return why_stopped


def end_command(proc: subprocess.Popen) -> None:
    """Kill a running command and every process it started: its process group, and on Linux its
    whole tree, setsid and nohup children included (its shell adopted every orphan of the tree)."""
    killed = end_process_tree(proc.pid)
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:  # it ended meanwhile
        pass
    proc.wait()
    reap([pid for pid in killed if pid != proc.pid])


# -- the agent's own process: it keeps its key, and its commands' orphans (Linux) --
@functools.cache
def libc():
    """The C library, for prctl(2); None where there is no prctl."""
    if sys.platform != "linux":
        return None
    return ctypes.CDLL(None, use_errno=True)


def guard_the_agent() -> None:
    """Before each command (it is cheap, and changes nothing the second time): the agent adopts
    whatever its commands leave running, so that it can end it on exit; and no command can read
    the agent's memory or environment, where the API key is (/proc/<pid>/environ): the agent is
    not dumpable, and CAP_SYS_PTRACE is gone from every program it starts, so a root in a
    container cannot either. (A root that keeps CAP_SYS_ADMIN owns the machine: it still can.)"""
    c_library = libc()
    if c_library is None:
        return
    c_library.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    c_library.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    c_library.prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0)  # fails if not root: nothing to drop


def adopter_of_orphans():
    """What the command's shell runs before it starts (Linux): it becomes the subreaper of its own
    tree, so a process that a setsid or a double fork tried to set loose stays below it."""
    if libc() is None:
        return None
    return become_subreaper


def become_subreaper() -> None:
    libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def end_every_process_started() -> None:
    """On exit: end what the commands left running (a background job, a server). Orphans came
    back to the agent (guard_the_agent), so all of them are below it."""
    reap(end_process_tree(os.getpid(), include_root=False))


def end_process_tree(root: int, include_root: bool = True) -> list[int]:
    """SIGSTOP every process below `root`, again until no new one shows up (a stopped process
    cannot start another), then SIGKILL them all. Returns their ids. Linux only: elsewhere there
    is no /proc to walk, and nothing is found."""
    frozen = []
    if include_root:
        send(root, signal.SIGSTOP)
        frozen.append(root)
    while True:
        new = [pid for pid in descendants(root) if pid not in frozen]
        if not new:
            break
        for pid in new:
            send(pid, signal.SIGSTOP)
        frozen += new
    for pid in frozen:
        send(pid, signal.SIGKILL)
    return frozen


def send(pid: int, signal_number: int) -> None:
    try:
        os.kill(pid, signal_number)
    except ProcessLookupError:  # it ended meanwhile
        pass


def descendants(root: int) -> list[int]:
    """The processes below `root`, from the parent ids in /proc."""
    children: dict[int, list[int]] = {}
    for pid in all_processes():
        children.setdefault(parent_of(pid), []).append(pid)
    found, waiting = [], [root]
    while waiting:
        below = children.get(waiting.pop(), [])
        found += below
        waiting += below
    return found


def all_processes() -> list[int]:
    try:
        names = os.listdir("/proc")
    except FileNotFoundError:  # not Linux
        return []
    return [int(name) for name in names if name.isdigit()]


def parent_of(pid: int) -> int:
    """The parent id from /proc/<pid>/stat; its second field, the name, may hold ") " itself."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:  # it ended meanwhile
        return 0
    return int(stat[stat.rindex(b")") + 2:].split()[1])


def reap(pids: list[int]) -> None:
    """Collect the killed processes that came back to the agent, so none is left as a zombie."""
    deadline = time.monotonic() + REAP_WAIT
    waiting = list(pids)
    while waiting and time.monotonic() < deadline:
        waiting = [pid for pid in waiting if not collected(pid)]
        if waiting:
            time.sleep(0.005)


def collected(pid: int) -> bool:
    """Whether `pid` is gone: collected here now, or by its own parent."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not the agent's child (yet): gone, or its parent still lives
        return not os.path.exists(f"/proc/{pid}")
    return done == pid

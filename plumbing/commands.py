"""Running a shell command with bounded output, and stopping it and all it started.

The lesson calls `run_command(command, timeout, stopped)`; the read-only shell calls
`run_pipeline()`, which joins programs with pipes and no shell. How output is capped, how a
runaway command's whole process tree is ended, and how the agent keeps its key from the commands
it runs, lives here. psutil finds and ends the processes on Linux, macOS and Windows alike: by the
tag in their environment, by the command's session (POSIX), and by what was seen below the command
while it ran. Linux adds a subreaper and keeps the agent's memory from its commands (prctl);
Windows, a Job Object per command, which holds whatever the command starts.
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
from pathlib import Path

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
NOTE_PAUSE = 0.05  # seconds between two notes of what runs below a command
# What to install when the bash tool finds no shell, by OS
SHELL_TO_INSTALL = {"windows": "Git for Windows (its bash) or PowerShell", "macos": "bash",
                    "linux": "bash"}
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
    platform = platform or this_platform()
    try:
        return run_pipeline([platform.shell.argv(command)], timeout, stopped, output_limit, env,
                            platform)
    except FileNotFoundError:  # Windows with neither Git for Windows nor PowerShell, say
        raise ToolError(f"no shell to run the command: {platform.shell.program} was not found; "
                        f"install {SHELL_TO_INSTALL[platform.name]}, then start the agent "
                        "again") from None


def run_pipeline(stages: list, timeout: float, stopped: threading.Event,
                 output_limit: int = OUTPUT_LIMIT, env: dict | None = None,
                 platform: Platform | None = None) -> tuple[str, int]:
    """Run programs joined by pipes made here, each one's output the next one's input, so that
    no shell reads the words between them. A stage is an argument list (on Windows, where a
    program splits its own command line, the command line). Returns what the stages wrote to
    their error output and the last one to its output, and the last one's exit code."""
    # Output goes to a file, not a pipe: a job left running in the background cannot hang us.
    platform = platform or this_platform()
    if env is None:
        env = command_environment()
    tag = f"{agent_tag()}/{uuid.uuid4().hex}"
    guard_the_agent(platform)
    env = {**env, **output_in_utf8(platform), COMMAND_TAG: tag}
    with tempfile.TemporaryFile() as out:
        processes = start_stages(stages, out, env, platform)
        why_stopped = wait_or_stop(processes, out, timeout, stopped, output_limit, tag, platform)
        out.seek(0)
        output = decoded(out.read(output_limit), platform.output_encoding).rstrip()
    if why_stopped:
        raise ToolError(f"{why_stopped}. Output so far:\n{output}")
    return output, processes[-1].returncode


def start_stages(stages: list, out, env: dict, platform: Platform) -> list:
    """Start each stage with its input from the one before. Each in its own session (POSIX) or
    process group (Windows): the terminal's Ctrl-C reaches the agent only, which then ends the
    command's whole tree itself."""
    processes = []
    previous_output = subprocess.DEVNULL
    job = new_job(platform)
    try:
        for index, stage in enumerate(stages):
            last = index == len(stages) - 1
            process = subprocess.Popen(stage, stdin=previous_output,
                                       stdout=out if last else subprocess.PIPE, stderr=out,
                                       env=env, start_new_session=platform.new_session,
                                       creationflags=platform.new_process_group)
            if previous_output is not subprocess.DEVNULL:
                previous_output.close()  # the next stage's alone: when it ends, a write fails
            previous_output = process.stdout
            processes.append(process)
            join_job(job, process)
            remember_session(process, platform)
    except BaseException:
        if previous_output is not subprocess.DEVNULL:
            previous_output.close()
        end_command(processes, env[COMMAND_TAG], {})
        raise
    return processes


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


def wait_or_stop(processes: list, out, timeout: float, stopped: threading.Event,
                 output_limit: int, tag: str, platform: Platform) -> str:
    """Wait for a command. Stop it, and all it started, if it runs too long, writes too much,
    or Ctrl-C comes. Returns why it was stopped, or "" if it ended by itself. While it runs,
    what is below it is noted now and then: a process that leaves the tree and whose
    environment cannot be read (Apple's own programs on macOS) is still found."""
    deadline = time.monotonic() + timeout
    why_stopped = ""
    pause = 0.001  # short at first: most commands end within milliseconds
    seen = {}
    next_note = time.monotonic() + NOTE_PAUSE
    # A thread waits for the command, so the loop wakes the moment it ends, not at its next look.
    waiter = threading.Thread(target=wait_for_each, args=(processes,), daemon=True)
    waiter.start()
    try:
        while waiter.is_alive() and not why_stopped:
            if stopped.is_set():  # Ctrl-C, seen in any thread (v3 runs subagents in threads)
                raise KeyboardInterrupt
            waiter.join(pause)
            pause = min(pause * 2, LONGEST_PAUSE)  # then less often: a long wait costs no CPU
            if time.monotonic() > next_note:
                note_descendants(processes, seen)
                next_note = time.monotonic() + NOTE_PAUSE
            if time.monotonic() > deadline:
                why_stopped = f"timed out after {timeout:g} s and was stopped"
            elif os.fstat(out.fileno()).st_size > output_limit:
                why_stopped = f"stopped after writing more than {output_limit:,} bytes"
    finally:
        if any(process.poll() is None for process in processes):
            end_command(processes, tag, seen)
    return why_stopped


def wait_for_each(processes: list) -> None:
    for process in processes:
        process.wait()


def end_command(processes: list, tag: str, seen: dict) -> None:
    """Kill a running command and every process it started: those below it, and those that left
    its tree (setsid, nohup, a double fork) and still carry its tag, are in its session, or were
    seen below it while it ran."""
    sessions = [session_of(process) for process in processes]
    end_job(processes)
    end_processes(lambda: [*trees(processes), *tagged(tag), *in_sessions(sessions),
                           *seen.values()])
    for process in processes:
        process.wait()


def end_every_process_started() -> None:
    """On exit: end what the commands left running (a background job, a server): whatever is
    below the agent (on Linux, orphans came back to it), whatever carries its tag, and whatever
    is still in the session of a command it started (macOS, where some programs' environments
    cannot be read)."""
    sessions = remembered_sessions()
    end_processes(lambda: [*process_tree(os.getpid())[1:], *tagged(agent_tag() + "/"),
                           *in_sessions(sessions)])
    sessions_file().unlink(missing_ok=True)


# -- finding and ending processes (psutil: Linux, macOS, Windows) --
def end_processes(find) -> None:
    """Kill what `find()` returns, again until it returns nothing alive (a process may start
    another before it is killed), then collect them so none is left as a zombie."""
    killed = {}
    found = alive(find())
    # from the first look on: on a loaded machine that look alone can take longer than END_WAIT,
    # and what it found is killed all the same (else the command ran on, and its wait never ended)
    deadline = time.monotonic() + END_WAIT
    while found:
        for process in found:
            killed[process.pid] = process
            try:
                process.kill()
            except psutil.Error:  # it ended meanwhile
                pass
        if time.monotonic() >= deadline:
            break
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


def trees(processes: list) -> list:
    found = []
    for process in processes:
        found += process_tree(process.pid)
    return found


def note_descendants(processes: list, seen: dict) -> None:
    """Add the command's processes and what is below them now to `seen`: psutil's Process
    remembers its start time, so a later kill never reaches another process that got the id."""
    for process in trees(processes):
        seen.setdefault(process.pid, process)


def tagged(tag_start: str) -> list:
    """The processes whose COMMAND_TAG starts with `tag_start` (the environments of the user's
    own processes can be read, but not Apple's own programs' on macOS, psutil #2084; other
    users' are skipped)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(COMMAND_TAG, "").startswith(tag_start):
                found.append(process)
        except psutil.Error:  # ended meanwhile, or another user's
            pass
    return found


# -- sessions: POSIX start_new_session makes each command a session whose id is its process id;
# a process leaves it only by making a session of its own (setsid), whatever its environment --
def session_of(process: subprocess.Popen) -> tuple[int, float] | None:
    """The command's session: its process id and start time, or None where there is none."""
    if not hasattr(os, "getsid"):
        return None
    try:
        return process.pid, psutil.Process(process.pid).create_time()
    except psutil.Error:  # it ended and was collected already
        return None


def in_sessions(sessions: list) -> list:
    """The processes in these sessions, started after the session was. A session whose id is
    now another process's (it ended, and the id was given out again) is left alone."""
    started = {}
    for session in sessions:
        if session is None:
            continue
        leader, created = session
        try:
            if psutil.Process(leader).create_time() != created:
                continue
        except psutil.Error:  # the command ended: its session goes on while members remain
            pass
        started[leader] = created
    found = []
    for pid in psutil.pids() if started else []:
        try:
            session = os.getsid(pid)
            if session not in started:
                continue
            process = psutil.Process(pid)
            if process.create_time() >= started[session]:
                found.append(process)
        except (OSError, psutil.Error):  # ended meanwhile
            pass
    return found


def remember_session(process: subprocess.Popen, platform: Platform) -> None:
    """Where no subreaper adopts what a command leaves (macOS), note its session in a file of
    this agent's, so that the agent's exit ends what is still in it."""
    session = session_of(process) if platform.new_session and not platform.subreaper else None
    if session is None:
        return
    with open(sessions_file(), "a", encoding="ascii") as file:
        file.write(f"{session[0]} {session[1]!r}\n")


def remembered_sessions() -> list:
    try:
        lines = sessions_file().read_text(encoding="ascii").splitlines()
    except OSError:  # no command started a session
        return []
    return [(int(line.split()[0]), float(line.split()[1])) for line in lines]


def sessions_file() -> Path:
    return Path(tempfile.gettempdir(), f"agent-sessions-{agent_tag()}")


def agent_tag() -> str:
    """This agent: its process id and start time (an id alone may be a former agent's)."""
    return f"{os.getpid()}@{psutil.Process().create_time():.2f}"


# -- Windows: a Job Object per command holds every process it starts, whatever it does --
JOB_KILL_ON_CLOSE = 0x2000  # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE (winnt.h)
JOB_EXTENDED_LIMITS = 9  # JobObjectExtendedLimitInformation
SET_QUOTA_AND_TERMINATE = 0x0100 | 0x0001  # the rights AssignProcessToJobObject needs


class JobLimits(ctypes.Structure):
    """JOBOBJECT_EXTENDED_LIMIT_INFORMATION (winnt.h), its nested structures laid out flat."""
    _fields_ = [("per_process_user_time", ctypes.c_int64), ("per_job_user_time", ctypes.c_int64),
                ("limit_flags", ctypes.c_uint32), ("min_working_set", ctypes.c_size_t),
                ("max_working_set", ctypes.c_size_t), ("active_processes", ctypes.c_uint32),
                ("affinity", ctypes.c_size_t), ("priority_class", ctypes.c_uint32),
                ("scheduling_class", ctypes.c_uint32), ("io_counters", ctypes.c_uint64 * 6),
                ("process_memory", ctypes.c_size_t), ("job_memory", ctypes.c_size_t),
                ("peak_process_memory", ctypes.c_size_t), ("peak_job_memory", ctypes.c_size_t)]


@functools.cache
def kernel32():
    library = ctypes.WinDLL("kernel32")  # Windows only: new_job() asks platform.job_objects
    library.CreateJobObjectW.restype = library.OpenProcess.restype = ctypes.c_void_p
    library.OpenProcess.argtypes = [ctypes.c_uint32, ctypes.c_int, ctypes.c_uint32]
    library.SetInformationJobObject.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                                ctypes.c_uint32]
    library.AssignProcessToJobObject.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    library.TerminateJobObject.argtypes = [ctypes.c_void_p, ctypes.c_uint]
    library.CloseHandle.argtypes = [ctypes.c_void_p]
    return library


def new_job(platform: Platform) -> int | None:
    """Windows: a Job Object for one command. Whatever its processes start joins it, a detached
    process with an environment of its own too, and stays in it after its parent ends, so
    end_job() ends them all. Its handle is never closed here: when the agent ends, however it
    ends, Windows closes it, and KILL_ON_JOB_CLOSE ends what the command left running. None
    where there is none: the tag and what was seen below the command still find the rest."""
    if not platform.job_objects:
        return None
    job = kernel32().CreateJobObjectW(None, None)
    limits = JobLimits(limit_flags=JOB_KILL_ON_CLOSE)
    if job and kernel32().SetInformationJobObject(job, JOB_EXTENDED_LIMITS, ctypes.byref(limits),
                                                  ctypes.sizeof(limits)):
        return job
    return None


def join_job(job: int | None, process: subprocess.Popen) -> None:
    """Put a process just started into the command's job (it may refuse: then psutil's ways)."""
    process.job = None
    handle = kernel32().OpenProcess(SET_QUOTA_AND_TERMINATE, False, process.pid) if job else None
    if handle:
        if kernel32().AssignProcessToJobObject(job, handle):
            process.job = job
        kernel32().CloseHandle(handle)


def end_job(processes: list) -> None:
    for job in {getattr(process, "job", None) for process in processes} - {None}:
        kernel32().TerminateJobObject(job, 1)


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

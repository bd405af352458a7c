"""Running a shell command with bounded output, and stopping it and all it started.

The lesson calls `run_command(command, timeout, stopped)`. How output is capped, and how a
runaway process group is killed, lives here.
"""

import os
import re
import signal
import subprocess
import tempfile
import threading
import time

from plumbing.checks import ToolError

OUTPUT_LIMIT = 10_000_000  # bytes a command may write before it is stopped as a runaway
CREDENTIALS = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"]  # never passed to a command

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
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env=env)
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
    try:
        while proc.poll() is None and not why_stopped:
            if stopped.is_set():  # Ctrl-C, seen in any thread (v3 runs subagents in threads)
                raise KeyboardInterrupt
            time.sleep(0.001)  # short: most commands end within milliseconds
            if time.monotonic() > deadline:
                why_stopped = f"timed out after {timeout:g} s and was stopped"
            elif os.fstat(out.fileno()).st_size > output_limit:
                why_stopped = f"stopped after writing more than {output_limit:,} bytes"
    finally:
        if proc.poll() is None:
            kill_process_group(proc)
    return why_stopped


def kill_process_group(proc: subprocess.Popen) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:  # it ended meanwhile
        pass
    proc.wait()

"""What the tests share to drive the version scripts: each test gets a fresh module, pointed at
the scripted server (scripted/loading.py loads it; the benchmarks use that module alone, since
this one needs pytest), and runs it in-process or as a program.
"""

import contextlib
import functools
import io
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import pytest

from plumbing.platforms import this_platform
from scripted import ROOT, SCRIPTS
from scripted.loading import VERSIONS, load_agent, load_script  # noqa: F401 (for the tests)

# The smallest real tool, for requests that tests send the scripted server by hand.
BASH_TOOL = {
    "name": "bash",
    "description": "Run a shell command.",
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
}


def once(version: str = "v1"):
    """Mark a test of a plumbing behaviour. The plumbing is one package, the same code in every
    version, so the test runs once, through the first version that has it; a lesson behaviour
    runs in every version that has it instead."""
    return pytest.mark.parametrize("version", [version])


def versions_from(first: str) -> list[str]:
    """The versions that have a mechanism introduced in `first` (v2 and later have todos, ...)."""
    return [version for version in VERSIONS if version >= first]


def run_script(version: str, *args: str, **options) -> subprocess.CompletedProcess:
    """Run a version script as a user would, in a subprocess; returns its exit code and output."""
    return run_file(ROOT / SCRIPTS[version], *args, **options)


def run_file(
    path: Path,
    *args: str,
    env: dict | None = None,
    cwd: Path | None = None,
    input_text: str = "",
    timeout: float = 60,
) -> subprocess.CompletedProcess:
    """Run any script file the same way (see run_script)."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    full_env = {key: value for key, value in full_env.items() if value is not None}
    return subprocess.run(
        [sys.executable, str(path), *args],
        capture_output=True,
        input=input_text,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=timeout,
    )


def run_in_process(
    path: Path, *args: str, env: dict | None = None, cwd: Path | None = None, input_text: str = ""
) -> subprocess.CompletedProcess:
    """Run a script's main() as run_file would, but in this process: no second `import anthropic`.

    The same arguments and the same result. The environment, the working folder, sys.argv and
    the standard streams are set for the run and restored after it; a SystemExit or an uncaught
    exception ends it with the exit code and stderr text the interpreter would give.
    """
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        os.environ.update({"NO_COLOR": "1"})
        for name, value in (env or {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = [str(path), *args]
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            returncode = run_main(path, input_text)
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)  # also takes back what the script's load_dotenv() copied in
    return subprocess.CompletedProcess(sys.argv, returncode, stdout.getvalue(), stderr.getvalue())


def run_main(path: Path, input_text: str) -> int:
    """Load the script (its top level reads the environment); run main() on input_text."""
    saved_stdin, sys.stdin = sys.stdin, io.StringIO(input_text)
    try:
        return load_script(path).main()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except Exception:  # noqa: BLE001 - what the interpreter prints for an uncaught exception
        traceback.print_exc()
        return 1
    finally:
        sys.stdin = saved_stdin


def system_text(body: dict) -> str:
    """A request's system prompt as text: a string, or (v5 on) text blocks, the last one marked
    as a cache breakpoint."""
    system = body.get("system") or ""
    if isinstance(system, str):
        return system
    return "".join(block["text"] for block in system)


def results_sent(api) -> list[dict]:
    """What the model got back last: the content of the last request's last user message."""
    return api.requests[-1].body["messages"][-1]["content"]


def call_tool(api, agent, name: str, tool_input, **flags) -> dict:
    """Let the scripted model call one tool; return the tool_result it gets back."""
    api.play(
        {
            "turns": [
                {"tool_calls": [{"name": name, "input": tool_input, **flags}]},
                {"text": "done"},
            ]
        }
    )
    assert agent.run_turn([], "go") == 0
    (result,) = results_sent(api)
    assert result["type"] == "tool_result"
    return result


def git_repository_with_one_commit(folder: Path) -> None:
    """A git repository in folder with a.txt ("alpha") committed, whatever the user's git config."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    (folder / "a.txt").write_bytes(b"alpha\n")  # write_text: alpha\r\n on Windows
    for command in (
        ["git", "init", "-q"],
        ["git", "add", "a.txt"],
        ["git", "commit", "-qm", "one"],
    ):
        subprocess.run(command, cwd=folder, env=env, check=True)


@functools.cache
def shell_missing() -> str:
    """Why the bash tool's shell runs no command here, or "" if it does: under Wine (the opt-in
    check on a real Windows CPython) there is no bash, and its PowerShell runs nothing."""
    shell = this_platform().shell
    try:
        done = subprocess.run(shell.argv("echo ok"), capture_output=True, timeout=60, check=False)
    except OSError as error:
        return f"the bash tool's shell ({shell.program}) does not start here: {error}"
    if done.stdout.strip() != b"ok":
        return f"the bash tool's shell ({shell.program}) runs no command here"
    return ""


def python_command(code: str) -> str:
    """A command line for the bash tool's shell that runs `code` with this Python, named by its
    path: Windows has no python3, Debian no python, outside a virtual environment."""
    shell = this_platform().shell
    command = f"{shell.quoted(sys.executable)} -c {shell.quoted(code)}"
    if shell.name == "PowerShell":
        return "& " + command  # a quoted program name is a string to PowerShell, & runs it
    return command


def symlink_or_skip(link: Path, target: Path | str, target_is_directory: bool = False) -> None:
    """Make a symbolic link, or skip the test where none can be made: Windows without the
    privilege (Developer Mode off: WinError 1314), or Wine, whose links report success and make
    nothing. A test of links then skips, saying why; it never passes without a link."""
    try:
        os.symlink(target, link, target_is_directory=target_is_directory)
    except OSError as error:
        if getattr(error, "winerror", None) != 1314:
            raise
        pytest.skip("no symbolic link here: Windows grants the privilege to make one to "
                    "administrators, or to all with Developer Mode on (WinError 1314)")
    if not os.path.islink(link):
        pytest.skip("no symbolic link here: making one reported success and made nothing (Wine)")


@contextlib.contextmanager
def fifo_at(path: Path):
    """A FIFO at `path`. Code that opened it as a file would wait for the other end forever;
    after 5 s a helper opens and closes the other end, so such code fails instead of hanging."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs a FIFO (os.mkfifo): Windows has none")
    os.mkfifo(path)
    done = threading.Event()

    def release_a_blocked_open():
        if not done.wait(5):
            os.close(os.open(path, os.O_RDWR | os.O_NONBLOCK))

    helper = threading.Thread(target=release_a_blocked_open, daemon=True)
    helper.start()
    try:
        yield path
    finally:
        done.set()
        helper.join()


def press_ctrl_c_once(condition) -> None:
    """From another thread, as soon as condition() holds: Ctrl-C, as the terminal sends it."""

    def wait_then_press():
        deadline = time.monotonic() + 20
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.01)
        main_thread_waits(deadline)  # in what it does next: reading, sleeping
        press_ctrl_c()

    threading.Thread(target=wait_then_press, daemon=True).start()


def main_thread_waits(deadline: float) -> None:
    """Return once the main thread is held up: at the same point of the same frame in two looks
    a few milliseconds apart (a read, a wait, a sleep), or at the deadline."""
    main = threading.main_thread().ident

    def where():
        frame = sys._current_frames().get(main)
        return frame and (frame.f_code, frame.f_lasti, id(frame))

    seen = where()
    while time.monotonic() < deadline:
        time.sleep(0.005)
        now = where()
        if now == seen:
            return
        seen = now


def press_ctrl_c() -> None:
    """SIGINT to the main thread itself, as a terminal's Ctrl-C reaches a program. Sent to the
    process, the kernel may hand it to another thread (the scripted server's), and then a main
    thread blocked reading a socket is not woken: Python's handler runs only once data arrives."""
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

"""Python programs that write to files (the docs build's demos and benchmarks), started from an
interpreter that has imported the SDK already.

Each program is a Python process of its own, as `python PROGRAM ARGS` makes one: its own
environment, working folder, sys.argv, sys.path and output file. But `import anthropic` alone
costs seconds of CPU, and the docs build starts eight such programs. On Linux a fork server
(multiprocessing's "forkserver") imports the SDK once, and each program runs in a process forked
from it; elsewhere (macOS, Windows) each is a new interpreter, as before. Only third-party
packages are imported ahead: the project's own modules load in the program's process, after its
environment is set, as they would in a new interpreter.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import runpy
import subprocess
import sys
import traceback
from pathlib import Path

from scripted import ROOT

AHEAD = ["anthropic", "dotenv", "mcp"]  # what the programs import first, and takes longest


class WarmPython:
    """`python ARGS` for programs that print to files. Inside `with WarmPython() as python:` on
    Linux, a fork server that imported AHEAD starts them; otherwise (or after the block) each is
    a new interpreter. Leaving the block stops the server."""

    def __init__(self, ahead: list[str] = AHEAD) -> None:
        self.ahead = ahead
        self.context = None

    def __enter__(self) -> WarmPython:
        if not sys.platform.startswith("linux"):  # macOS's system libraries may not survive
            return self  # a fork; Windows has none: a new interpreter for each, as before
        from multiprocessing import forkserver  # not on Windows

        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(self.ahead)
        # The server imports this module for each program: from the project's root, wherever
        # the build was started (it starts with this environment, before any program runs).
        saved = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), saved]))
        try:
            forkserver.ensure_running()
        finally:
            if saved is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = saved
        return self

    def __exit__(self, *exc_info) -> None:
        if self.context is None:
            return
        self.context = None
        from multiprocessing import forkserver  # not on Windows

        stop = getattr(forkserver._forkserver, "_stop", None)  # as CPython's own tests stop it
        if stop is not None:
            stop()  # and wait for it: no process is left behind, its CPU time is counted

    def run(self, args: list[str], env: dict, output: Path, cwd: Path | None = None,
            timeout: float | None = None, errors: Path | None = None) -> int:
        """`python ARGS` (a script and its arguments, or -c CODE), its stdout appended to output
        and its stderr to errors (to output too if None); its exit code. A program still running
        after timeout seconds is killed."""
        if self.context is None:
            with open(output, "a") as out, open(errors or output, "a") as err:
                return subprocess.run([sys.executable, *args], env=env, cwd=cwd, stdout=out,
                                      stderr=err, timeout=timeout).returncode
        process = self.context.Process(target=as_a_program, args=(args, env, cwd, output, errors))
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired(args, timeout)
        return process.exitcode


def as_a_program(args: list[str], env: dict, cwd: Path | None, output: Path,
                 errors: Path | None) -> None:
    """In the forked process: what the interpreter sets up for `python ARGS`, then the program.
    Its exit code is the process's, as SystemExit and an uncaught exception give it."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    os.dup2(os.open(output, flags), 1)
    os.dup2(os.open(errors or output, flags), 2)
    os.environ.clear()
    os.environ.update(env)
    if cwd is not None:
        os.chdir(cwd)
    sys.stdout = text_stream(1, env, "strict", line_buffering=False)
    sys.stderr = text_stream(2, env, "backslashreplace", line_buffering=True)
    if str(ROOT) in sys.path and str(ROOT) not in env.get("PYTHONPATH", "").split(os.pathsep):
        sys.path.remove(str(ROOT))  # the server's, not the program's (see __enter__)
    code = 0
    try:
        if args[0] == "-c":
            sys.argv = ["-c", *args[2:]]
            sys.path[0] = ""
            exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102
        else:
            sys.argv = list(args)
            sys.path[0] = str(Path(args[0]).resolve().parent)
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:  # noqa: BLE001 - printed as the interpreter prints it
        program = "<string>" if args[0] == "-c" else args[0]
        frames = exc.__traceback__  # from the program's first frame: runpy's and ours left out
        while frames is not None and frames.tb_frame.f_code.co_filename != program:
            frames = frames.tb_next
        sys.stdout.flush()  # as the interpreter does before it prints the traceback
        traceback.print_exception(type(exc), exc, frames or exc.__traceback__)
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    sys.exit(code)


def text_stream(fd: int, env: dict, errors: str, line_buffering: bool) -> io.TextIOWrapper:
    """A standard stream on a file, as a new interpreter opens it with this environment:
    PYTHONIOENCODING's encoding (else the locale's), and PYTHONUNBUFFERED's write-through."""
    encoding = env.get("PYTHONIOENCODING", "").split(":")[0] or None
    raw = io.FileIO(fd, "w", closefd=False)
    if env.get("PYTHONUNBUFFERED"):
        return io.TextIOWrapper(raw, encoding=encoding, errors=errors, write_through=True)
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding=encoding, errors=errors,
                            line_buffering=line_buffering)

"""Which script the shared `agent` fixtures load in tests/: each version script in turn. The
scripted API server and the `agent` fixtures themselves live in the root conftest.py and
scripted/pytest_plugin.py."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import sys
from pathlib import Path

import pytest

from plumbing.commands import sessions_file
from tests.agents import ROOT, SCRIPTS, VERSIONS

# -- the version scripts --
# Shared behaviour is tested once, parametrized over every version script that has it.


@pytest.fixture(params=VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def script_path(version: str) -> Path:
    return ROOT / SCRIPTS[version]


@pytest.fixture
def ctrl_c_raises():
    """Python leaves SIGINT ignored if it started so, as under a shell script's `pytest &`."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(autouse=True, scope="session")
def no_sessions_file_left():
    """A command run down macOS's branch notes its session in a file of the agent's, which the
    agent's exit removes; here the agent is the test process, so the test run removes it."""
    yield
    sessions_file().unlink(missing_ok=True)


@pytest.fixture(autouse=True)
def no_loop_marked_running(request: pytest.FixtureRequest):
    """A test worker that drove Chromium (test_browser.py, test_layout.py) keeps Playwright's
    event loop marked as running in its main thread, where asyncio.run() then refuses to start
    (prompt_toolkit's prompt, the MCP tests): for every test but the browser's own the mark is
    lifted, as in the agent, which has no such loop."""
    if "browser" in request.fixturenames:
        yield
        return
    running = asyncio._get_running_loop()
    asyncio._set_running_loop(None)
    yield
    asyncio._set_running_loop(running)


@pytest.fixture
def help_shown(capsys):
    """What a command's `main(["--help"])` prints, on one line whatever the terminal's width; the
    command must exit with 0."""
    def shown(main) -> str:
        with pytest.raises(SystemExit) as helped:
            main(["--help"])
        assert helped.value.code == 0
        return " ".join(capsys.readouterr().out.split())
    return shown


class PipedStdout:
    """stdout as it is on a pipe (`... | tee log`): print() keeps lines back until its buffer
    fills, while a child process, writing to the same file, is there at once. sys.stdout is it
    inside `with piped_stdout:` (pytest sets its own before each test's body runs)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = open(path, "wb")
        self.stdout = io.TextIOWrapper(self.file, encoding="utf-8")

    def __enter__(self) -> PipedStdout:
        self.saved, sys.stdout = sys.stdout, self.stdout
        return self

    def __exit__(self, *exc_info) -> None:
        sys.stdout = self.saved  # what print() holds stays held: lines() shows what went out

    def child_writes(self, line: str) -> None:
        os.write(self.file.fileno(), line.encode())

    def lines(self) -> list[str]:
        """What has reached the pipe so far, without what print() still holds back."""
        return self.path.read_text(encoding="utf-8").splitlines()


@pytest.fixture
def piped_stdout(tmp_path):
    piped = PipedStdout(tmp_path / "piped.txt")
    yield piped
    piped.stdout.close()

"""Fixtures shared by tests/ and workshop/.

`scripted_api` (the scripted Messages API server) comes from scripted/pytest_plugin.py. `agent` and
`make_agent` load the script under test as a fresh module; which script that is, each folder's
conftest.py says with a `script_path` fixture: a version script in tests/, an attendee's solution
(or the reference) in workshop/.
"""

import os
import re

import pytest

from tests.agents import load_script

pytest_plugins = [
    "scripted.pytest_plugin",
    "pytester",  # the workshop runs its checks in-process
    "tests.site",  # the docs site, built once per run, and served
]


@pytest.fixture
def make_agent(script_path, scripted_api, tmp_path, monkeypatch):
    """Load a fresh copy of the script under test, working in tmp_path, with extra environment
    set."""
    monkeypatch.chdir(tmp_path)

    def make(**env):
        for name, value in env.items():
            monkeypatch.setenv(name, str(value))
        return load_script(script_path)

    return make


@pytest.fixture
def agent(make_agent):
    return make_agent()


@pytest.hookimpl(optionalhook=True)  # runs without xdist too, as the workshop's inner runs do
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: two workers per core. Most tests wait (on a subprocess, the scripted server's
    latency, a pseudo-terminal), so a core has time for a second worker meanwhile."""
    return 2 * (os.cpu_count() or 1)


BROWSER_TESTS = ("tests/test_browser.py", "tests/test_layout.py")
LITELLM_TESTS = "tests/test_litellm.py"
# an exercise's runs in tests/test_workshop.py share one pytest session of its checks
WORKSHOP_RUNS = re.compile(
    r"tests/test_workshop\.py::test_(?:the_untouched|each_wrong|each_other)\w*\[(\d\d)-"
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist, the browser tests all run in one worker, with one Chromium: its cache
    then keeps the site's scripts compiled from one page to the next. Spread over four workers,
    the same tests took a third more CPU (four browsers, each compiling mermaid again). Every
    other test is a unit of its own; the largest unit (the browser's) is handed out first, and
    waits there for the docs build that started with the run. The runs of one workshop exercise
    go to one worker too: they share one pytest session of the exercise's checks."""
    from xdist.scheduler import LoadScopeScheduling

    class BrowserTestsTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(LITELLM_TESTS):  # one LiteLLM proxy (seconds to start) for all
                return "the LiteLLM proxy"
            if exercise := WORKSHOP_RUNS.match(nodeid):
                return f"the runs of exercise {exercise[1]}"
            return "the browser" if nodeid.startswith(BROWSER_TESTS) else nodeid

    return BrowserTestsTogether(config, log)

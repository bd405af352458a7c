"""The scripted API as a pytest plugin: the fixtures that tests/ and workshop/ share.

One loopback server for the whole session stands in for Claude. The real `anthropic` SDK talks to
it over HTTP, so the agent code under test runs unchanged; each test plays its own scenario and is
failed if the agent broke an API rule or the scenario did not go as scripted. The root conftest.py
loads this module with `pytest_plugins = ["scripted.pytest_plugin"]`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from scripted.server import ScriptedAPI

def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "allow_violations: the test provokes API violations or scenario problems"
    )
    config.addinivalue_line(
        "markers", "allow_leftover_turns: the test may leave scripted turns unplayed"
    )


@pytest.fixture(scope="session", autouse=True)
def _scripted_server() -> Iterator[ScriptedAPI]:
    """Start the server and point every SDK client created during the session at it."""
    api = ScriptedAPI()
    env = api.client_env("test-key-scripted")
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    yield api
    api.stop()
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def scripted_api(
    _scripted_server: ScriptedAPI, request: pytest.FixtureRequest
) -> Iterator[ScriptedAPI]:
    """The session's server with an empty script; call `play()` to give it turns."""
    api = _scripted_server
    api.play({"turns": []})
    yield api
    failures = []
    if not request.node.get_closest_marker("allow_violations"):
        failures += [f"API violation by the agent: {violation}" for violation in api.violations]
        failures += [f"scenario problem: {problem}" for problem in api.problems]
    if api.remaining() and not request.node.get_closest_marker("allow_leftover_turns"):
        failures.append(f"{api.remaining()} scripted turn(s) were never played")
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)

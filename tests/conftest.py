"""Fixtures for the version scripts. The scripted API server (`scripted_api`) comes from
scripted/pytest_plugin.py, which the root conftest.py loads for tests/ and workshop/ alike."""

from __future__ import annotations

import pytest

from scripted.server import ScriptedAPI
from tests.agents import VERSIONS, load_agent

# -- the version scripts --
# Shared behaviour is tested once, parametrized over every version script that has it.

@pytest.fixture(params=VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_agent(version: str, scripted_api: ScriptedAPI, tmp_path, monkeypatch):
    """Load a fresh copy of the version script, working in tmp_path, with extra environment set."""
    monkeypatch.chdir(tmp_path)

    def make(**env):
        for name, value in env.items():
            monkeypatch.setenv(name, str(value))
        return load_agent(version)
    return make


@pytest.fixture
def agent(make_agent):
    return make_agent()

"""Loading the version scripts for tests: each test gets a fresh module, pointed at the scripted server.

The scripts are meant to be run, not imported, so there is no package to import them from. Loading
one from its path runs its top level again, which re-reads the environment (limits such as
BASH_TIMEOUT) and makes a new `anthropic.Anthropic()` client aimed at ANTHROPIC_BASE_URL.
"""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from scripted import ROOT, SCRIPTS

VERSIONS = [version for version, name in SCRIPTS.items() if (ROOT / name).exists()]


def load_agent(version: str) -> ModuleType:
    return load_script(ROOT / SCRIPTS[version], f"agent_{version}")


def load_script(path: Path, name: str = "") -> ModuleType:
    """A fresh module from any script file: a version script, or a workshop solution built on one."""
    spec = importlib.util.spec_from_file_location(name or f"agent_{Path(path).stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def versions_from(first: str) -> list[str]:
    """The versions that have a mechanism introduced in `first` (v2 and later have todos, ...)."""
    return [version for version in VERSIONS if version >= first]


def run_script(version: str, *args: str, **options) -> subprocess.CompletedProcess:
    """Run a version script as a user would, in a subprocess; returns its exit code and output."""
    return run_file(ROOT / SCRIPTS[version], *args, **options)


def run_file(path: Path, *args: str, env: dict | None = None, cwd: Path | None = None,
             input_text: str = "", timeout: float = 60) -> subprocess.CompletedProcess:
    """Run any script file the same way (see run_script)."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    full_env = {key: value for key, value in full_env.items() if value is not None}
    return subprocess.run([sys.executable, str(path), *args], capture_output=True,
                          input=input_text, text=True, env=full_env, cwd=cwd, timeout=timeout)


def results_sent(api) -> list[dict]:
    """What the model got back last: the content of the last request's last user message."""
    return api.requests[-1].body["messages"][-1]["content"]


def call_tool(api, agent, name: str, tool_input, **flags) -> dict:
    """Let the scripted model call one tool; return the tool_result it gets back."""
    api.play({"turns": [{"tool_calls": [{"name": name, "input": tool_input, **flags}]}, {"text": "done"}]})
    assert agent.run_turn([], "go") == 0
    (result,) = results_sent(api)
    assert result["type"] == "tool_result"
    return result

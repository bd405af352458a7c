"""plumbing/mcp.py in-process, without starting a server: the question before a work folder's
.mcp.json is trusted (at a terminal, played by a stdin that says it is one), the answers
remembered, the settings file's entries that cannot be used, and the few words a failure is
told in. tests/test_mcp.py reaches these through the agent, with real servers, where it can;
its tests at a pseudo-terminal are left out of the mcp target (seconds per mutant)."""

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from plumbing.mcp import (
    NOT_A_SERVER,
    ServerSpec,
    describe,
    kill_left_over,
    list_all_tools,
    read_servers,
    read_trusted,
    remember_trust,
    server_environment,
    start_failure,
    still_running,
    trust_fingerprint,
    user_trusts,
    what_went_wrong,
)
from plumbing.screen import Screen

FLAG = "--trust-project-mcp"


class Terminal(io.StringIO):
    """The user at a terminal: stdin says it is one, and holds what they type."""

    def isatty(self) -> bool:
        return True


def mcp_json(folder: Path, servers: dict) -> tuple[Path, list[ServerSpec]]:
    path = folder / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    specs, problems = read_servers(path, {})
    assert problems == []
    return path, specs


TWO = {"docs": {"command": "python3", "args": ["-m", "docs"]}, "git": {"command": "uvx"}}


@pytest.mark.parametrize("typed", ["y\n", "yes\n", " YES \n"])
def test_at_a_terminal_a_yes_trusts_the_file_and_is_remembered_for_it(
        tmp_path, monkeypatch, capsys, typed):
    path, specs = mcp_json(tmp_path, TWO)
    store = tmp_path / "home" / "trusted.json"
    monkeypatch.setattr(sys, "stdin", Terminal(typed))
    assert user_trusts(path, specs, Screen(), FLAG, str(store)) is True
    shown = capsys.readouterr().out
    assert f"{path} starts these programs as MCP servers:\n  docs: python3 -m docs\n  git: uvx\n" \
           "Trust this file and start them? [y/N] " in shown
    assert read_trusted(store, Screen()) == {str(path.resolve()): trust_fingerprint(path, specs)}


@pytest.mark.parametrize("typed", ["n\n", "\n", "yy\n", ""])  # "": the input ended (EOF)
def test_at_a_terminal_anything_but_yes_leaves_the_file_unused_and_says_how_to_use_it(
        tmp_path, monkeypatch, capsys, typed):
    path, specs = mcp_json(tmp_path, TWO)
    store = tmp_path / "trusted.json"
    monkeypatch.setattr(sys, "stdin", Terminal(typed))
    assert user_trusts(path, specs, Screen(), FLAG, str(store)) is False
    assert f"[{path} not used; {FLAG} uses it without asking]" in capsys.readouterr().out
    assert not store.exists()


def test_a_yes_is_not_remembered_where_remembering_is_off(tmp_path, monkeypatch):
    path, specs = mcp_json(tmp_path, TWO)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert user_trusts(path, specs, Screen(), FLAG, "off") is True
    assert sorted(entry.name for entry in tmp_path.iterdir()) == [".mcp.json"]


def test_without_a_terminal_every_server_of_the_file_is_named(tmp_path, monkeypatch, capsys):
    path, specs = mcp_json(tmp_path, TWO)
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    assert user_trusts(path, specs, Screen(), FLAG) is False
    assert (f"[{path} names MCP servers (docs, git) but was not used: no terminal to ask whether "
            f"to trust it; {FLAG} does]") in capsys.readouterr().err


def test_a_file_without_servers_is_not_asked_about(tmp_path, monkeypatch, capsys):
    path, specs = mcp_json(tmp_path, {})
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert user_trusts(path, specs, Screen(), FLAG) is False
    assert capsys.readouterr() == ("", "")


def test_a_long_command_line_is_cut_in_the_question():
    spec = ServerSpec("docs", "python3", ["-m", "docs", "x" * 200], {}, Path("."))
    described = describe(spec)
    assert len(described) == 120 and described.startswith("python3 -m docs xxx")
    assert described.endswith("…")


def test_an_answer_that_cannot_be_remembered_is_one_line_and_asked_again_later(tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    store = tmp_path / "a-file" / "trusted.json"  # its folder is a file
    remember_trust(store, tmp_path / ".mcp.json", "f1", Screen())
    assert capsys.readouterr().out.strip() == (
        f"[could not remember the answer in {store} (File exists): it is asked again next "
        "time]")


def test_remembering_a_second_file_keeps_the_first_and_a_changed_file_replaces_its_own(
        tmp_path):
    store = tmp_path / "trusted.json"
    first, second = tmp_path / "a" / ".mcp.json", tmp_path / "b" / ".mcp.json"
    for path, fingerprint in [(first, "f1"), (second, "f2"), (first, "f3")]:
        remember_trust(store, path, fingerprint, Screen())
    assert read_trusted(store, Screen()) == {str(first.resolve()): "f3",
                                             str(second.resolve()): "f2"}
    assert not (tmp_path / "trusted.json.partial").exists()


@pytest.mark.parametrize(("text", "why"), [
    ('{"trusted": []}', "TypeError: 'trusted' is not an object"),
    ('{"other": {}}', "KeyError: 'trusted'"),
])
def test_a_store_of_another_shape_is_one_line_and_remembers_nothing(tmp_path, capsys, text, why):
    store = tmp_path / "trusted.json"
    store.write_text(text, encoding="utf-8")
    assert read_trusted(store, Screen()) == {}
    assert capsys.readouterr().out.strip() == (
        f"[{store} cannot be read ({why}): no earlier yes to a .mcp.json is used]")


# -- the settings file's entries --
@pytest.mark.parametrize(("entry", "problem"), [
    ("python3", "its entry is not an object"),
    ({"command": "  "}, 'it has no "command" (the program that runs the server)'),
    ({"command": "python3", "args": "-m docs"}, '"args" must be a list of strings'),
    ({"command": "python3", "args": ["-m", 3]}, '"args" must be a list of strings'),
    ({"command": "python3", "env": ["A=1"]}, '"env" must be an object of strings'),
    ({"command": "python3", "env": {"A": 1}}, '"env" must be an object of strings'),
    ({"type": "sse", "command": "python3"}, "only stdio servers (a command to run) are "
                                            "supported here, not http or sse"),
    ({"command": "python3", "url": "https://example.com"}, "only stdio servers (a command to "
                                                           "run) are supported here, not http "
                                                           "or sse"),
])
def test_each_entry_that_cannot_be_used_says_why_and_the_rest_are_kept(tmp_path, entry, problem):
    path = tmp_path / ".mcp.json"
    good = {"command": "python3", "type": "stdio", "args": [], "env": {"A": "1"}}
    path.write_text(json.dumps({"mcpServers": {"bad": entry, "good": good}}), encoding="utf-8")
    specs, problems = read_servers(path, {})
    assert [(spec.name, spec.command, spec.env, spec.cwd) for spec in specs] == [
        ("good", "python3", {"A": "1"}, tmp_path.resolve())]
    assert problems == [f"mcp server 'bad' in {path} skipped: {problem}"]


def test_a_name_of_41_characters_is_refused_and_one_of_40_taken(tmp_path):
    path = tmp_path / ".mcp.json"
    names = {"a" * 40: {"command": "x"}, "b" * 41: {"command": "x"}}
    path.write_text(json.dumps({"mcpServers": names}), encoding="utf-8")
    specs, problems = read_servers(path, {})
    assert [spec.name for spec in specs] == ["a" * 40]
    assert problems == [f"mcp server '{'b' * 39}…' in {path} skipped: its name must be 1-40 "
                        "letters, digits, _ or - (it becomes part of tool names)"]


@pytest.mark.parametrize("content", [b"\xff\xfe{}", None])  # not UTF-8; a folder
def test_a_settings_file_that_cannot_be_read_names_the_file(tmp_path, content):
    path = tmp_path / "servers.json"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(Exception) as failed:
        read_servers(path, {})
    assert str(failed.value).startswith(f"cannot read {path}: ")


# -- a failure, in a few words --
def test_a_failure_is_the_first_error_of_its_group_on_one_line_within_200_characters():
    group = ExceptionGroup("tasks", [ExceptionGroup("inner", [ValueError("bad\n  value")]),
                                     KeyError("later")])
    assert what_went_wrong(group) == "bad value"
    assert what_went_wrong(ExceptionGroup("tasks", [TimeoutError()])) == "TimeoutError"
    long = what_went_wrong(RuntimeError("x" * 300))
    assert len(long) == 200 and long.endswith("…")


def test_why_a_server_did_not_start_in_a_few_words():
    assert start_failure(ExceptionGroup("g", [OSError("Connection closed")])) == NOT_A_SERVER
    assert start_failure(ExceptionGroup("g", [RuntimeError("boom")])) == \
        "failed to start (boom)"


def test_a_server_gets_its_own_env_and_the_agents_python_first_on_the_path(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin")
    python_folder = str(Path(sys.executable).parent)
    assert server_environment({"TOKEN": "t"}) == {
        "PATH": f"{python_folder}{os.pathsep}/usr/bin", "TOKEN": "t"}
    assert server_environment({"PATH": "/opt/bin"}) == {"PATH": "/opt/bin"}


# -- the servers' processes --
@pytest.mark.skipif(os.name != "posix", reason="runs sh and sleep")
def test_a_server_left_running_is_killed_with_what_it_started_and_an_ended_one_is_skipped():
    server = subprocess.Popen(["sh", "-c", "sleep 300 & echo $!; exec sleep 301"],
                              stdout=subprocess.PIPE, text=True)
    child = int(server.stdout.readline())
    started = psutil.Process(child)  # the server's own child, which the agent did not start
    ended = subprocess.Popen(["true"])
    ended.wait()
    try:
        processes = still_running({server.pid, ended.pid})
        assert [process.pid for process in processes] == [server.pid]
        kill_left_over(processes)
        assert not psutil.pid_exists(server.pid)  # killed, and collected by the wait after it
        _, alive = psutil.wait_procs([started], timeout=10)  # a SIGKILL lands a moment later
        assert [process for process in alive if process.status() != "zombie"] == []
    finally:
        for pid in (server.pid, child):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        server.stdout.close()


class EndlessPages:
    """A server whose tools/list always names a next page: what each request asked for."""

    def __init__(self):
        self.cursors = []

    async def list_tools(self, params=None):
        from mcp import types as mcp_types

        self.cursors.append(params.cursor if params else None)
        page = len(self.cursors)
        tool = mcp_types.Tool(name=f"t{page}", inputSchema={"type": "object"})
        return mcp_types.ListToolsResult(tools=[tool], nextCursor=f"after-{page}")


def test_a_tool_list_that_never_ends_is_read_for_twenty_pages_each_from_the_last_cursor():
    session = EndlessPages()
    tools = asyncio.run(list_all_tools(session))
    assert [tool.name for tool in tools] == [f"t{n}" for n in range(1, 21)]
    assert session.cursors == [None] + [f"after-{n}" for n in range(1, 20)]

"""MCP in v6: servers from a .mcp.json file, their tools offered to the model, each answer held to
the budget, and every way a server can fail. Seen from the model's side (the requests the
scripted model got) and from the user's (the screen).

Three kinds of server: the project's own (mcp_servers/docs_search.py, the gistdex case), one no
one here wrote (mcp-server-git from the package index), and small fixtures under
tests/mcp_servers/ that go wrong on request. A server that takes seconds to start is started
once per module and lent to each test's fresh agent (`agent.SERVERS`); a fixture starts at once,
so each test starts its own through the agent's own start-up path.
"""

import base64
import json
import os
import sys
import uuid
from pathlib import Path

import psutil
import pytest

from mcp_servers.docs_search import answer as docs_answer
from mcp_servers.docs_search import answer_sizes
from plumbing.mcp import (
    McpServers,
    ServerSpec,
    read_servers,
    remember_trust,
    result_content,
    trust_fingerprint,
)
from tests.agents import (
    ROOT,
    SCRIPTS,
    git_repository_with_one_commit,
    press_ctrl_c_once,
    results_sent,
    run_in_process,
    versions_from,
)

pytestmark = pytest.mark.parametrize("version", versions_from("v6"))
FIXTURES = Path(__file__).parent / "mcp_servers"
MISBEHAVING = FIXTURES / "misbehaving.py"
STUBBORN = FIXTURES / "stubborn.py"
DOCS_SERVER = ROOT / "mcp_servers" / "docs_search.py"


def write_config(folder: Path, servers: dict[str, list[str]], name: str = ".mcp.json") -> Path:
    """A .mcp.json in Claude Code's format: each server is this Python running `args`."""
    entries = {server: {"command": sys.executable, "args": args}
               for server, args in servers.items()}
    path = folder / name
    path.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    return path


@pytest.fixture
def v6(make_agent):
    """A fresh v6 agent; whatever servers it started are stopped after the test."""
    own_servers = []

    def make(**env):
        agent = make_agent(**env)
        own_servers.append(agent.SERVERS)  # not one lent to it (lend() below)
        return agent

    yield make
    for servers in own_servers:
        servers.close()


def play_calls(api, agent, *calls: tuple[str, dict], text: str = "done") -> list[dict]:
    """The scripted model calls the tools (all in one reply), then answers; returns the
    tool_results it got back, in order."""
    api.play({"turns": [{"tool_calls": [{"name": name, "input": tool_input}
                                        for name, tool_input in calls]},
                        {"text": text}]})
    assert agent.run_turn([], "go") == 0
    return [block for block in results_sent(api) if block["type"] == "tool_result"]


def text_of(result: dict) -> str:
    return "".join(block["text"] for block in result["content"] if block["type"] == "text")


def tools_offered(api) -> dict[str, dict]:
    return {tool["name"]: tool for tool in api.requests[0].body["tools"]}


def alive_with(marker: str) -> list[psutil.Process]:
    """The processes whose command line holds marker (a token only one test's servers carry)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if marker in " ".join(process.info["cmdline"] or []):
            found.append(process)
    return found


# -- the project's own server: the gistdex case --
@pytest.fixture(scope="module")
def docs_server():
    servers = McpServers(60, 60)
    started = servers.start_all([ServerSpec("docs", sys.executable, [str(DOCS_SERVER)], {},
                                            DOCS_SERVER.parent)])
    assert isinstance(started["docs"], list), started["docs"]
    yield servers, started["docs"]
    servers.close()


def lend(agent, servers, name: str, tools: list) -> None:
    """Give a fresh agent a server started for the module, as start_mcp_servers() would."""
    agent.SERVERS = servers
    agent.offer_tools(name, tools)


def test_the_shipped_server_is_offered_with_its_schema_and_summary_by_default(
    scripted_api, v6, docs_server
):
    agent = v6()
    lend(agent, docs_server[0], "docs", docs_server[1])
    (result,) = play_calls(scripted_api, agent,
                           ("mcp__docs__search_docs", {"query": "context budget"}))
    tool = tools_offered(scripted_api)["mcp__docs__search_docs"]
    assert tool["input_schema"]["properties"]["mode"]["enum"] == ["summary", "detailed", "full"]
    assert tool["input_schema"]["properties"]["mode"]["default"] == "summary"
    assert tool["input_schema"]["required"] == ["query"]
    assert text_of(result) == docs_answer("context budget")  # the summary, whole: it fits
    assert result["is_error"] is False


def test_a_full_answer_over_the_budget_is_cut_and_names_the_mode_that_asks_for_less(
    scripted_api, v6, docs_server
):
    agent = v6(MCP_RESULT_BUDGET=5000)
    lend(agent, docs_server[0], "docs", docs_server[1])
    full = docs_answer("context budget", "full")
    (result,) = play_calls(scripted_api, agent, (
        "mcp__docs__search_docs", {"query": "context budget", "mode": "full"}))
    shown, note = result["content"]
    assert shown == {"type": "text", "text": full[:5000]}  # the head, to the character
    assert note["text"] == (
        f"[... {len(full) - 5000:,} of {len(full):,} characters of this result were cut here "
        "to fit MCP_RESULT_BUDGET=5,000: call it again asking for less with mode (summary, "
        "detailed, full)]")
    assert len(full) > 30_000  # over the default budget too: the gistdex case


def test_the_budget_edge_one_character_more_is_cut(scripted_api, v6, docs_server):
    size = len(docs_answer("compaction"))
    for budget, cut in ((size, False), (size - 1, True)):
        agent = v6(MCP_RESULT_BUDGET=budget)
        lend(agent, docs_server[0], "docs", docs_server[1])
        (result,) = play_calls(scripted_api, agent,
                               ("mcp__docs__search_docs", {"query": "compaction"}))
        assert (len(result["content"]) == 2) is cut
        assert text_of(result).startswith(docs_answer("compaction")[:budget])


# -- a server no one here wrote: mcp-server-git, from the package index --
@pytest.fixture(scope="module")
def git_server(tmp_path_factory):
    """mcp-server-git, and a repository with one commit and a large change not yet staged."""
    repo = tmp_path_factory.mktemp("repo")
    git_repository_with_one_commit(repo)
    # bytes, so that the diff is the same on every OS (write_text writes \r\n on Windows)
    (repo / "a.txt").write_bytes(b"".join(b"changed line %d\n" % n for n in range(5000)))
    servers = McpServers(60, 60)
    started = servers.start_all([ServerSpec("git", sys.executable, ["-m", "mcp_server_git"], {},
                                            repo)])
    assert isinstance(started["git"], list), started["git"]
    yield servers, started["git"], repo
    servers.close()


def test_a_third_party_server_is_listed_called_and_its_large_diff_bounded(
    scripted_api, v6, git_server
):
    servers, tools, repo = git_server
    agent = v6(MCP_RESULT_BUDGET=2000)
    lend(agent, servers, "git", tools)
    status, diff = play_calls(
        scripted_api, agent,
        ("mcp__git__git_status", {"repo_path": str(repo)}),
        ("mcp__git__git_diff_unstaged", {"repo_path": str(repo)}))
    offered = tools_offered(scripted_api)
    assert {"mcp__git__git_status", "mcp__git__git_diff_unstaged", "mcp__git__git_commit",
            "mcp__git__git_log"} <= set(offered)
    assert "modified:   a.txt" in text_of(status)  # what the real server answered
    shown, note = diff["content"]
    assert shown["text"].startswith("Unstaged changes:\ndiff --git a/a.txt b/a.txt")
    assert len(shown["text"]) == 2000
    assert note["text"].endswith("to fit MCP_RESULT_BUDGET=2,000: call it again asking for "
                                 "less with context_lines]")


def test_read_only_subagents_get_only_the_tools_a_server_marks_read_only(
    scripted_api, v6, git_server
):
    servers, tools, _ = git_server
    agent = v6()
    lend(agent, servers, "git", tools)
    read_only = {f"mcp__git__{tool.name}" for tool in tools if tool.annotations
                 and tool.annotations.read_only_hint}
    writing = {f"mcp__git__{tool.name}" for tool in tools} - read_only
    assert "mcp__git__git_status" in read_only and "mcp__git__git_commit" in writing
    scripted_api.play({
        "turns": [{"tool_calls": [{"name": "Task", "input": {
            "description": "look", "prompt": f"CHILD-{kind}: look.", "agent_type": kind}}
            for kind in ("explore", "code")]}, {"text": "done"}],
        "tracks": [{"match": f"CHILD-{kind}", "turns": [{"text": "seen"}]}
                   for kind in ("explore", "code")]})
    assert agent.run_turn([], "go") == 0
    tools_of = {request.track: {tool["name"] for tool in request.body["tools"]}
                for request in scripted_api.requests if request.track != "default"}
    explore, code = (tools_of[name] for name in sorted(tools_of))  # CHILD-code, CHILD-explore
    explore, code = code, explore
    assert read_only <= explore and not writing & explore
    assert read_only | writing <= code


# -- results the API accepts --
def test_images_resources_and_error_results_become_content_the_api_accepts(
    scripted_api, v6, tmp_path
):
    agent = v6()
    agent.start_mcp_servers(write_config(tmp_path, {"mis": [str(MISBEHAVING)]}), False)
    png, tiff, resource, failed = play_calls(
        scripted_api, agent,
        ("mcp__mis__picture", {}), ("mcp__mis__picture", {"media_type": "image/tiff"}),
        ("mcp__mis__resource", {}), ("mcp__mis__fail", {}))
    image, words = png["content"]
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert image["source"]["type"] == "base64" and words == {"type": "text",
                                                             "text": "a 1x1 picture"}
    assert tiff["content"][0] == {"type": "text", "text": (
        "[an image of type image/tiff was left out: the API takes image/jpeg, image/png, "
        "image/gif, image/webp]")}
    assert resource["content"] == [{"type": "text",
                                    "text": "[resource file:///notes.txt]\nthe notes"}]
    assert failed == {**failed, "is_error": True, "content": [
        {"type": "text", "text": "the disk is on fire"}]}
    assert not scripted_api.violations


def test_names_and_schemas_the_api_would_refuse_are_left_out_with_one_line_each(
    scripted_api, v6, tmp_path, capsys
):
    agent = v6()
    agent.start_mcp_servers(write_config(tmp_path, {"mis": [str(MISBEHAVING)]}), False)
    out = capsys.readouterr().out
    play_calls(scripted_api, agent, ("mcp__mis__echo", {"text": "hi"}))
    offered = tools_offered(scripted_api)
    assert "mcp__mis__echo" in offered and "mcp__mis__bad_schema" not in offered
    assert not [name for name in offered if "far_too_long" in name]
    assert ("[mcp server 'mis': tool 'a_name_that_is_far_too_long_once_mcp_and_the_server_are_"
            "put_before_it' left out: its name 'mcp__mis__a_name_that_is_far_too_long_once_mcp_"
            "and_the_server_are_put_before_it' is not one the API accepts (1-64 letters, digits, "
            "_ or -)]") in out
    assert ("[mcp server 'mis': tool 'bad_schema' left out: its input schema is not valid JSON "
            "Schema: ") in out
    assert "[mcp server 'mis': tool 'echo' left out: mcp__mis__echo is offered already]" in out
    assert "[mcp server 'mis': echo, hang, die, fail, huge, pages, picture, resource, chatter, " \
           "refuse, verbose]" in out
    description = offered["mcp__mis__verbose"]["description"]  # the server's words, bounded
    assert len(description) == 1000 and description.endswith("instruc… [description cut]")
    assert "Ignore" not in json.dumps(scripted_api.requests[0].body["system"])


# -- every way a server fails: one line, and the session goes on --
def test_servers_that_cannot_start_cost_one_line_each_and_the_others_work(
    scripted_api, v6, tmp_path, capsys
):
    marker = uuid.uuid4().hex
    config = write_config(tmp_path, {
        "missing": [str(tmp_path / "no-such-server.py")],
        "notmcp": ["-c", "print('hi')"],
        "stubborn": [str(STUBBORN), marker],
        "mis": [str(MISBEHAVING)],
    })
    entries = json.loads(config.read_text())
    entries["mcpServers"]["nocommand"] = {"command": "no-such-program-" + marker}
    config.write_text(json.dumps(entries))
    agent = v6(MCP_TIMEOUT=5)  # the others end at once; the stubborn one waits it out
    agent.start_mcp_servers(config, False)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("[mcp server")]
    assert lines[0].startswith("[mcp server 'missing' ended before answering initialize: is it "
                               "an MCP server that speaks stdio?; its stderr ends: ")
    assert "No such file or directory" in lines[0]
    assert lines[1] == ("[mcp server 'notmcp' ended before answering initialize: is it an MCP "
                        "server that speaks stdio?; going on without it]")
    assert lines[2].startswith("[mcp server 'stubborn' did not answer initialize and tools/list "
                               "within MCP_TIMEOUT=5 s; its stderr ends: starting up...")
    assert lines[2].endswith("; going on without it]")
    assert lines[3] == ("[mcp server 'nocommand' cannot start: no program 'no-such-program-"
                        f"{marker}' (its \"command\"); going on without it]")
    assert len(lines) == 4
    assert not alive_with(marker)  # the stubborn server and its child: killed, not left behind
    (result,) = play_calls(scripted_api, agent, ("mcp__mis__echo", {"text": "still here"}))
    assert text_of(result) == "still here"
    assert [name for name in tools_offered(scripted_api) if name.startswith("mcp__")] == [
        f"mcp__mis__{name}" for name in ("echo", "hang", "die", "fail", "huge", "pages",
                                         "picture", "resource", "chatter", "refuse", "verbose")]


def test_a_server_whose_tool_list_the_sdk_refuses_is_one_line(v6, tmp_path, capsys):
    agent = v6()
    agent.start_mcp_servers(
        write_config(tmp_path, {"arr": [str(MISBEHAVING), "--array-schema"]}), False)
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "mcp server" in line]
    assert line.startswith("[mcp server 'arr' answered with what the MCP SDK refuses (1 "
                           "validation error for ListToolsResult")
    assert line.endswith("; going on without it]")
    assert not agent.MCP_TOOLS


def test_a_hanging_call_an_error_and_a_refusal_are_results_and_the_server_stays(
    scripted_api, v6, tmp_path
):
    agent = v6(MCP_TOOL_TIMEOUT=1)
    agent.start_mcp_servers(write_config(tmp_path, {"mis": [str(MISBEHAVING)]}), False)
    hang, refuse, echo = play_calls(
        scripted_api, agent, ("mcp__mis__hang", {}), ("mcp__mis__refuse", {}),
        ("mcp__mis__echo", {"text": "after"}))
    assert (hang["is_error"], text_of(hang)) == (True, (
        "error: mcp server 'mis' did not answer hang within MCP_TOOL_TIMEOUT=1 s: the call was "
        "given up"))
    assert (refuse["is_error"], text_of(refuse)) == (True, (
        "error: mcp server 'mis' refused the call to refuse: refused: no such thing"))
    assert (echo["is_error"], text_of(echo)) == (False, "after")


def test_a_server_that_dies_mid_call_is_one_error_and_its_tools_then_say_so(
    scripted_api, v6, tmp_path
):
    agent = v6()
    agent.start_mcp_servers(write_config(tmp_path, {"mis": [str(MISBEHAVING)]}), False)
    (died,) = play_calls(scripted_api, agent, ("mcp__mis__die", {}))
    assert died["is_error"] is True
    assert text_of(died) == "error: mcp server 'mis' stopped during the call to die"
    (after,) = play_calls(scripted_api, agent, ("mcp__mis__echo", {"text": "x"}))
    assert text_of(after) == ("error: mcp server 'mis' is not running (it stopped during a "
                              "call); its tools cannot be called in this session")


def test_a_server_writing_to_stderr_stays_off_the_screen(scripted_api, v6, tmp_path, capfd):
    agent = v6()
    agent.start_mcp_servers(write_config(tmp_path, {"mis": [str(MISBEHAVING), "--noisy"]}),
                            False)
    (result,) = play_calls(scripted_api, agent, ("mcp__mis__chatter", {"lines": 50}))
    assert text_of(result) == "said it"
    captured = capfd.readouterr()
    assert "chatter line" not in captured.out + captured.err
    assert "starting, and saying so" not in captured.out + captured.err


def test_a_failing_server_s_stderr_is_quoted_bounded_and_without_control_codes(
    v6, tmp_path, capsys
):
    script = tmp_path / "loud.py"
    script.write_text("import sys\nfor n in range(2000):\n"
                      "    print(f'\\x1b]0;title\\x07noise {n}', file=sys.stderr)\nsys.exit(1)\n")
    agent = v6()
    agent.start_mcp_servers(write_config(tmp_path, {"loud": [str(script)]}), False)
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "mcp server" in line]
    quoted = line.split("its stderr ends: ")[1]
    assert quoted.endswith("noise 1999; going on without it]")
    assert len(quoted) <= 300 + len("; going on without it]")
    assert "\x1b" not in line and "\x07" not in line


# -- the settings file, and trusting it --
def test_a_work_folder_mcp_json_is_not_used_without_a_terminal_to_ask(
    v6, tmp_path, capsys
):
    write_config(tmp_path, {"mis": [str(MISBEHAVING)]})  # the agent works in tmp_path
    agent = v6()
    agent.start_mcp_servers(None, False)
    assert not agent.MCP_TOOLS and not agent.SERVERS.connections
    assert (f"[{tmp_path / '.mcp.json'} names MCP servers (mis) but was not used: no terminal to "
            "ask whether to trust it; --trust-project-mcp does]") in capsys.readouterr().err
    agent.start_mcp_servers(None, True)  # --trust-project-mcp
    assert "mcp__mis__echo" in agent.MCP_TOOLS


@pytest.mark.parametrize(("text", "line"), [
    ("{", "is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 "
          "(char 1); no MCP server started]"),
    ('{"servers": {}}', 'has no "mcpServers" object'),
])
def test_a_settings_file_that_cannot_be_read_is_one_line(v6, tmp_path, capsys, text, line):
    (tmp_path / "servers.json").write_text(text)
    agent = v6()
    agent.start_mcp_servers(tmp_path / "servers.json", False)
    (said,) = [said for said in capsys.readouterr().err.splitlines() if said.strip()]
    assert said.startswith(f"[{tmp_path / 'servers.json'} ") and line in said


def test_entries_that_cannot_be_used_are_named_and_the_rest_start(
    v6, tmp_path, capsys, monkeypatch
):
    monkeypatch.delenv("V6_UNSET_TOKEN", raising=False)
    monkeypatch.setenv("V6_FIXTURE", str(MISBEHAVING))
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {
        "web": {"type": "http", "url": "https://example.com/mcp"},
        "bad name": {"command": "x"},
        "nocommand": {"args": ["x"]},
        "keyless": {"command": sys.executable, "args": [str(MISBEHAVING)],
                    "env": {"TOKEN": "${V6_UNSET_TOKEN}"}},
        "mis": {"command": sys.executable, "args": ["${V6_FIXTURE}"]}}}))
    agent = v6()
    agent.start_mcp_servers(path, False)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines == [
        f"[mcp server 'web' in {path} skipped: only stdio servers (a command to run) are "
        "supported here, not http or sse]",
        f"[mcp server 'bad name' in {path} skipped: its name must be 1-40 letters, digits, _ or "
        "- (it becomes part of tool names)]",
        f"[mcp server 'nocommand' in {path} skipped: it has no \"command\" (the program that "
        "runs the server)]",
        f"[mcp server 'keyless' in {path} skipped: \"env.TOKEN\" uses ${{V6_UNSET_TOKEN}}, which "
        "is not set and has no default (set V6_UNSET_TOKEN, or write ${V6_UNSET_TOKEN:-default})]"]
    assert "mcp__mis__echo" in agent.MCP_TOOLS  # its args came from ${V6_FIXTURE}
    assert not [name for name in agent.MCP_TOOLS if name.startswith("mcp__keyless__")]


# ${VAR} and ${VAR:-default} in .mcp.json, as Claude Code reads them: in command, args and env
ENVIRON = {"TOKEN": "s3cret", "EMPTY": "", "TOOLS": "/opt/tools"}


def servers_of(tmp_path: Path, entries: dict) -> tuple[list[ServerSpec], list[str]]:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    return read_servers(path, ENVIRON)


def test_a_set_variable_is_filled_in_in_command_args_and_env(version, tmp_path):
    (spec,), problems = servers_of(tmp_path, {"docs": {
        "command": "${TOOLS}/python", "args": ["--token=${TOKEN}", "${TOKEN}${TOKEN}"],
        "env": {"API_KEY": "${TOKEN}", "BLANK": "${EMPTY}"}}})
    assert problems == []
    assert spec.command == "/opt/tools/python"
    assert spec.args == ["--token=s3cret", "s3crets3cret"]
    assert spec.env == {"API_KEY": "s3cret", "BLANK": ""}


def test_an_unset_variable_takes_its_default_and_a_blank_one_stays_blank(version, tmp_path):
    (spec,), _ = servers_of(tmp_path, {"docs": {
        "command": "${NO_SUCH_PYTHON:-python3}", "args": ["${NO_SUCH_MODE:-summary}",
                                                        "${NO_SUCH_DIR:-}", "${EMPTY:-full}"],
        "env": {"URL": "${NO_SUCH_URL:-http://localhost:8000/a?b=c}"}}})
    assert spec.command == "python3"
    assert spec.args == ["summary", "", ""]  # EMPTY is set, to "": Claude Code keeps it
    assert spec.env == {"URL": "http://localhost:8000/a?b=c"}


@pytest.mark.parametrize(("entry", "field", "name"), [
    ({"command": "${NO_SUCH_PYTHON}"}, "command", "NO_SUCH_PYTHON"),
    ({"command": "python3", "args": ["a", "--key=${NO_SUCH_KEY}"]}, "args[1]", "NO_SUCH_KEY"),
    ({"command": "python3", "env": {"KEY": "${TOKEN}", "OTHER": "${NO_SUCH_ID}"}}, "env.OTHER",
     "NO_SUCH_ID"),
])
def test_an_unset_variable_without_a_default_skips_its_server_naming_field_and_variable(
    version, tmp_path, entry, field, name
):
    specs, problems = servers_of(tmp_path, {"broken": entry, "fine": {"command": "python3"}})
    assert [spec.name for spec in specs] == ["fine"]
    assert problems == [
        f"mcp server 'broken' in {tmp_path / '.mcp.json'} skipped: \"{field}\" uses ${{{name}}}, "
        f"which is not set and has no default (set {name}, or write ${{{name}:-default}})"]


def test_a_dollar_that_is_no_variable_is_left_as_it_is(version, tmp_path):
    text = ["$TOKEN", "costs $5", "${", "${}", "${TOKEN", "${TOKEN:default}", "$$", "a}b"]
    (spec,), problems = servers_of(tmp_path, {"docs": {"command": "python3", "args": text,
                                                       "env": {"PS1": "$ "}}})
    assert problems == []
    assert spec.args == text and spec.env == {"PS1": "$ "}


# -- a yes to a work folder's .mcp.json is remembered, for that file as it is --
def say_yes_to(store: Path, config: Path, agent) -> None:
    """What a yes at the terminal stores (the pty test below sees the question asked)."""
    specs, _ = read_servers(config)
    remember_trust(store, config, trust_fingerprint(config, specs), agent.SCREEN)


def test_a_remembered_yes_starts_the_same_file_without_asking_and_a_changed_one_asks_again(
    version, v6, tmp_path, capsys, monkeypatch
):
    work, store = tmp_path / "work", tmp_path / "home" / ".agent_mcp_trusted.json"
    work.mkdir()
    monkeypatch.chdir(work)
    config = write_config(work, {"mis": [str(MISBEHAVING)]})
    say_yes_to(store, config, v6(MCP_TRUSTED=str(store)))
    agent = v6(MCP_TRUSTED=str(store))
    agent.start_mcp_servers(None, False)  # no terminal here: only the remembered yes can start it
    assert "mcp__mis__echo" in agent.MCP_TOOLS
    assert f"[{config}: trusted before, unchanged since (remembered in {store})]" in (
        capsys.readouterr().out)
    write_config(work, {"mis": [str(MISBEHAVING), "--stubborn", "x"]})  # now it runs another
    changed = v6(MCP_TRUSTED=str(store))
    changed.start_mcp_servers(None, False)
    assert changed.MCP_TOOLS == {}
    assert "was not used: no terminal to ask whether to trust it" in capsys.readouterr().err


def test_a_store_that_cannot_be_read_is_one_line_and_trusts_nothing(
    version, v6, tmp_path, capsys, monkeypatch
):
    store = tmp_path / "trusted.json"
    store.write_bytes(b"{not json")
    monkeypatch.chdir(tmp_path)
    write_config(tmp_path, {"mis": [str(MISBEHAVING)]})
    agent = v6(MCP_TRUSTED=str(store))
    agent.start_mcp_servers(None, False)
    shown = capsys.readouterr()
    said = [line for line in (shown.out + shown.err).splitlines() if line.strip()]
    assert said[0] == (f"[{store} cannot be read (JSONDecodeError: Expecting property name "
                       "enclosed in double quotes: line 1 column 2 (char 1)): no earlier yes to "
                       "a .mcp.json is used]")
    assert "no terminal to ask" in said[1] and agent.MCP_TOOLS == {}


# -- no server outlives the agent --
@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C as a signal to the main thread")
@pytest.mark.usefixtures("ctrl_c_raises")
def test_no_server_outlives_a_one_shot_run_stopped_by_ctrl_c(version, scripted_api, tmp_path):
    """The command line, one task: Ctrl-C while a call hangs, on a server that ignores SIGTERM
    and its closed stdin. The turn ends as interrupted, and the server is gone with the agent."""
    marker = uuid.uuid4().hex
    flag = tmp_path / "hanging"
    config = write_config(tmp_path, {"mis": [str(MISBEHAVING), "--stubborn", marker]},
                          "servers.json")
    scripted_api.play({"turns": [{"tool_calls": [{"name": "mcp__mis__hang",
                                                  "input": {"flag": str(flag)}}]}]})
    press_ctrl_c_once(flag.exists)
    done = run_in_process(ROOT / SCRIPTS[version], "--workdir", str(tmp_path), "--mcp-config",
                          str(config), "hang")
    assert done.returncode == 130, done.stdout + done.stderr
    assert "[interrupted: the turn stopped here; your conversation is kept]" in done.stderr
    assert not alive_with(marker)


def test_no_server_outlives_main_even_without_leave(version, scripted_api, tmp_path):
    """main() itself stops the servers, before the exit that would end them anyway: a test or a
    program that runs main() in its own process is left with no server either."""
    marker = uuid.uuid4().hex
    config = write_config(tmp_path, {"mis": [str(MISBEHAVING), marker]},
                          "servers.json")
    scripted_api.play({"turns": [{"tool_calls": [{"name": "mcp__mis__echo",
                                                  "input": {"text": "hello"}}]},
                                 {"text": "done"}]})
    done = run_in_process(ROOT / SCRIPTS[version], "--workdir", str(tmp_path), "--mcp-config",
                          str(config), "say hello")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "> mcp__mis__echo" in done.stdout
    assert not alive_with(marker)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_at_a_terminal_the_work_folder_mcp_json_is_used_once_the_user_says_yes(
    version, scripted_api, tmp_path
):
    """Only the yes: each session at a terminal costs a whole interpreter. No (the default) is
    the branch a run without a terminal takes too, tested above."""
    pexpect = pytest.importorskip("pexpect", reason="pexpect is in requirements-dev.txt")
    write_config(tmp_path, {"mis": [str(MISBEHAVING)]})
    store = tmp_path / "elsewhere" / "trusted.json"
    env = {**os.environ, "TERM": "xterm", "NO_COLOR": "1", "PROMPT_TOOLKIT_NO_CPR": "1",
           "HOME": str(tmp_path), "AGENT_HISTORY": str(tmp_path / "history"),
           "MCP_TRUSTED": str(store)}
    child = pexpect.spawn(sys.executable, [str(ROOT / SCRIPTS[version]), "--workdir",
                                           str(tmp_path)],
                          env=env, encoding="utf-8", timeout=90, dimensions=(24, 200))
    child.expect_exact("Trust this file and start them? [y/N] ")
    # what it would run, shown before the question (wrapped where the terminal is narrower)
    shown = "".join(child.before.split())
    assert "".join(f"mis: {sys.executable} {MISBEHAVING}".split()) in shown
    child.sendline("y")
    child.expect_exact("[mcp server 'mis': echo, hang, die")
    child.expect_exact("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    # the yes is remembered for this file as it is (the test above: the next session starts it)
    config = tmp_path / ".mcp.json"
    specs, _ = read_servers(config)
    assert json.loads(store.read_text(encoding="utf-8")) == {
        "trusted": {str(config.resolve()): trust_fingerprint(config, specs)}}


# -- the pieces, once: what each kind of content becomes, and the shipped server's figures --
def result_content_of(*parts: dict, structured=None, budget: int = 1000) -> tuple[list[dict], str]:
    """What result_content() makes of a CallToolResult with these parts, as the SDK parses it:
    the blocks, and the note of what was cut ("" if nothing was)."""
    from mcp import types as mcp_types

    result = mcp_types.CallToolResult.model_validate(
        {"content": list(parts), "structuredContent": structured, "isError": False})
    return result_content(result, budget, "MCP_RESULT_BUDGET", "(how to ask for less)")


def content_of(*parts: dict, structured=None, budget: int = 1000) -> list[dict]:
    return result_content_of(*parts, structured=structured, budget=budget)[0]


PNG_DATA = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAAAAgABSK+kcQAAAABJ"
            "RU5ErkJggg==")


@pytest.mark.parametrize(("part", "becomes"), [
    ({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
     "[a part of type audio was left out: the API takes text and images only]"),
    ({"type": "resource", "resource": {"uri": "file:///a.bin", "mimeType": "application/zip",
                                       "blob": "AAAA"}},
     "[a binary resource (file:///a.bin, application/zip) was left out: only text reaches the "
     "model]"),
    ({"type": "image", "data": "not base64!", "mimeType": "image/png"},
     "[an image was left out: its data is not valid base64]"),
    ({"type": "image", "data": base64.b64encode(bytes(5 * 1024 * 1024 + 1)).decode(),
      "mimeType": "image/png"},
     "[an image of 5,242,881 bytes was left out: the API takes at most 5,242,880]"),
    ({"type": "resource_link", "uri": "file:///b.txt", "name": "b"},
     "[resource link: file:///b.txt (b)]"),
])
def test_what_the_api_cannot_take_becomes_a_note(version, part, becomes):
    assert content_of(part) == [{"type": "text", "text": becomes}]


def test_an_image_the_api_takes_goes_as_it_came(version):
    image = {"type": "image", "data": PNG_DATA, "mimeType": "image/png"}
    assert content_of(image) == [{"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": PNG_DATA}}]


def test_an_empty_result_is_said_and_structured_content_alone_is_sent_as_json(version):
    assert content_of() == [{"type": "text", "text": "(the tool returned nothing)"}]
    assert content_of({"type": "text", "text": ""}) == [
        {"type": "text", "text": "(the tool returned nothing)"}]  # the API refuses empty text
    assert content_of(structured={"hours": 3}) == [{"type": "text", "text": '{"hours": 3}'}]


def test_the_budget_counts_every_text_part_and_keeps_the_images(version):
    image = {"type": "image", "data": PNG_DATA, "mimeType": "image/png"}
    cut = content_of({"type": "text", "text": "a" * 6}, image, {"type": "text", "text": "b" * 6},
                     {"type": "text", "text": "c" * 6}, budget=10)
    assert [block.get("text", "image") for block in cut] == [
        "aaaaaa", "image", "bbbb", "[... 8 of 18 characters of this result were cut here to fit "
        "MCP_RESULT_BUDGET=10: (how to ask for less)]"]


def test_the_shipped_server_s_modes_grow_and_its_figures_are_measured(version):
    sizes = answer_sizes("context budget")
    assert sizes == {mode: len(docs_answer("context budget", mode))
                     for mode in ("summary", "detailed", "full")}
    assert sizes["summary"] < 2_000 < sizes["detailed"] < 30_000 < sizes["full"]
    assert docs_answer("context budget") == docs_answer("context budget", "summary")
    assert docs_answer("no-such-word-anywhere") == (
        "No section of the docs (both) matches 'no-such-word-anywhere'. Try fewer or other words.")


def test_the_cut_names_every_argument_that_asks_for_less_or_says_there_is_none(
    scripted_api, v6, tmp_path
):
    agent = v6(MCP_RESULT_BUDGET=100)
    agent.start_mcp_servers(write_config(tmp_path, {"mis": [str(MISBEHAVING)]}), False)
    paged, plain_huge = play_calls(scripted_api, agent, ("mcp__mis__pages", {"size": 500}),
                                   ("mcp__mis__huge", {"size": 500}))
    assert paged["content"][-1]["text"].endswith(
        "MCP_RESULT_BUDGET=100: call it again asking for less with page, mode (short, long)]")
    assert plain_huge["content"][-1]["text"].endswith(
        "MCP_RESULT_BUDGET=100: this tool has no mode, page or limit argument: ask for something "
        "narrower]")
    assert len(plain_huge["content"][0]["text"]) == 100

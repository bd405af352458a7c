"""Recording a session, replaying it offline, and recordings as regression tests.

`python -m scripted.record` puts a proxy on 127.0.0.1 between a version script and the API; here
the session's scripted server stands in for the real API, so nothing leaves the machine. The
recorder and the replay run the script in a subprocess for the user; these tests hand them an
in-process runner with the same arguments (tests/agents.run_in_process), which saves a second
`import anthropic` per run. One test goes through the command line and a real subprocess.

Every file in tests/recordings/ is replayed against the script it was made with, and its requests
are checked against our rules: drop a recording there and it is a regression test.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from prompt_toolkit.history import FileHistory

from docsgen.generated import steady
from docsgen.hood import Page, call_tree, from_session, source_label
from scripted import ROOT, SCRIPTS, demo, replay
from scripted.record import (
    KEY_REMOVED,
    Exchange,
    RecordingProxy,
    as_piped_input,
    folder_files,
    record_session,
    typed_messages,
    write_files,
    write_recording,
)
from scripted.replay import Playback, Recording, Turnstile, check_rules, load_recording
from scripted.server import load_scenario
from tests.agents import VERSIONS, run_in_process, shell_missing

RECORDINGS = Path(__file__).resolve().parent / "recordings"
SCENARIOS = ROOT / "scripted" / "scenarios"
# Long enough to be taken for a key (record.SHORTEST_SECRET), and found nowhere else.
KEY = "sk-ant-test-0123456789-never-written"
TOKEN = "auth-token-test-9876543210-never-written"


class InProcess:
    """Runs the script's main() in this process, with the arguments, environment and typed input
    the recorder or the replay gives it, and keeps what it printed."""

    def __init__(self) -> None:
        self.output = ""

    def __call__(self, script: Path, args: list[str], env: dict, typed: str | None) -> int:
        result = run_in_process(script, *args, env=env, input_text=typed or "")
        self.output += result.stdout + result.stderr
        return result.returncode


def screen(output: str, workdir: Path) -> str:
    """What the screen showed, with what differs between two runs evened out as the docs'
    transcripts do: the work directory, a subagent's time, the order in which parallel threads
    print their first lines."""
    return steady(output.replace(str(workdir), "<workdir>"))


def starting_project(folder: Path, files: dict[str, str]) -> Path:
    write_files(folder, files)
    folder.mkdir(exist_ok=True)
    return folder


def needs_the_shell(version: str) -> None:
    """Skips where the version's demo plays bash commands and no shell runs them here."""
    if "name: bash" in (SCENARIOS / f"{version}_demo.yaml").read_text(encoding="utf-8"):
        if shell_missing():
            pytest.skip(shell_missing())


def as_crlf(source: Path, target: Path) -> Path:
    """The file as a Windows checkout has it (Git for Windows' core.autocrlf=true): \r\n."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    return target


def record(
    scripted_api,
    tmp_path: Path,
    version: str,
    task: str | None,
    typed: str | None = None,
    credential: str = "ANTHROPIC_API_KEY",
    options: list[str] | None = None,
):
    """Record the version through the proxy, the scripted server as the upstream, with KEY as
    the credential; the file, what the script printed, and the work directory."""
    out = tmp_path / "session.jsonl"
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    runner = InProcess()
    env = {**os.environ, credential: KEY}
    if credential != "ANTHROPIC_API_KEY":
        env["ANTHROPIC_API_KEY"] = None  # the in-process runner unsets it for the script
    code = record_session(
        version, out, workdir, task, scripted_api.start(), env, piped=typed, run=runner,
        options=options,
    )
    assert code == 0, runner.output
    return out, runner.output, workdir


def replayed(path: Path, folder: Path, script: Path | None = None) -> tuple[int, str]:
    folder.mkdir(exist_ok=True)
    runner = InProcess()
    code = replay.replay_session(path, script, folder, max_pause=0, run=runner)
    return code, runner.output


# -- record, then replay --


@pytest.mark.parametrize("version", VERSIONS)
def test_a_recorded_session_replays_offline_to_the_same_screen(version, scripted_api, tmp_path):
    needs_the_shell(version)
    scenario = load_scenario(SCENARIOS / f"{version}_demo.yaml")
    scripted_api.play(scenario)
    starting_project(tmp_path / "work", scenario.get("files", {}))
    out, recorded, workdir = record(
        scripted_api, tmp_path, version, scenario["task"], options=scenario.get("args")
    )
    code, shown = replayed(out, tmp_path / "replay")
    assert code == 0, shown
    assert screen(shown, tmp_path / "replay") == screen(recorded, workdir)
    # The key went over the wire with every request (Authorization: Bearer, from this SDK); it
    # is nowhere in the file, nor is any header that authenticates.
    text = out.read_text(encoding="utf-8")
    assert KEY not in text
    for header in ("x-api-key", "authorization", "cookie"):
        assert f'"{header}"' not in text.lower()


def test_an_error_a_broken_stream_and_the_retries_replay_as_they_happened(scripted_api, tmp_path):
    """The SDK retries a 529; the script retries a stream that broke off. Each retry sends the
    same request again, and gets the reply recorded for it, in turn."""
    broken = {"status": 529, "midstream": True}
    scripted_api.play(
        {
            "turns": [
                {"error": {"status": 529, "message": "overloaded", "retry_after_ms": 5}},
                {"text": "This reply breaks off halfway through.", "error": broken},
                {"text": "Hello after two retries."},
            ]
        }
    )
    out, recorded, workdir = record(scripted_api, tmp_path, "v1", "hi")
    code, shown = replayed(out, tmp_path / "replay")
    assert code == 0, shown
    assert "Hello after two retries." in shown
    assert screen(shown, tmp_path / "replay") == screen(recorded, workdir)


def test_the_header_says_model_sdk_date_and_what_was_asked(scripted_api, tmp_path, capsys):
    scripted_api.play({"turns": [{"text": "Hello."}]})
    out, _, workdir = record(
        scripted_api, tmp_path, "v1", "say hello", credential="ANTHROPIC_AUTH_TOKEN"
    )
    assert scripted_api.requests[0].headers["authorization"] == f"Bearer {KEY}"  # on the wire
    assert KEY not in out.read_text(encoding="utf-8")  # not in the file
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert header["model"] == scripted_api.requests[0].body["model"]
    assert header["sdk"].startswith("anthropic-python 2.")
    assert header["date"] == time.strftime("%Y-%m-%d")
    assert header["task"] == "say hello"
    said = capsys.readouterr().out.splitlines()
    warnings = [line for line in said if "the file will hold this conversation" in line]
    assert len(warnings) == 1  # said once, at the start, with what to check
    assert f"the files of {workdir}" in warnings[0]
    assert "before you share the file" in warnings[0]


def test_messages_typed_at_the_prompt_are_replayed_as_typed(scripted_api, tmp_path):
    scripted_api.play(
        {
            "turns": [
                {"expect": {"last_user_contains": "first"}, "text": "Hello."},
                {"expect": {"last_user_contains": "over two\nlines"}, "text": "Bye."},
            ]
        }
    )
    typed = "first message\nthe second, \\\nover two\\\nlines\n"
    out, recorded, workdir = record(scripted_api, tmp_path, "v1", None, typed)
    code, shown = replayed(out, tmp_path / "replay")
    assert code == 0, shown
    # A pipe does not echo, so the prompt shows each message as a terminal would have.
    assert "you> first message\nHello." in shown
    assert "you> the second, \n... over two\n... lines\nBye." in shown
    assert screen(shown, tmp_path / "replay") == screen(recorded, workdir)


def test_messages_typed_at_a_terminal_are_kept_so_that_a_pipe_gives_them_back(
    scripted_api, tmp_path
):
    """At a terminal the recorder cannot read what is typed: it reads the prompt's history file
    afterwards. A message of several lines must come back as one message."""
    history = FileHistory(str(tmp_path / "history"))
    history.store_string("first message")
    history.store_string("the second,\nover two lines")
    typed = as_piped_input(typed_messages(tmp_path / "history"))
    scripted_api.play(
        {
            "turns": [
                {"expect": {"last_user_contains": "first message"}, "text": "Hello."},
                {"expect": {"last_user_contains": "second,\nover two"}, "text": "Bye."},
            ]
        }
    )
    result = run_in_process(ROOT / SCRIPTS["v1"], "--workdir", str(tmp_path), input_text=typed)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_header_that_authenticates_is_written_whatever_the_client_sends(
    scripted_api, tmp_path
):
    """The SDK sends the key as Authorization; another client sends x-api-key, a cookie. Only
    the headers on the recorder's list are written, so a new one is left out too. The key sent
    is learnt from the wire (it may come from a .env the recorder never read) and removed where
    else it shows up."""
    scripted_api.play({"turns": [{"text": "Hi."}]})
    proxy = RecordingProxy(scripted_api.start(), set())
    message = {"role": "user", "content": f"my key is {KEY}"}
    body = {"model": "claude-sonnet-5-5", "max_tokens": 10, "messages": [message]}
    headers = {
        "x-api-key": KEY,
        "cookie": f"session={TOKEN}",
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
    }
    request = urllib.request.Request(
        proxy.start() + "/v1/messages", json.dumps(body).encode(), headers
    )
    with urllib.request.urlopen(request) as reply:
        assert reply.status == 200
    proxy.stop()
    out = tmp_path / "session.jsonl"
    write_recording(out, {"kind": "header"}, proxy.exchanges, proxy.secrets)
    text = out.read_text(encoding="utf-8")
    assert '"anthropic-version": "2023-06-01"' in text  # headers are kept, but not these:
    assert f"my key is {KEY_REMOVED}" in text
    assert KEY not in text
    assert TOKEN not in text
    assert "x-api-key" not in text
    assert "cookie" not in text


def test_a_key_that_enters_the_conversation_is_replaced_everywhere(scripted_api, tmp_path):
    """The model reads a file that holds the key: it is in the work directory's copy and in a tool
    result. Both are replaced, and the replay still matches, since it starts from the copy."""
    starting_project(tmp_path / "work", {"notes.txt": f"token={KEY}\n"})
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [{"name": "read_file", "input": {"path": "notes.txt"}}]},
                {"expect": {"tool_result_contains": KEY}, "text": "It holds a token."},
            ]
        }
    )
    out, _, _ = record(scripted_api, tmp_path, "v1", "what is in notes.txt?")
    text = out.read_text(encoding="utf-8")
    assert KEY not in text
    assert text.count(KEY_REMOVED) == 2  # the copy of notes.txt, the tool_result
    code, shown = replayed(out, tmp_path / "replay")
    assert code == 0, shown


# -- a script that changed --


def test_a_changed_script_stops_at_the_first_request_that_differs_with_a_diff(tmp_path, capfd):
    """Through the command line, with the script in a subprocess as a learner runs it: a
    workshop copy whose write_file says something else."""
    mine = tmp_path / "mine.py"
    source = (ROOT / SCRIPTS["v1"]).read_text(encoding="utf-8")
    changed = source.replace(
        'return f"wrote {len(content):,} characters to {path}"', 'return f"saved {path}"'
    )
    assert changed != source
    mine.write_text(changed, encoding="utf-8")
    arguments = ["--replay", str(RECORDINGS / "v1_demo.jsonl"), "--script", str(mine)]
    code = demo.main([*arguments, "--workdir", str(tmp_path / "work"), "--max-pause", "0"])
    shown = capfd.readouterr().out
    assert code == 1
    assert "[replay stopped: request 2 of the recording differs from what the script sent]" in shown
    assert '-          "content": "wrote 186 characters to fizzbuzz.py",' in shown
    assert '+          "content": "saved fizzbuzz.py",' in shown
    assert "I'll write the script first." in shown  # the first reply was played...
    assert "Now let me run it." not in shown  # ...the second, after the difference, never


def test_requests_are_matched_by_conversation_not_by_their_place_in_the_file():
    """Parallel subagents may ask in another order than they did: in any order, each request
    finds its own exchange. One that differs is shown against the next request of its own
    conversation, not against whatever the file has next."""
    recording = load_recording(RECORDINGS / "v3_demo.jsonl")
    workdir = Path(recording.header["workdir"])
    playback = Playback(recording, workdir)
    claimed = []
    for exchange in reversed(recording.exchanges):
        found, difference = playback.claim(exchange.method, exchange.path, exchange.body)
        assert difference == ""
        claimed.append(found.number)
    assert claimed == [exchange.number for exchange in reversed(recording.exchanges)]
    finder = [
        exchange
        for exchange in recording.exchanges
        if "find the tests for the shopping cart" in json.dumps(exchange.body["messages"][0])
    ]
    changed = json.loads(json.dumps(finder[1].body))
    changed["messages"][-1]["content"][0]["content"] = "nothing found"
    playback = Playback(recording, workdir)
    for exchange in (recording.exchanges[0], finder[0]):  # the main agent's first, its first
        playback.claim(exchange.method, exchange.path, exchange.body)
    assert playback.waiting[0].number < finder[1].number  # the other explorer's comes first
    _, difference = playback.claim("POST", "/v1/messages", changed)
    assert difference.startswith(f"[replay stopped: request {finder[1].number} ")
    assert '+          "content": "nothing found",' in difference


def two_calls_answered(ids: tuple[str, str], answered: tuple[str, str], clock: str) -> dict:
    """A request whose last two messages are two tool calls and their results, in order."""
    calls = [{"type": "tool_use", "id": call_id, "name": "bash", "input": {}} for call_id in ids]
    outputs = [f"built at 2026-11-24 {clock}", "tests pass"]
    results = [
        {"type": "tool_result", "tool_use_id": call_id, "content": output}
        for call_id, output in zip(answered, outputs, strict=True)
    ]
    assistant = {"role": "assistant", "content": calls}
    return {"messages": [assistant, {"role": "user", "content": results}]}


def test_ids_and_clock_times_are_masked_but_a_result_given_to_the_wrong_call_differs():
    ids = ("toolu_01A", "toolu_01B")
    recorded = two_calls_answered(ids, ids, "10:31:02")
    other_ids = ("toolu_09X", "toolu_09Y")
    another_run = two_calls_answered(other_ids, other_ids, "08:00:59")
    swapped = two_calls_answered(ids, ("toolu_01B", "toolu_01A"), "10:31:02")
    assert replay.comparable(another_run, []) == replay.comparable(recorded, [])
    assert replay.comparable(swapped, []) != replay.comparable(recorded, [])


def test_parallel_replies_go_out_in_the_recorded_order_whoever_asks_first():
    """Two subagents: the one that asked first finished last. Its thread asks first here too,
    and still gets its events only after the other's."""
    slow = Exchange(1, 0.0, "POST", "/v1/messages", 0, {}, {}, 200, 0.5)
    slow.events = [{"at": 0.6, "event": "message_stop", "data": {}}]
    fast = Exchange(2, 0.1, "POST", "/v1/messages", 0, {}, {}, 200, 0.2)
    fast.events = [{"at": 0.3, "event": "message_stop", "data": {}}]
    turnstile = Turnstile(Recording({}, [slow, fast]), max_pause=0)
    order = []
    slow_is_waiting = threading.Event()

    def reply(exchange: Exchange) -> None:
        for position in range(2):
            step = turnstile.index[(exchange.number, position)]
            if exchange is slow:
                slow_is_waiting.set()
            turnstile.wait(step)
            order.append((exchange.number, position))
            turnstile.went(step)

    first = threading.Thread(target=reply, args=(slow,))
    first.start()
    assert slow_is_waiting.wait(5)  # the slow one asks first
    reply(fast)
    first.join(5)
    assert order == [(2, 0), (2, 1), (1, 0), (1, 1)]


# -- our rules against the recording --


def test_a_recorded_request_our_rules_reject_is_reported_as_a_bug_in_our_rules(
    tmp_path, capsys
):
    lines = (RECORDINGS / "v1_demo.jsonl").read_text(encoding="utf-8").splitlines()
    assert replay.main(["--check", str(RECORDINGS / "v1_demo.jsonl")]) == 0
    assert "our rules agree with the API on all 5 requests" in capsys.readouterr().out
    for number, line in enumerate(lines):
        entry = json.loads(line)
        if entry.get("kind") == "request" and entry["exchange"] == 2:
            # The API answered this one with 200; here its tool_result is gone.
            entry["body"]["messages"][-1]["content"] = [{"type": "text", "text": "go on"}]
            lines[number] = json.dumps(entry)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert replay.main(["--check", str(edited)]) == 1
    said = capsys.readouterr().out
    assert "our rules reject a request the real API accepted: request 2: messages.1: " in said
    assert "`tool_use` ids were found without `tool_result` blocks" in said


# -- the recordings in tests/recordings/ --


@pytest.mark.parametrize("path", sorted(RECORDINGS.glob("*.jsonl")), ids=lambda path: path.name)
def test_a_shipped_recording_replays_against_its_script_and_passes_our_rules(
    path, tmp_path, capsys
):
    recording = load_recording(path)
    assert check_rules(recording) == []
    needs_the_shell(recording.header["version"])
    code, shown = replayed(path, tmp_path / "replay")
    header = recording.header
    assert code == 0, (
        f"{path.name} no longer replays against {header['script']}:\n"
        f"{capsys.readouterr().out}\n{shown}\n"
        "If the change of the script is meant, record the session again (a scripted one with "
        f"python -m scripted.record {header['version']} --demo --out {path.relative_to(ROOT)})."
    )


# -- line endings as Windows has them --


def test_the_work_directory_is_kept_and_put_back_byte_for_byte_whatever_its_line_endings(
    tmp_path,
):
    work = tmp_path / "work"
    contents = {"windows.txt": b"one\r\ntwo\r\n", "unix.txt": b"one\ntwo\n",
                "mixed/notes.md": b"a\r\nb\nc", "one-line.txt": b"no ending"}
    for name, content in contents.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(content)
    files, left_out = folder_files(work)
    assert left_out == []
    write_recording(tmp_path / "session.jsonl", {"kind": "header", "files": files}, [], set())
    header = json.loads((tmp_path / "session.jsonl").read_bytes().splitlines()[0])
    write_files(tmp_path / "replay", header["files"])
    for name, content in contents.items():
        assert (tmp_path / "replay" / name).read_bytes() == content, name


@pytest.mark.parametrize("name", ["v2_demo.jsonl", "v4_demo.jsonl"])
def test_a_shipped_recording_replays_from_a_checkout_with_crlf_line_endings(name, tmp_path):
    """Git for Windows checks text files out with \r\n: the recording, the script and the skills
    beside it. The recording still replays: what the script sends is what the session sent."""
    recording = load_recording(RECORDINGS / name)
    needs_the_shell(recording.header["version"])
    checkout = tmp_path / "checkout"
    script = as_crlf(ROOT / recording.header["script"], checkout / recording.header["script"])
    for skill_file in (ROOT / "skills").rglob("*"):
        if skill_file.is_file():
            as_crlf(skill_file, checkout / skill_file.relative_to(ROOT))
    crlf_recording = as_crlf(RECORDINGS / name, checkout / "tests" / "recordings" / name)
    assert load_recording(crlf_recording).header == recording.header
    code, shown = replayed(crlf_recording, tmp_path / "replay", script)
    assert code == 0, shown


@pytest.mark.parametrize(
    "path",
    sorted(SCENARIOS.glob("*.yaml")) + sorted((ROOT / "tests" / "scenarios").glob("*.yaml")),
    ids=lambda path: path.name,
)
def test_a_scenario_reads_the_same_from_a_checkout_with_crlf_line_endings(path, tmp_path):
    assert load_scenario(as_crlf(path, tmp_path / path.name)) == load_scenario(path)


# -- the request inspector --


def test_the_request_inspector_shows_a_recording_labelled_with_where_it_came_from(tmp_path):
    records, header = from_session(RECORDINGS / "v3_demo.jsonl")
    page = Page("v3", "en").render(call_tree(records), source_label(header, "en"))
    assert source_label(header, "en") == source_label(None, "en")  # the scripted model answered
    assert "A scripted demo: a scripted model answered these requests, not Claude." in page
    assert 'data-calls="17"' in page
    assert page.count('class="hood-subagent"') == 4  # two explorers, a planner, a coder, nested
    real = {**header, "upstream": "https://api.anthropic.com", "model": "claude-sonnet-5-5"}
    assert source_label(real, "en") == f"Recorded from claude-sonnet-5-5 on {header['date']}."
    japanese = f"{header['date']} に claude-sonnet-5-5 とのやり取りを記録したものです。"
    assert source_label(real, "ja") == japanese
    assert "not Claude" not in Page("v3", "en").render(
        call_tree(records), source_label(real, "en")
    )


"""Two builds of the same commit give the same pages.

What could vary from one build to the next, and what evens it out:
- parallel subagents run in threads, so their requests reach the scripted server in any order:
  each track of a scenario counts its own ids (scripted/server.py), and the transcript puts the
  threads' first lines in the model's order (docsgen/generated.py's steady());
- the demo's work folder is random: the transcript and the recording mask it;
- a subagent's time: shown as n.n s;
- the build's date, which mkdocs writes into sitemap.xml and sitemap.xml.gz: the commit's date,
  through SOURCE_DATE_EPOCH (docsgen/__main__.py).
"""

import gzip
import json
import xml.etree.ElementTree as ElementTree
from datetime import UTC, datetime

import anthropic

from docsgen.__main__ import commit_time
from docsgen.generated import GENERATED, demo_transcript, in_model_order
from docsgen.hood import hood_files, load_recording
from scripted.server import ScriptedAPI

BASH = {"name": "bash", "description": "Run a shell command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}
SCENARIO = {
    "turns": [{"tool_calls": [{"name": "bash", "input": {"command": "ls"}}]}, {"text": "done"}],
    "tracks": [
        {"match": "alpha", "turns": [
            {"tool_calls": [{"name": "bash", "input": {"command": "ls a"}},
                            {"name": "bash", "input": {"command": "ls b"}}]},
            {"tool_calls": [{"name": "bash", "input": {"command": "ls c"}}]},
            {"text": "alpha done"},
        ]},
        {"match": "beta", "turns": [
            {"tool_calls": [{"name": "bash", "input": {"command": "ls d"}}]},
            {"text": "beta done"},
        ]},
    ],
}


def ids_in_order(first: str, then: str) -> dict[str, list[str]]:
    """Play two conversations (the tracks alpha and beta) and the main one, asking `first`'s
    track before `then`'s at every step, as two threads might; the tool ids each one got."""
    api = ScriptedAPI()
    api.play(SCENARIO)
    client = anthropic.Anthropic(base_url=api.start(), api_key="k", max_retries=0)
    try:
        history = {name: [{"role": "user", "content": f"task {name}"}]
                   for name in ("main", first, then)}
        ids: dict[str, list[str]] = {name: [] for name in history}
        for _ in range(3):
            for name, messages in history.items():
                if messages[-1]["role"] != "user":
                    continue
                reply = client.messages.create(model="claude-sonnet-5-5", max_tokens=1000,
                                               messages=messages, tools=[BASH])
                calls = [block for block in reply.content if block.type == "tool_use"]
                ids[name] += [call.id for call in calls]
                messages.append({"role": "assistant", "content": reply.content})
                if calls:
                    messages.append({"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": call.id, "content": "ok"}
                        for call in calls]})
        assert api.problems == [] and api.violations == []
        return ids
    finally:
        api.stop()


def test_a_tracks_tool_ids_do_not_depend_on_the_order_its_requests_arrive_in():
    one_way = ids_in_order("alpha", "beta")
    other_way = ids_in_order("beta", "alpha")
    assert one_way == other_way
    every_id = [id_ for ids in one_way.values() for id_ in ids]
    assert len(set(every_id)) == len(every_id) == 5  # never one id twice
    assert one_way["main"] == ["toolu_01scripted0001"]  # the main track's, as before


def exchange(track: str, first_message: str, reply: list[dict] | None = None) -> dict:
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": first_message}]}]}
    return {"track": track, "size": 1, "raw": json.dumps(body),
            "reply": {"status": 200, "body": {"content": reply or []}}}


def test_subagents_requests_are_recorded_in_the_models_order_whatever_the_threads_did():
    tasks = [{"type": "tool_use", "name": "Task", "input": {"prompt": prompt}}
             for prompt in ("map the code", "find the tests")]
    main = exchange("default", "the task", tasks)
    code = [exchange("map", "map the code") for _ in range(2)]
    tests = [exchange("tests", "find the tests") for _ in range(3)]
    for number, record in enumerate([*code, *tests]):
        record["size"] = number  # tells each one apart
    after = exchange("default", "the task")
    one_run = [main, tests[0], code[0], tests[1], tests[2], code[1], after]
    another = [main, code[0], tests[0], code[1], tests[1], tests[2], after]
    expected = [main, *code, *tests, after]
    assert in_model_order(one_run) == in_model_order(another) == expected


def test_the_v3_pages_come_out_the_same_when_its_demo_runs_again(built_site, tmp_path):
    """The demo whose subagents run in parallel, run once more: its transcript and its "Under
    the hood" pages are those of the build."""
    record = tmp_path / "v3.json"
    transcript = demo_transcript("v3", record)
    assert transcript == (GENERATED / "transcripts" / "v3.txt").read_text(encoding="utf-8")
    again = hood_files({"v3": load_recording(record)})
    differ = [path.as_posix() for path, text in again.items()
              if text != (GENERATED / path).read_text(encoding="utf-8")]
    assert differ == []


def test_the_sitemap_carries_the_commits_date_not_the_builds(built_site):
    committed = commit_time()
    if committed is None:  # a copy without git: mkdocs writes the day of the build
        return
    day = datetime.fromtimestamp(int(committed), UTC).strftime("%Y-%m-%d")
    namespace = {"sitemap": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    for language in ("", "ja/"):
        sitemap = ElementTree.parse(built_site / language / "sitemap.xml")
        dates = {date.text for date in sitemap.iterfind(".//sitemap:lastmod", namespace)}
        assert dates == {day}
        with open(built_site / language / "sitemap.xml.gz", "rb") as packed:
            header = packed.read(10)
        seconds = int.from_bytes(header[4:8], "little")  # the gzip header's MTIME
        assert datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d") == day
        with gzip.open(built_site / language / "sitemap.xml.gz") as unpacked:
            assert unpacked.read() == (built_site / language / "sitemap.xml").read_bytes()

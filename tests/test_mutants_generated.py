"""docsgen/generated.py: what the pages include, made in the test's own process: a script's
sections and where each starts, the diffs and transcripts and their paths, the order of a
recording and of the lines parallel subagents print, and how .generated/ is written.

The site build does all of it in a child process, which a mutation run leaves out; these tests
call each step on small inputs that tell its rules apart. expected_files() itself runs every
demo and benchmark (tens of CPU-seconds): the build's tests check what it makes.
"""

import json
import re
from pathlib import Path

import pytest

from docsgen import generated
from docsgen.changes import Changes
from docsgen.generated import (
    GENERATED,
    demo_transcript,
    demo_versions,
    diff_pairs,
    diff_path,
    in_model_order,
    script_sections,
    section_first_lines,
    section_path,
    steady,
    task_call_order,
    transcript_path,
    version_diff,
    write_all,
)
from scripted import ROOT, SCRIPTS

SCRIPT = '''\
"""A lesson."""
import os

# -- loop -- the agent loop


def loop():
    return 1

# -- plumbing/files -- what the plumbing does with files
# -- tools -- the tools



def tool():
    pass


'''


def test_a_scripts_sections_run_from_each_heading_to_the_next_without_blank_ends(tmp_path):
    script = tmp_path / "v1_basic.py"
    script.write_text(SCRIPT, encoding="utf-8")
    assert script_sections(script) == {
        "loop": "def loop():\n    return 1\n",
        "plumbing/files": "\n",
        "tools": "def tool():\n    pass\n",
    }
    assert section_first_lines(script) == {"loop": 7, "tools": 15}
    script.write_text(SCRIPT + "# -- loop -- again\nx = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^v1_basic.py has two sections named 'loop'$"):
        script_sections(script)


def test_a_sections_line_numbers_are_the_files_for_every_script():
    for script in SCRIPTS.values():
        lines = (ROOT / script).read_text(encoding="utf-8").splitlines()
        sections = script_sections(ROOT / script)
        for name, first in section_first_lines(ROOT / script).items():
            assert lines[first - 1] == sections[name].splitlines()[0], (script, name)


def test_each_generated_file_has_the_path_a_page_includes():
    assert section_path("v1_basic.py", "loop") == GENERATED / "sections" / "v1_basic" / "loop.py"
    assert section_path("v3_subagents.py", "plumbing/files") == (
        GENERATED / "sections" / "v3_subagents" / "plumbing" / "files.py")
    assert diff_path("v1", "v2") == GENERATED / "diffs" / "v1-to-v2.diff"
    assert transcript_path("v4") == GENERATED / "transcripts" / "v4.txt"
    assert GENERATED == ROOT / ".generated"


def test_a_diff_is_what_diff_u_shows_named_by_the_files(tmp_path):
    old, new = tmp_path / "v1_basic.py", tmp_path / "v2_planning.py"
    old.write_text("a\nb\nc\n", encoding="utf-8")
    new.write_text("a\nB\nc\nd\n", encoding="utf-8")
    assert version_diff(old, new) == (
        "--- v1_basic.py\n+++ v2_planning.py\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n")


def test_diffs_pair_each_version_with_the_one_before_where_both_scripts_exist(
        tmp_path, monkeypatch):
    assert diff_pairs() == list(zip(list(SCRIPTS), list(SCRIPTS)[1:], strict=False))
    monkeypatch.setattr(generated, "ROOT", tmp_path)
    for version in ("v1", "v2", "v4", "v5"):
        (tmp_path / SCRIPTS[version]).write_text("", encoding="utf-8")
    assert diff_pairs() == [("v1", "v2"), ("v4", "v5")]


def test_a_transcript_is_made_for_each_version_with_a_script_and_a_demo(tmp_path, monkeypatch):
    assert demo_versions() == [
        version for version, script in SCRIPTS.items()
        if (ROOT / script).exists()
        and (ROOT / "scripted" / "scenarios" / f"{version}_demo.yaml").exists()
    ]
    assert "v1" in demo_versions()
    monkeypatch.setattr(generated, "ROOT", tmp_path)  # a checkout without scripted/demo.py
    assert demo_versions() == []
    (tmp_path / "scripted").mkdir()
    (tmp_path / "scripted" / "demo.py").write_text("", encoding="utf-8")
    (tmp_path / SCRIPTS["v2"]).write_text("", encoding="utf-8")
    (tmp_path / SCRIPTS["v3"]).write_text("", encoding="utf-8")
    assert demo_versions() == ["v2", "v3"]  # their scenarios are the project's


# -- the order of a recording --


def exchange(track: str, first: object, tasks: list[tuple[str, str]] = (),
             status: int = 200) -> dict:
    """A recorded exchange: its first message's content, and the Task calls of its reply."""
    content = [{"type": "text", "text": "ok"}] + [
        {"type": "tool_use", "id": f"toolu_{index}", "name": "Task",
         "input": {"description": description, "prompt": prompt}}
        for index, (description, prompt) in enumerate(tasks)
    ]
    body = {"content": content} if status == 200 else None
    raw = json.dumps({"messages": [{"role": "user", "content": first}]})
    return {"track": track, "raw": raw, "reply": {"status": status, "body": body}}


def test_the_task_calls_are_listed_in_the_order_the_model_made_them():
    recording = [
        exchange("default", "task", [("find the loader", "p1"), ("find the tests", "p2")]),
        exchange("p2", "p2"),
        exchange("default", "task", status=529),
        exchange("default", "task", [("plan", "p3")]),
    ]
    bash = {"type": "tool_use", "id": "t", "name": "bash", "input": {"description": "no"}}
    recording[1]["reply"]["body"]["content"].append(bash)
    assert task_call_order(recording) == ["find the loader", "find the tests", "plan"]
    nameless = exchange("default", "task", [("x", "p")])
    del nameless["reply"]["body"]["content"][1]["input"]["description"]
    assert task_call_order([nameless]) == [""]


def test_a_recording_is_put_in_the_models_order_whatever_order_the_threads_sent_it_in():
    main_1 = exchange("default", "task", [("first", "P1"), ("second", "P2")])
    second_a = exchange("P2", "P2")
    first_a = exchange("P1", [{"type": "text", "text": "P"}, {"type": "text", "text": "1"}])
    second_b = exchange("P2", "P2")
    first_b = exchange("P1", "P1")
    stray = exchange("P9", "no Task started this")
    main_2 = exchange("default", "task", [("third", "P3")])
    third = exchange("P3", "P3")
    recording = [main_1, stray, second_a, first_a, second_b, first_b, main_2, third]
    assert in_model_order(recording) == [
        main_1, first_a, first_b, second_a, second_b, stray, main_2, third]
    assert in_model_order([main_1, third, second_a]) == [main_1, second_a, third]


# -- the same transcript on every run --


def test_the_lines_parallel_subagents_print_are_put_in_the_models_order():
    printed = (
        "> bash {}\n"
        '> Task {"description": "b"}\n'
        '> Task {"description": "a"}\n'
        "[explore] a … started\n"
        "[explore] b … started\n"
        "[explore] b done (1 tool, 12.3 s)\n"
        '> Task {"description": "c"}\n'
        "[plan] c … started\n"
        "[read_only_bash: read-only is enforced by bubblewrap here]\n"
        "the end\n"
    )
    assert steady(printed, ["a", "b", "c"]) == (
        "> bash {}\n"
        '> Task {"description": "a"}\n'
        "[explore] a … started\n"
        '> Task {"description": "b"}\n'
        "[explore] b … started\n"
        "[explore] b done (1 tool, n.n s)\n"
        '> Task {"description": "c"}\n'
        "[plan] c … started\n"
        "the end\n"
    )
    # without the model's order: by their text, each status line after its call
    assert steady(printed).splitlines()[1:5] == [
        '> Task {"description": "a"}', "[explore] a … started",
        '> Task {"description": "b"}', "[explore] b … started"]
    # a call the model's order does not name goes after those it names; a line of no call last
    unnamed = '> Task {"description": "z"}\n> Task {"description": "y"}\n[x] q … started\n'
    assert steady(unnamed, ["z"]).splitlines() == [
        '> Task {"description": "z"}', '> Task {"description": "y"}', "[x] q … started"]
    assert steady(unnamed, ["y"]).splitlines()[:2] == [
        '> Task {"description": "y"}', '> Task {"description": "z"}']


# -- the demo, run --


def test_the_v1_transcript_starts_with_its_command_and_its_recording_hides_the_folder(
        tmp_path):
    record = tmp_path / "v1.json"
    transcript = demo_transcript("v1", record)
    assert transcript.startswith("$ python -m scripted.demo v1\n[offline demo: ")
    assert "[claude-sonnet-5-5 in /tmp/agent-demo-v1]\n" in transcript  # not its random name
    assert "agent-demo-v1-" not in transcript and transcript.endswith("]\n")
    recording = json.loads(record.read_text(encoding="utf-8"))
    assert recording and all(exchange["track"] == "default" for exchange in recording)
    raw = "".join(exchange["raw"] for exchange in recording)
    assert "/tmp/agent-demo-v1-xxxxxxxx" in raw
    assert transcript.count("[tokens: in ") == len(recording)


# -- writing .generated/ --


def test_generated_holds_exactly_the_files_expected_each_replaced_whole(tmp_path, monkeypatch):
    folder = tmp_path / ".generated"
    (folder / "diffs").mkdir(parents=True)
    (folder / "diffs" / "v0-to-v1.diff").write_text("a pair that is gone", encoding="utf-8")
    (folder / "diffs" / ".v1-to-v2.diff.77.partial").write_text("another build's", "utf-8")
    (folder / "numbers.json").write_text("old", encoding="utf-8")
    expected = {folder / "numbers.json": "{}\n", folder / "hood" / "en" / "v1.html": "a\r\nb\n"}
    monkeypatch.setattr(generated, "GENERATED", folder)
    monkeypatch.setattr(generated, "expected_files", lambda: expected)
    write_all()
    made = sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*")
                  if path.is_file())
    assert made == ["diffs/.v1-to-v2.diff.77.partial", "hood/en/v1.html", "numbers.json"]
    for path, text in expected.items():
        assert path.read_bytes() == text.encode("utf-8")  # "\r\n" kept, "\n" not turned into it


# -- every file at once: expected_files(), its costly steps stood in for --

SNIPPET = re.compile(r'^\s*-+8<-+\s+"([^"]+)"\s*$', re.M)
HYGIENE = {"previous": "v2", "inline": 41_234, "delegated": 4_941,
           "requests": {"inline": [{"track": "default", "size": 41_234}],
                        "delegated": [{"track": "default", "size": 4_941}]}}


def demo_recording(version: str) -> list[dict]:
    """A demo's recording, in small: one request that declares a tool of the version's own
    (v4's Skill tool, with the names of its skills), and its reply."""
    tools = [{"name": "bash", "input_schema": {"type": "object"}},
             {"name": f"{version}_tool", "input_schema": {"type": "object"}}]
    if version == "v4":
        tools.append({"name": "Skill", "input_schema": {
            "type": "object", "required": ["name"],
            "properties": {"name": {"type": "string", "enum": ["commit-message", "pdf"]}}}})
    raw = json.dumps({"model": "m", "max_tokens": 10, "tools": tools,
                      "messages": [{"role": "user", "content": f"the {version} task"}]})
    reply = {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
             "usage": {"input_tokens": 10, "output_tokens": 2}}
    return [{"track": "default", "size": len(raw), "raw": raw,
             "reply": {"status": 200, "body": reply}}]


class Warm:
    """scripted/warm.py's process, in which no stand-in starts anything."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def offline_runs(monkeypatch) -> dict[str, list]:
    """expected_files() with its runs stood in for: the demos, the benchmarks and the figures
    read from the code take tens of CPU-seconds (test_generators.py and the site build check
    those). Each demo gives a transcript and a recording of one request, the benchmarks and
    page_numbers() give what they are handed, and a card's counts are the pair's names. Returns
    what each was asked, as it is asked."""
    asked: dict[str, list] = {"demos": [], "benchmarks": [], "figures": []}

    def run_demo(version, record, python):
        assert isinstance(python, Warm)
        asked["demos"].append(version)
        record.write_text(json.dumps(demo_recording(version)), encoding="utf-8")
        return f"$ python -m scripted.demo {version}\n"

    def run_benchmarks(names, python):
        assert isinstance(python, Warm)
        asked["benchmarks"].append(names)
        if names == generated.MCP_BENCHMARK:
            return {"mcp": "the MCP figures", "mcp_table": "the MCP table\n"}
        return {"hygiene": HYGIENE, "caching": "the caching figures",
                "compaction": "the compaction figures", "compaction_table": "the table\n"}

    def page_numbers(*figures):
        asked["figures"].append(figures)
        return {"hygiene.inline": "41,234"}

    def what_changed(old_file, new_file, sections, diff):
        assert diff == version_diff(old_file, new_file)
        assert sections == [list(script_sections(path)) for path in (old_file, new_file)]
        return Changes([f"{new_file.stem}_schema"], [], [], [], 1, 2)

    monkeypatch.setattr(generated, "WarmPython", Warm)
    monkeypatch.setattr(generated, "demo_transcript", run_demo)
    monkeypatch.setattr(generated, "benchmark_figures", run_benchmarks)
    monkeypatch.setattr(generated, "page_numbers", page_numbers)
    monkeypatch.setattr(generated, "what_changed", what_changed)
    return asked


def test_every_file_a_page_includes_is_made_with_the_figures_of_its_runs(offline_runs):
    """What the pages include is all made, under the names they include it by, from the runs."""
    files = generated.expected_files()
    versions = demo_versions()
    assert sorted(offline_runs["demos"]) == versions == list(SCRIPTS)
    assert sorted(offline_runs["benchmarks"], key=len) == sorted(
        [generated.BENCHMARKS, generated.MCP_BENCHMARK], key=len)
    transcripts = {version: f"$ python -m scripted.demo {version}\n" for version in versions}
    assert offline_runs["figures"] == [(HYGIENE, transcripts, "the caching figures",
                                        "the compaction figures", "the MCP figures")]
    made = {Path(path).relative_to(GENERATED).as_posix() for path in files}
    for language in ("en", "ja"):
        for page in sorted((ROOT / f"docs_{language}").glob("*.md")):
            for name in SNIPPET.findall(page.read_text(encoding="utf-8")):
                file = name.split(":")[0]  # "FILE:section" takes a part of a file
                assert file in made or (ROOT / file).is_file(), (page.name, name)
    assert files[GENERATED / "numbers.json"].endswith("}\n")
    numbers = json.loads(files[GENERATED / "numbers.json"])
    assert numbers["hygiene.inline"] == "41,234"
    for script in SCRIPTS.values():
        for name, first in section_first_lines(ROOT / script).items():
            assert numbers[f"lines.{Path(script).stem}/{name}"] == str(first)
    assert "'deploy-to-prod'" in numbers["v4.unknown_skill_error"]
    assert "commit-message" in numbers["v4.unknown_skill_error"]
    assert numbers["endpoints.litellm.context"] == "8,192"
    for version, transcript in transcripts.items():
        assert files[transcript_path(version)] == transcript
    assert files[GENERATED / "bench" / "compaction.txt"] == "the table\n"
    assert files[GENERATED / "bench" / "mcp_budget.txt"] == "the MCP table\n"
    for old, new in diff_pairs():
        assert files[diff_path(old, new)] == version_diff(ROOT / SCRIPTS[old], ROOT / SCRIPTS[new])
        card = files[GENERATED / "changes" / "ja" / f"{old}-to-{new}.html"]
        assert f"<code>{Path(SCRIPTS[new]).stem}_schema</code>" in card
        assert f"<code>{new}_tool</code>" in card  # declared in the demo, in no schema
        assert f"<code>{old}_tool</code>" not in card
    for script in SCRIPTS.values():
        for name, code in script_sections(ROOT / script).items():
            assert files[section_path(script, name)] == code
    assert json.loads(files[GENERATED / "hood" / "records" / "v3.json"]) == demo_recording("v3")
    assert 'data-calls="1"' in files[GENERATED / "hood" / "ja" / "v3-rest.html"]
    assert "41,234" in files[GENERATED / "charts" / "en" / "context-hygiene.html"]


def test_a_demo_that_fails_stops_the_build_with_what_it_printed(monkeypatch):
    limits = []

    def failing_demo(version, workdir, record, output, timeout, python):
        limits.append(timeout)
        output.write("Traceback: the scripted server refused the request\n")
        return 3

    monkeypatch.setattr(generated, "run_demo", failing_demo)
    with pytest.raises(RuntimeError) as failed:
        demo_transcript("v2")
    assert limits == [300]  # a demo that hangs is stopped after five minutes
    assert str(failed.value) == (
        "`python -m scripted.demo v2` exited with 3:\n"
        "Traceback: the scripted server refused the request\n")


# -- what the run's survivors showed untested --


def test_a_section_keeps_the_indent_of_its_first_line_and_a_leading_x(tmp_path):
    script = tmp_path / "v1_basic.py"
    script.write_text("# -- body -- inside a class\n\n    def run(self):\n        return 1  \n"
                      "# -- names -- a constant\nX_LIMIT = 3\nMAX = 4X\n", encoding="utf-8")
    assert script_sections(script) == {
        "body": "    def run(self):\n        return 1  \n",  # indent and trailing spaces kept
        "names": "X_LIMIT = 3\nMAX = 4X\n",
    }


def test_three_parallel_calls_each_come_right_before_their_status_line():
    printed = (
        '> Task {"description": "c"}\n'
        '> Task {"description": "b"}\n'
        '> Task {"description": "a"}\n'
        "[explore] c … started\n"
        "[explore] a … started\n"
        "[explore] b … started\n"
    )
    assert steady(printed, ["a", "b", "c"]).splitlines() == [
        '> Task {"description": "a"}', "[explore] a … started",
        '> Task {"description": "b"}', "[explore] b … started",
        '> Task {"description": "c"}', "[explore] c … started",
    ]


def test_a_description_with_a_bracket_in_it_still_finds_its_status_line():
    printed = (
        '> Task {"description": "read [docs] all"}\n'
        '> Task {"description": "fix a] b"}\n'
        "[explore] read [docs] all … started\n"
        "[explore] fix a] b … started\n"
    )
    assert steady(printed, ["fix a] b", "read [docs] all"]).splitlines() == [
        '> Task {"description": "fix a] b"}', "[explore] fix a] b … started",
        '> Task {"description": "read [docs] all"}', "[explore] read [docs] all … started",
    ]


def test_a_recordings_order_reads_error_replies_and_a_prompt_among_other_blocks():
    main_1 = exchange("default", "task", [("first", "P1"), ("second", "P2")])
    overloaded = exchange("default", "task", status=529)
    overloaded["reply"]["body"] = {"type": "error", "error": {"type": "overloaded_error"}}
    first = exchange("P1", [{"type": "image", "source": {}}, {"type": "text", "text": "P1"}])
    second = exchange("P2", "P2")
    assert in_model_order([overloaded, main_1, second, first]) == [
        overloaded, main_1, first, second]


def test_only_a_task_call_starts_a_subagent_and_one_without_a_prompt_keeps_its_place():
    main = exchange("default", "task", [("first", "P1")])
    bash = {"type": "tool_use", "id": "b", "name": "bash", "input": {"command": "ls"}}
    main["reply"]["body"]["content"].insert(1, bash)
    blank = exchange("X", "")  # no Task call gave this prompt: it goes last
    first = exchange("P1", "P1")
    assert in_model_order([main, blank, first]) == [main, first, blank]
    promptless = exchange("default", "task", [("first", "P1"), ("second", "P2")])
    del promptless["reply"]["body"]["content"][1]["input"]["prompt"]
    unnamed = exchange("X", "")  # the first call's, its prompt read as ""
    second = exchange("P2", "P2")
    assert in_model_order([promptless, second, unnamed]) == [promptless, unnamed, second]


def test_a_demos_transcript_shows_parallel_calls_in_the_order_its_recording_made_them(
        tmp_path, monkeypatch):
    def parallel_demo(version, workdir, record, output, timeout, python):
        calls = exchange("default", "task", [("zebra", "Pz"), ("alpha", "Pa")])
        calls["size"] = len(calls["raw"])
        record.write_text(json.dumps([calls]), encoding="utf-8")
        output.write('> Task {"description": "alpha"}\n> Task {"description": "zebra"}\n'
                     "[explore] alpha … started\n[explore] zebra … started\n")
        return 0

    monkeypatch.setattr(generated, "run_demo", parallel_demo)
    transcript = demo_transcript("v3", tmp_path / "v3.json")
    assert transcript.splitlines() == [
        "$ python -m scripted.demo v3",
        '> Task {"description": "zebra"}', "[explore] zebra … started",
        '> Task {"description": "alpha"}', "[explore] alpha … started",
    ]


def test_a_pair_with_one_demo_missing_gets_its_card_without_tools_served_at_run_time(
        offline_runs, monkeypatch):
    versions = [version for version in demo_versions() if version != "v1"]
    monkeypatch.setattr(generated, "demo_versions", lambda: versions)
    files = generated.expected_files()
    assert sorted(offline_runs["demos"]) == versions
    for language in ("en", "ja"):
        first = files[GENERATED / "changes" / language / "v1-to-v2.html"]
        assert "<code>v2_tool</code>" not in first  # no v1 demo to compare it with
        assert "<code>v3_tool</code>" in files[GENERATED / "changes" / language / "v2-to-v3.html"]
    assert transcript_path("v1") not in files and transcript_path("v2") in files

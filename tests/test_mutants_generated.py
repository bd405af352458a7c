"""docsgen/generated.py: what the pages include, made in the test's own process: a script's
sections and where each starts, the diffs and transcripts and their paths, the order of a
recording and of the lines parallel subagents print, and how .generated/ is written.

The site build does all of it in a child process, which a mutation run leaves out; these tests
call each step on small inputs that tell its rules apart. expected_files() itself runs every
demo and benchmark (tens of CPU-seconds): the build's tests check what it makes.
"""

import json

import pytest

from docsgen import generated
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

"""Exercise 1: a `search` tool whose output has its own cap. The task is in README.md.

Each test lets the scripted model call `search` once and reads the tool_result out of the next
request, exactly as the model would receive it. A test's name starts with the number of the rule it
checks (test_rule3_... checks rule 3 of README.md), and its failure says what is missing. Every test
after rule 1 needs the tool itself first, and says so when it is not there yet.
"""

import os
import re

import pytest

from tests.agents import call_tool

MATCH_LINE = re.compile(r"([\w./\\-][^:\"']*?):(\d+):")  # the 'path:N:' starting a rule 2 line


def search(api, agent, **tool_input) -> dict:
    """Let the scripted model call search once; return the tool_result it gets back."""
    return call_tool(api, agent, "search", tool_input)


def search_tool_required(agent, rule: int) -> None:
    """The later rules are checked on what search returns when the model calls it with a pattern
    alone, so the tool must take such a call (rule 1)."""
    tools = {tool["name"]: tool for tool in agent.TOOLS}
    assert "search" in tools and "search" in agent.TOOL_HANDLERS, (
        f"rule {rule}: this rule is checked on what the search tool returns, and the script has "
        "no search tool yet: see rule 1 first (a `search` entry in TOOLS and in TOOL_HANDLERS)"
    )
    required = tools["search"]["input_schema"].get("required", [])
    assert set(required) <= {"pattern"}, (
        f"rule {rule}: this rule is checked by calling search with a pattern alone, which its "
        f"schema refuses (it requires {required}): see rule 1 first, only pattern may be required"
    )


def text_of(message: dict) -> str:
    """The text that ends a message of the history: a dict block (ours) or the SDK's object (the
    model's)."""
    block = message["content"][-1]
    return block["text"] if isinstance(block, dict) else block.text


def lines_of(result: dict) -> list[str]:
    return result["content"].splitlines()


def paths_in(result: dict) -> list[str]:
    """The path of each line that starts 'path:N:', in order: which files the matches came from,
    whatever the rest of the line looks like."""
    paths = []
    for line in lines_of(result):
        match = MATCH_LINE.match(line)
        if match:
            paths.append(match[1])
    return paths


@pytest.fixture
def project(tmp_path):
    """A small project in the work directory: two Python files and a text file that matches on
    lines 1 and 10 (sorted as text, line 10 would come first)."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "app.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    (tmp_path / "lib" / "util.py").write_text("def helper():\n    return 'main'\n")
    (tmp_path / "notes.txt").write_text("the main idea\n" + "-\n" * 8 + "main again\n")
    return tmp_path


ALL_MAIN = [
    "app.py:3: def main():",
    "lib/util.py:2:     return 'main'",
    "notes.txt:1: the main idea",
    "notes.txt:10: main again",
]
TEXT_FILES = ["app.py", "lib/util.py", "notes.txt", "notes.txt"]  # the paths of ALL_MAIN


def test_rule1_the_model_is_offered_search_with_a_pattern_and_an_optional_glob(
    scripted_api, agent
):
    scripted_api.play({"turns": [{"text": "Hello."}]})
    messages = []
    assert agent.run_turn(messages, "hi") == 0, (
        "rule 1: the turn failed once search was among the tools; what the API refused: "
        f"{scripted_api.violations}"
    )
    tools = {tool["name"]: tool for tool in scripted_api.requests[0].body["tools"]}
    assert "search" in tools, f"rule 1: the model is offered {sorted(tools)}; add a tool `search`"
    schema = tools["search"]["input_schema"]
    inputs, required = set(schema.get("properties", {})), schema.get("required", [])
    assert {"pattern", "glob"} <= inputs, (
        f"rule 1: search must take the inputs pattern and glob; it takes {sorted(inputs)}"
    )
    assert required == ["pattern"], (
        f"rule 1: `required` must list pattern alone (glob has a default); it is {required}"
    )
    assert "search" in agent.TOOL_HANDLERS, "rule 1: TOOL_HANDLERS has no handler for search"
    history = [text_of(message) for message in messages]
    assert history == ["hi", "Hello."], (
        f"rule 1: offered {sorted(tools)}, a turn must still keep the task and then the model's "
        f"reply; the history holds {history}"
    )


def test_rule2_matches_come_back_as_path_line_text_sorted_by_path_then_line(
    scripted_api, agent, project
):
    search_tool_required(agent, rule=2)
    result = search(scripted_api, agent, pattern="main")
    assert lines_of(result) == ALL_MAIN, (
        "rule 2: one line per match, 'path:line number: the line', sorted by path and then by "
        f"line number (10 after 9), '/' in paths; expected {ALL_MAIN}, got {lines_of(result)}"
    )


def test_rule2_glob_chooses_the_files(scripted_api, agent, project):
    search_tool_required(agent, rule=2)
    result = search(scripted_api, agent, pattern="main", glob="**/*.py")
    if not paths_in(result):
        pytest.skip(
            "rule 2: no line of the result starts 'path:N:', so which files were searched cannot "
            f"be told: see test_rule2_matches_come_back_as_... first. Got {lines_of(result)}"
        )
    assert sorted(set(paths_in(result))) == ["app.py", "lib/util.py"], (
        "rule 2: glob='**/*.py' must search only the .py files (app.py, lib/util.py); matches "
        f"came from {sorted(set(paths_in(result)))}"
    )


def test_rule3_the_whole_result_is_capped_and_the_last_line_says_how_many_more_and_how_to_narrow(
    scripted_api, agent, tmp_path
):
    search_tool_required(agent, rule=3)
    limit = getattr(agent, "SEARCH_MATCH_LIMIT", None)
    assert isinstance(limit, int), "rule 3: the script needs a constant SEARCH_MATCH_LIMIT"
    a_log = [f"event {n}: ok" for n in range(1, 31)]
    b_log = [f"event {n}: ok" for n in range(1, limit + 41)]
    (tmp_path / "a.log").write_text("".join(line + "\n" for line in a_log))
    (tmp_path / "b.log").write_text("".join(line + "\n" for line in b_log))
    lines = lines_of(search(scripted_api, agent, pattern="ok"))
    assert len(lines) == limit + 1, (
        f"rule 3: two files with {limit + 70} matches in all must give SEARCH_MATCH_LIMIT "
        f"({limit}) matches over the whole result, plus one last line; got {len(lines)} lines"
    )
    last = lines[-1]
    assert "70 more matches" in last and "pattern" in last and "glob" in last, (
        f"rule 3: the last line must say '70 more matches' and name the pattern and the glob "
        f"as ways to narrow the search; it is {last!r}"
    )
    in_order = [f"a.log:{number}: {line}" for number, line in enumerate(a_log, start=1)]
    in_order += [f"b.log:{number}: {line}" for number, line in enumerate(b_log, start=1)]
    assert lines[:-1] == in_order[:limit], (
        f"rule 3: the {limit} matches kept must be the first, in rule 2's order (a.log, then b.log)"
    )


MINIFIED = "var a=1;" * 10_000 + "needle();"  # one 80,009-character line, the match at its end
LINE_LIMIT = 500  # characters of the source line a result line may show
NOTE_ROOM = 100  # characters after them for a note that the line was cut


def longest_copy(shown: str, line: str) -> int:
    """The length of the longest stretch of `shown` that is a piece of `line`: how many of the
    line's characters a result line shows, whatever note or ellipsis surrounds them."""
    best = 0
    for start in range(len(shown)):
        while start + best < len(shown) and shown[start : start + best + 1] in line:
            best += 1
    return best


def test_rule4_a_long_line_is_found_and_cut(scripted_api, agent, tmp_path):
    search_tool_required(agent, rule=4)
    (tmp_path / "bundle.min.js").write_text(MINIFIED + "\n")
    result = search(scripted_api, agent, pattern="needle")
    found = [line for line in lines_of(result) if line.startswith("bundle.min.js:1:")]
    assert not result["is_error"] and found, (
        "rule 4: a match at the end of an 80,000-character line must be found (search the "
        f"whole line, then cut it); the result starts {result['content'][:80]!r}"
    )
    shown = found[0].removeprefix("bundle.min.js:1: ")
    assert len(shown) <= LINE_LIMIT + NOTE_ROOM and longest_copy(shown, MINIFIED) <= LINE_LIMIT, (
        f"rule 4: after 'bundle.min.js:1: ' a result line may show {LINE_LIMIT} characters of the "
        f"line and a note of at most {NOTE_ROOM} that it was cut; {len(shown):,} characters follow"
    )


def test_rule5_binary_files_are_skipped(scripted_api, agent, project):
    search_tool_required(agent, rule=5)
    (project / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00main\x00")  # not UTF-8 either
    (project / "data.bin").write_bytes(b"main\x00\x01\x02main\n")  # valid UTF-8, with NUL bytes
    result = search(scripted_api, agent, pattern="main")
    assert not result["is_error"], (
        "rule 5: one binary file made the whole search fail; skip it before you decode it "
        f"(read bytes, look for a NUL byte): {result['content']!r}"
    )
    binary = [path for path in paths_in(result) if path in ("logo.png", "data.bin")]
    assert not binary, f"rule 5: a file with a NUL byte is binary and must be skipped: {binary}"
    assert paths_in(result) == TEXT_FILES, (
        f"rule 5: the text files beside the binary ones must still be searched: expected matches "
        f"from {TEXT_FILES}, got {lines_of(result)}"
    )


@pytest.mark.parametrize(("pattern", "glob"), [("nothing like this", "**/*"), ("main", "**/*.rs")])
def test_rule6_no_match_is_an_answer_not_an_error(scripted_api, agent, project, pattern, glob):
    search_tool_required(agent, rule=6)
    result = search(scripted_api, agent, pattern=pattern, glob=glob)
    assert not result["is_error"] and "no matches" in result["content"].lower(), (
        "rule 6: no match is an answer, not an error: the result must say 'no matches' (any "
        f"case); got is_error={result['is_error']}, {result['content']!r}"
    )


def test_rule6_a_broken_pattern_is_an_error_that_quotes_it(scripted_api, agent, project):
    search_tool_required(agent, rule=6)
    result = search(scripted_api, agent, pattern="def (main")
    assert result["is_error"] and "def (main" in result["content"], (
        "rule 6: a broken regular expression must be an error (ToolError) that quotes the "
        f"pattern 'def (main'; got is_error={result['is_error']}, {result['content']!r}"
    )


WAYS_OUT = {  # how a search could leave the work directory: the glob it is given
    "dot-dot": "../*",
    "dot-dot-recursive": "../**/*.txt",
    "absolute": "{parent}/*",  # the folder that holds the secret, as an absolute path
    "etc": "/etc/*",
    "link": "**/*",  # through link.txt, a symbolic link inside that points to the secret
}


@pytest.mark.parametrize("way_out", WAYS_OUT)
def test_rule7_search_stays_inside_the_work_directory(scripted_api, agent, project, way_out):
    search_tool_required(agent, rule=7)
    secret = project.parent / f"{project.name}-secret.txt"
    secret.write_text("main password\n")
    if way_out == "link":
        try:
            os.symlink(secret, project / "link.txt")
        except OSError:
            pytest.skip("this system does not let you create symbolic links")
    glob = WAYS_OUT[way_out].format(parent=project.parent.as_posix())
    result = search(scripted_api, agent, pattern="password|root", glob=glob)
    inside = project.resolve()
    outside = [
        path for path in paths_in(result) if not (inside / path).resolve().is_relative_to(inside)
    ]
    how = ""
    if way_out == "link":
        how = " through a symbolic link (resolve() a path before you check it)"
    assert "main password" not in result["content"] and not outside, (
        f"rule 7: with glob={glob!r} the search read a file outside the work directory{how}; "
        f"its first line: {result['content'].splitlines()[0]!r}"
    )

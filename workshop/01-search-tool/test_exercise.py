"""Exercise 1: a `search` tool whose output has its own cap. The task is in README.md.

Each test lets the scripted model call `search` once and reads the tool_result out of the next
request, exactly as the model would receive it. A test's name starts with the number of the rule it
checks (test_rule3_... checks rule 3 of README.md), and its failure says what is missing.
"""

import os

import pytest

from tests.agents import call_tool

def search(api, agent, **tool_input) -> dict:
    """Let the scripted model call search once; return the tool_result it gets back."""
    return call_tool(api, agent, "search", tool_input)


def lines_of(result: dict) -> list[str]:
    return result["content"].splitlines()


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


def test_rule1_the_model_is_offered_search_with_a_pattern_and_an_optional_glob(
    scripted_api, agent
):
    scripted_api.play({"turns": [{"text": "Hello."}]})
    assert agent.run_turn([], "hi") == 0
    tools = {tool["name"]: tool for tool in scripted_api.requests[0].body["tools"]}
    assert "search" in tools, f"rule 1: the model is offered {sorted(tools)}; add a tool `search`"
    schema = tools["search"]["input_schema"]
    inputs, required = set(schema.get("properties", {})), schema.get("required", [])
    assert {"pattern", "glob"} <= inputs, (
        f"rule 1: search must take the inputs pattern and glob; it takes {sorted(inputs)}"
    )
    assert required == ["pattern"], (
        f"rule 1: only pattern may be required (glob has a default); required is {required}"
    )
    assert "search" in agent.TOOL_HANDLERS, "rule 1: TOOL_HANDLERS has no handler for search"


def test_rule2_matches_come_back_as_path_line_text_sorted_by_path_then_line(
    scripted_api, agent, project
):
    result = search(scripted_api, agent, pattern="main")
    assert lines_of(result) == ALL_MAIN, (
        "rule 2: one line per match, 'path:line number: the line', sorted by path and then by "
        f"line number (10 after 9), '/' in paths; expected {ALL_MAIN}, got {lines_of(result)}"
    )


def test_rule2_glob_chooses_the_files(scripted_api, agent, project):
    result = search(scripted_api, agent, pattern="main", glob="**/*.py")
    assert lines_of(result) == ALL_MAIN[:2], (
        f"rule 2: glob='**/*.py' must search only the .py files; got {lines_of(result)}"
    )


def test_rule3_the_whole_result_is_capped_and_the_last_line_says_how_many_more_and_how_to_narrow(
    scripted_api, agent, tmp_path
):
    limit = getattr(agent, "SEARCH_MATCH_LIMIT", None)
    assert isinstance(limit, int), "rule 3: the script needs a constant SEARCH_MATCH_LIMIT"
    (tmp_path / "a.log").write_text("".join(f"event {n}: ok\n" for n in range(1, limit + 21)))
    (tmp_path / "b.log").write_text("".join(f"event {n}: ok\n" for n in range(1, 51)))
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


def test_rule4_a_long_line_is_found_and_cut(scripted_api, agent, tmp_path):
    (tmp_path / "bundle.min.js").write_text("var a=1;" * 10_000 + "needle();\n")
    result = search(scripted_api, agent, pattern="needle")
    assert result["content"].startswith("bundle.min.js:1: var a=1;"), (
        "rule 4: a match at the end of an 80,000-character line must be found (search the "
        f"whole line, then cut it); the result starts {result['content'][:80]!r}"
    )
    longest = max(len(line) for line in lines_of(result))
    assert longest <= 500, f"rule 4: a result line may have 500 characters: {longest}"


def test_rule5_binary_files_are_skipped(scripted_api, agent, project):
    (project / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00main\x00")
    result = search(scripted_api, agent, pattern="main")
    found = [line for line in lines_of(result) if line.startswith("logo.png")]
    assert not found, f"rule 5: a file with a NUL byte is binary and must be skipped; got {found}"


@pytest.mark.parametrize(("pattern", "glob"), [("nothing like this", "**/*"), ("main", "**/*.rs")])
def test_rule6_no_match_is_an_answer_not_an_error(scripted_api, agent, project, pattern, glob):
    result = search(scripted_api, agent, pattern=pattern, glob=glob)
    assert not result["is_error"] and "no matches" in result["content"], (
        "rule 6: no match is an answer, not an error: the result must say 'no matches'; "
        f"got is_error={result['is_error']}, {result['content']!r}"
    )


def test_rule6_a_broken_pattern_is_an_error_that_quotes_it(scripted_api, agent, project):
    result = search(scripted_api, agent, pattern="def (main")
    assert result["is_error"] and "def (main" in result["content"], (
        "rule 6: a broken regular expression must be an error (ToolError) that quotes the "
        f"pattern 'def (main'; got is_error={result['is_error']}, {result['content']!r}"
    )


@pytest.mark.parametrize("glob", ["../**/*.txt", "../*", "/etc/*", "**/*"])
def test_rule7_search_stays_inside_the_work_directory(scripted_api, agent, project, glob):
    outside = project.parent / f"{project.name}-secret.txt"
    outside.write_text("main password\n")
    if glob == "**/*":  # the way out is a link inside the work directory
        try:
            os.symlink(outside, project / "link.txt")
        except OSError:
            pytest.skip("this system does not let you create symbolic links")
    result = search(scripted_api, agent, pattern="password", glob=glob)
    how = "through a symbolic link (resolve() a path before you check it)" if glob == "**/*" else ""
    assert "main password" not in result["content"], (
        f"rule 7: with glob={glob!r} the search read a file outside the work directory {how}; "
        f"got {result['content']!r}"
    )

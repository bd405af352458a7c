"""Exercise 1: a `search` tool whose output has its own cap. The task is in README.md.

Each test lets the scripted model call `search` once and reads the tool_result out of the next
request, exactly as the model would receive it.
"""

import pytest

from tests.agents import call_tool

def search(api, agent, **tool_input) -> dict:
    """Let the scripted model call search once; return the tool_result it gets back."""
    return call_tool(api, agent, "search", tool_input)


@pytest.fixture
def project(tmp_path):
    """A small project in the work directory: two Python files, a text file and a binary one."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "app.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    (tmp_path / "lib" / "util.py").write_text("def helper():\n    return 'main'\n")
    (tmp_path / "notes.txt").write_text("the main idea\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00main\x00")
    return tmp_path


def test_the_model_is_offered_search_with_a_pattern_and_a_glob(scripted_api, agent):
    scripted_api.play({"turns": [{"text": "Hello."}]})
    assert agent.run_turn([], "hi") == 0
    tools = {tool["name"]: tool for tool in scripted_api.requests[0].body["tools"]}
    assert "search" in tools, f"the model is offered {sorted(tools)}; add a tool named search"
    schema = tools["search"]["input_schema"]
    assert schema["required"] == ["pattern"] and set(schema["properties"]) == {"pattern", "glob"}


def test_matches_come_back_as_path_line_text_sorted_and_binary_files_are_skipped(
    scripted_api, agent, project
):
    result = search(scripted_api, agent, pattern="main")
    assert not result["is_error"]
    assert result["content"].splitlines() == [
        "app.py:3: def main():",
        "lib/util.py:2:     return 'main'",
        "notes.txt:1: the main idea",
    ]


def test_glob_chooses_the_files(scripted_api, agent, project):
    result = search(scripted_api, agent, pattern="main", glob="**/*.py")
    assert result["content"].splitlines() == [
        "app.py:3: def main():",
        "lib/util.py:2:     return 'main'",
    ]


def test_too_many_matches_are_capped_and_the_last_line_says_how_many_more_and_how_to_narrow(
    scripted_api, agent, tmp_path
):
    limit = agent.SEARCH_MATCH_LIMIT
    (tmp_path / "log.txt").write_text("".join(f"event {n}: ok\n" for n in range(1, limit + 71)))
    lines = search(scripted_api, agent, pattern="ok")["content"].splitlines()
    assert len(lines) == limit + 1
    assert (
        lines[0] == "log.txt:1: event 1: ok"
        and lines[limit - 1] == f"log.txt:{limit}: event {limit}: ok"
    )
    assert "70 more matches" in lines[-1] and "glob" in lines[-1] and "pattern" in lines[-1]


def test_a_long_line_is_cut_so_one_minified_file_cannot_fill_the_result(
    scripted_api, agent, tmp_path
):
    (tmp_path / "bundle.min.js").write_text("var a=1;" * 10_000 + "needle();\n")
    result = search(scripted_api, agent, pattern="needle")
    assert result["content"].startswith("bundle.min.js:1: var a=1;")
    assert len(result["content"]) < 500


@pytest.mark.parametrize(("pattern", "glob"), [("nothing like this", "**/*"), ("main", "**/*.rs")])
def test_no_match_is_an_answer_not_an_error(scripted_api, agent, project, pattern, glob):
    result = search(scripted_api, agent, pattern=pattern, glob=glob)
    assert not result["is_error"] and "no matches" in result["content"]


def test_a_broken_pattern_is_an_error_that_names_it(scripted_api, agent, project):
    result = search(scripted_api, agent, pattern="def (main")
    assert result["is_error"] and "def (main" in result["content"]


@pytest.mark.parametrize("glob", ["../**/*.txt", "../*", "/etc/*"])
def test_search_stays_inside_the_work_directory(scripted_api, agent, project, glob):
    (project.parent / f"{project.name}-secret.txt").write_text("main password\n")
    result = search(scripted_api, agent, pattern="password", glob=glob)
    assert "password" not in result["content"].replace(repr("password"), "")

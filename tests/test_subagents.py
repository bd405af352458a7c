"""Subagents: the Task tool, seen from both sides.

The scripted model plays the main agent on the default track and each subagent on a track that
matches the subagent's prompt (every prompt here starts with a word such as CHILD:). So a test can
read what each side sent: what the subagent was given, and what came back to the main agent. """

import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.agents import (
    git_repository_with_one_commit,
    once,
    press_ctrl_c,
    results_sent,
    system_text,
    versions_from,
)

SCENARIOS = Path(__file__).parent / "scenarios"


def task(
    prompt: str = "CHILD: look around.",
    agent_type: str = "explore",
    description: str = "look around",
) -> dict:
    return {
        "name": "Task",
        "input": {"description": description, "prompt": prompt, "agent_type": agent_type},
    }


def delegate(child_turns: list, agent_type: str = "explore") -> dict:
    """A scenario: the main agent makes one Task call, the subagent plays child_turns, the main
    agent ends."""
    return {
        "turns": [{"tool_calls": [task(agent_type=agent_type)]}, {"text": "Main agent done."}],
        "tracks": [{"match": "CHILD:", "turns": child_turns}],
    }


def child_requests(api) -> list:
    return [request for request in api.requests if request.track != "default"]


def task_results(api) -> list[dict]:
    """The tool_results in the main agent's last request: what it got back from its calls."""
    return [block for block in results_sent(api) if block["type"] == "tool_result"]


def files(folder: Path) -> dict:
    return {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("version", versions_from("v3"))
# -- isolation: a fresh context in, one report out --
def test_the_subagent_sees_only_its_prompt_and_the_main_agent_only_its_report(
    scripted_api, agent, tmp_path
):
    (tmp_path / "app.py").write_text("def greet():\n    return 'hi'\n# FILE BODY MARKER\n")
    scripted_api.play(SCENARIOS / "subagents_isolation.yaml")
    history = []
    assert agent.run_turn(history, "Remember the codename BLUEBIRD.") == 0
    assert agent.run_turn(history, "Where is greet defined?") == 0
    children = child_requests(scripted_api)
    assert len(children) == 3
    prompt = "CHILD: Find where the function greet is defined in this folder. Report file and line."
    assert children[0].body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": prompt}]}
    ]
    assert not any(b"BLUEBIRD" in request.raw for request in children)
    assert children[0].body["system"] != scripted_api.requests[0].body["system"]
    assert (
        b"FILE BODY MARKER" not in scripted_api.requests[-1].raw
    )  # the file stayed in the subagent's context
    (result,) = history[-2]["content"]
    assert result["content"] == "greet is defined in app.py, line 1." and not result["is_error"]


@pytest.mark.parametrize("version", versions_from("v3"))
@pytest.mark.parametrize(
    ("agent_type", "tools"),
    [
        ("explore", {"read_only_bash", "read_file"}),
        ("plan", {"read_only_bash", "read_file"}),
        ("code", {"bash", "read_file", "write_file", "edit_file"}),
    ],
)
def test_each_agent_type_gets_its_own_tools_and_system_prompt(
    scripted_api, agent, agent_type, tools
):
    scripted_api.play(delegate([{"text": "Report."}], agent_type))
    assert agent.run_turn([], "go") == 0
    (child,) = child_requests(scripted_api)
    assert {
        tool["name"] for tool in child.body["tools"]
    } == tools  # never Task: no subagents of subagents
    assert system_text(child.body) == agent.AGENT_TYPES[agent_type]["system"]
    assert f"a report of at most {agent.REPORT_BUDGET:,} characters" in system_text(child.body)


@pytest.mark.parametrize("version", versions_from("v3"))
def test_the_task_tool_lists_the_types_and_says_the_subagent_starts_with_no_context(
    scripted_api, agent
):
    scripted_api.play({"turns": [{"text": "Hi."}]})
    agent.run_turn([], "hi")
    tools = {tool["name"]: tool for tool in scripted_api.requests[0].body["tools"]}
    assert "read_only_bash" not in tools  # the main agent has the full bash
    task_tool = tools["Task"]
    assert task_tool["input_schema"]["properties"]["agent_type"]["enum"] == [
        "explore",
        "plan",
        "code",
    ]
    for needle in (
        "- explore: read-only",
        "- plan: read-only",
        "- code: ",
        "starts with no context",
        "only its final report",
        "run in parallel",
    ):
        assert needle in task_tool["description"]


@pytest.mark.parametrize("version", versions_from("v3"))
def test_a_subagent_that_calls_task_anyway_gets_unknown_tool(scripted_api, agent):
    scripted_api.play(
        delegate(
            [
                {"tool_calls": [{**task("GRANDCHILD: go deeper."), "invalid": True}]},
                {
                    "expect": {
                        "tool_result_contains": "unknown tool 'Task'",
                        "tool_result_is_error": True,
                    },
                    "text": "Report.",
                },
            ]
        )
    )
    assert agent.run_turn([], "go") == 0
    assert [request.track for request in scripted_api.requests] == [
        "default",
        "CHILD:",
        "CHILD:",
        "default",
    ]


@pytest.mark.parametrize("version", versions_from("v3"))
def test_an_unknown_agent_type_is_refused_by_the_schema(scripted_api, agent):
    scripted_api.play(
        {"turns": [{"tool_calls": [{**task(agent_type="debug"), "invalid": True}]}, {"text": "ok"}]}
    )
    assert agent.run_turn([], "go") == 0
    (result,) = task_results(scripted_api)
    assert result["is_error"]
    assert (
        "invalid input for Task (agent_type): 'debug' is not one of ['explore', 'plan', 'code']"
        in result["content"]
    )


# -- read-only means read-only --
def read_only_result(api, agent, command: str) -> dict:
    """Let an explore subagent run one read_only_bash command; return the tool_result it gets
    back."""
    api.play(
        delegate(
            [
                {"tool_calls": [{"name": "read_only_bash", "input": {"command": command}}]},
                {"text": "Report."},
            ]
        )
    )
    assert agent.run_turn([], "go") == 0
    (result,) = child_requests(api)[-1].body["messages"][-1]["content"]
    return result


@once("v3")
@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("cat a.txt > b.txt", "> and >> write the output into a file"),
        ("cat a.txt >> a.txt", "> and >> write the output into a file"),
        ("cat < a.txt", "< is not supported"),
        ("echo x | tee f", "'tee' is not one of the read-only commands"),
        ("sed -i s/alpha/beta/ a.txt", "'sed' is not one of the read-only commands"),
        ("python -c \"open('f','w')\"", "'python' is not one of the read-only commands"),
        ("bash -c 'touch f'", "'bash' is not one of the read-only commands"),
        ("awk 'BEGIN { system(\"touch f\") }'", "'awk' is not one of the read-only commands"),
        ("/bin/rm a.txt", "'/bin/rm' is not one of the read-only commands"),
        ("FOO=1 touch f", "'FOO=1' is not one of the read-only commands"),
        ("ls | xargs rm", "'xargs' is not one of the read-only commands"),
        ("git checkout -- a.txt", "'git checkout' is not one of the read-only commands"),
        ("echo $(rm a.txt)", "$( ) runs a command"),
        ('echo "$(rm a.txt)"', "$( ) runs a command"),
        ("echo `touch f`", "backticks run a command"),
        ("ls; rm a.txt", "; runs a second command"),
        ("ls && touch f", "& and && run a second command"),
        ("touch f &", "& and && run a second command"),
        ("ls || touch f", "|| and |& run a second command"),
        ("(touch f)", "( ) runs commands in a subshell"),
        ("ls\nrm a.txt", "a line break starts a second command"),
        ("find . -delete", "find -delete"),
        ("find . -exec rm {} +", "find -exec"),
        ("find . -fprint f", "find -fprint"),
        ("sort a.txt -o f", "sort -o"),
        ("sort -ro f a.txt", "sort -o"),
        ("sort --out=f a.txt", "sort --output"),
        ("uniq a.txt f", "uniq writes into its second file name"),
        (
            "uniq - a.txt",
            "uniq writes into its second file name",
        ),  # "-" is standard input: a.txt is the output
        ("uniq -c - a.txt", "uniq writes into its second file name"),
        (
            "uniq -- a.txt -x",
            "uniq writes into its second file name",
        ),  # after --, -x is a file name
        ("cat a.txt | uniq - b.txt", "uniq writes into its second file name"),
        ("git diff --output=f", "git diff --output"),
        ("cat 'a.txt", "cannot parse the command"),
        ("| wc -l", "an empty command"),
    ],
)
def test_read_only_bash_refuses_whatever_could_change_a_file(
    scripted_api, agent, tmp_path, command, why
):
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    before = files(tmp_path)
    result = read_only_result(scripted_api, agent, command)
    assert result["is_error"]
    assert result["content"].startswith("error: refused: ") and why in result["content"]
    assert files(tmp_path) == before


@pytest.mark.parametrize("version", versions_from("v3"))
@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls", "a.txt"),
        ("cat a.txt | wc -l", "2"),
        ("grep -n beta a.txt", "2:beta"),
        ("find . -name '*.txt'", "./a.txt"),
        ("sort -r a.txt | uniq -c | head -n 1", "1 beta"),
        ("echo $HOME *.txt", "$HOME *.txt"),  # every word reaches the command exactly as written
        ("git status", "[exit code"),  # not a repository here, but git status was run, not refused
    ],
)
def test_read_only_bash_runs_read_commands(scripted_api, agent, tmp_path, command, expected):
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    before = files(tmp_path)
    result = read_only_result(scripted_api, agent, command)
    assert expected in result["content"] and not result["content"].startswith("refused")
    assert files(tmp_path) == before


@once("v3")
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_read_only_git_status_leaves_the_index_alone(scripted_api, agent, tmp_path):
    git_repository_with_one_commit(tmp_path)
    os.utime(
        tmp_path / "a.txt", (1, 1)
    )  # a changed timestamp: git status would refresh the index for it
    before = files(tmp_path)
    assert "nothing to commit" in read_only_result(scripted_api, agent, "git status")["content"]
    assert files(tmp_path) == before


@pytest.mark.parametrize("version", versions_from("v3"))
# -- limits and failures: a subagent's trouble becomes an error result, never a crash --
def test_a_blank_prompt_is_refused_before_any_subagent_starts(scripted_api, agent):
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [{**task(prompt=" \n "), "invalid": True}]},
                {"text": "Main agent done."},
            ]
        }
    )
    assert agent.run_turn([], "go") == 0
    (result,) = task_results(scripted_api)
    assert result["is_error"]
    assert result["content"].startswith("error: invalid input for Task (prompt)")
    assert child_requests(scripted_api) == []


@pytest.mark.parametrize("version", versions_from("v3"))
def test_a_blank_report_is_reported_as_no_report(scripted_api, agent):
    scripted_api.play(delegate([{"text": "  \n "}]))
    assert agent.run_turn([], "go") == 0
    (result,) = task_results(scripted_api)
    assert result["content"] == "(the explore subagent finished without a report)"


@once("v3")
def test_the_last_words_of_a_failed_subagent_say_when_they_are_cut(scripted_api, make_agent):
    agent = make_agent(SUBAGENT_MAX_ROUNDS=1)
    scripted_api.play(
        delegate(
            [
                {
                    "text": "x" * 10_000,
                    "tool_calls": [{"name": "read_only_bash", "input": {"command": "ls"}}],
                }
            ]
        )
    )
    assert agent.run_turn([], "go") == 0
    (result,) = task_results(scripted_api)
    assert "Its last message:\nxxx" in result["content"]
    assert "x…\n[cut here: 10,000 characters in all]\nTry again" in result["content"]


@pytest.mark.parametrize("version", versions_from("v3"))
def test_the_subagent_round_cap_ends_it_with_an_error_that_keeps_its_last_words(
    scripted_api, make_agent, capsys
):
    agent = make_agent(SUBAGENT_MAX_ROUNDS=2)
    scripted_api.play(
        delegate(
            [
                {
                    "text": "Still looking in src/.",
                    "repeat": 2,
                    "tool_calls": [{"name": "read_only_bash", "input": {"command": "ls"}}],
                }
            ]
        )
    )
    assert agent.run_turn([], "go") == 0
    (result,) = task_results(scripted_api)
    assert result["is_error"]
    assert (
        "the explore subagent stopped without a report: no final answer within the round cap "
        "of 2 model calls." in result["content"]
    )
    assert "MAX_ROUNDS" not in result["content"] and "say how" not in result["content"]
    assert "Its last message:\nStill looking in src/." in result["content"]
    assert len(child_requests(scripted_api)) == 2
    assert "[explore] look around failed (2 tools, " in capsys.readouterr().out


@pytest.mark.parametrize("version", versions_from("v3"))
def test_a_subagent_whose_api_calls_fail_returns_an_error_result(scripted_api, agent, capsys):
    scripted_api.play(SCENARIOS / "subagents_child_fails.yaml")
    assert agent.run_turn([], "go") == 0
    assert (
        "the explore subagent stopped without a report" in task_results(scripted_api)[0]["content"]
    )
    assert "The explorer failed; I'll look myself." in capsys.readouterr().out


@pytest.mark.parametrize("version", versions_from("v3"))
def test_a_subagent_cut_off_by_max_tokens_returns_an_error_result(scripted_api, agent):
    scripted_api.play(delegate([{"text": "Half a rep", "stop_reason": "max_tokens"}]))
    assert agent.run_turn([], "go") == 0
    (result,) = task_results(scripted_api)
    assert result["is_error"] and "cut short at max_tokens" in result["content"]
    assert result["content"].endswith(
        "Half a rep\nTry again with a smaller task, or do it yourself."
    )


@pytest.mark.parametrize("version", versions_from("v3"))
def test_a_subagent_sends_its_thinking_back_as_it_came(scripted_api, agent):
    """The scripted server refuses a thinking block that comes back changed or not at all."""
    looking = {
        "thinking": "Where would the code be?",
        "text": "Listing the folder.",
        "tool_calls": [{"name": "read_only_bash", "input": {"command": "ls"}}],
    }
    scripted_api.play(delegate([looking, {"text": "It is in app.py."}]))
    assert agent.run_turn([], "go") == 0
    sent_back = child_requests(scripted_api)[1].body["messages"][1]["content"]
    assert [block["type"] for block in sent_back] == ["thinking", "thinking", "tool_use"]
    assert task_results(scripted_api)[0]["content"] == "It is in app.py."


@once("v3")
def test_an_error_event_in_a_subagent_stream_is_retried(scripted_api, agent):
    broken = {"text": "Half a report", "error": {"status": 529, "midstream": True}}
    scripted_api.play(delegate([broken, {"text": "The whole report."}]))
    assert agent.run_turn([], "go") == 0
    first, second = (request.body for request in child_requests(scripted_api))
    assert first == second
    (result,) = task_results(scripted_api)
    assert result["content"] == "The whole report." and not result["is_error"]


@pytest.mark.parametrize("version", versions_from("v3"))
def test_a_huge_report_is_cut_to_the_context_budget(scripted_api, agent):
    scripted_api.play(delegate([{"text": "finding " * 10_000}]))
    assert agent.run_turn([], "go") == 0
    (result,) = task_results(scripted_api)
    content = result["content"]
    assert content.startswith("finding finding ")
    assert content.endswith("…\n[cut here: 80,000 characters in all]")
    assert len(content) == agent.REPORT_BUDGET  # the report budget, not the context budget


@pytest.mark.parametrize("version", versions_from("v3"))
# -- parallel Task calls, and what the user sees --
def test_task_calls_of_one_reply_run_at_the_same_time_and_answer_in_order(
    scripted_api, agent, capsys
):
    scripted_api.play(SCENARIOS / "subagents_parallel.yaml")
    history = []
    assert agent.run_turn(history, "go") == 0
    children = child_requests(scripted_api)
    assert len(children) == 3
    assert max(child.received for child in children) < min(child.answered for child in children)
    calls = [block.id for block in history[1]["content"] if block.type == "tool_use"]
    results = history[2]["content"]
    assert [result["tool_use_id"] for result in results] == calls
    assert [result["content"] for result in results] == [
        "report A",
        "report B",
        "report C",
        "after the subagents\n[exit code 0]",
    ]
    out = capsys.readouterr().out
    for label in ("[explore] question A", "[plan] question B", "[code] question C"):
        assert out.count(f"{label} … started\n") == 1 and out.count(f"{label} done (0 tools, ") == 1
    assert out.index("done (") < out.index("> bash")  # the bash call ran after the subagents
    assert "\r" not in out  # not a terminal: plain lines only


@pytest.mark.parametrize("version", versions_from("v3"))
@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
@pytest.mark.allow_leftover_turns  # the subagents' second turns: they stop before asking for them
@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_stops_running_subagents_and_answers_every_call(
    scripted_api, agent, tmp_path, capsys
):
    scripted_api.play(
        {
            "turns": [
                {
                    "tool_calls": [
                        task("CHILD-1: write one.", "code"),
                        task("CHILD-2: write two.", "code"),
                    ]
                },
                {"expect": {"last_user_contains": "never mind"}, "text": "Stopped."},
            ],
            "tracks": [
                {
                    "match": f"CHILD-{n}",
                    "turns": [
                        {
                            "hold": True,
                            "tool_calls": [
                                {
                                    "name": "write_file",
                                    "input": {"path": f"{n}.txt", "content": "x"},
                                }
                            ],
                        },
                        {"text": "Wrote it."},
                    ],
                }
                for n in (1, 2)
            ],
        }
    )

    def press_ctrl_c_once_both_subagents_wait_for_the_model():
        while len(child_requests(scripted_api)) < 2:
            time.sleep(0.01)
        press_ctrl_c()

    threading.Thread(
        target=press_ctrl_c_once_both_subagents_wait_for_the_model, daemon=True
    ).start()
    history = []
    threads_before = set(threading.enumerate())
    assert agent.run_turn(history, "write two files") == 130
    subagents = [thread for thread in threading.enumerate() if thread not in threads_before
                 and thread.name.startswith("ThreadPoolExecutor")]
    assert len(subagents) == 2  # both still wait for the model
    assert [result["content"] for result in history[-1]["content"]] == [
        "error: interrupted by the user before this call finished"
    ] * 2
    scripted_api.release()  # only now: the replies come after Ctrl-C however slow the machine is
    for thread in subagents:  # each gets its model's reply, and must stop right there
        thread.join(30)
        assert not thread.is_alive()
    assert not list(tmp_path.glob("*.txt"))
    assert len(child_requests(scripted_api)) == 2
    assert agent.run_turn(history, "never mind") == 0
    assert "Stopped." in capsys.readouterr().out

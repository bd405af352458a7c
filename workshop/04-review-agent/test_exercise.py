"""Exercise 4: a read-only `review` agent type that returns findings. The task is in README.md.

The scripted model plays the main agent on the default track and the subagent on a track that
matches the subagent's prompt (it starts with CHILD:), so a test reads both sides: what the subagent
was given, and what came back to the main agent. """

import pytest

from tests.agents import results_sent

READ_ONLY_TOOLS = {"read_only_bash", "read_file"}
APP = "def average(numbers):\n    return sum(numbers) / len(numbers)\n"
FINDING = (
    "app.py:2: [medium] average([]) divides by zero - return 0.0, or raise a clear error, "
    "for an empty list"
)


def review(prompt: str = "CHILD: Review app.py. Report findings.") -> dict:
    return {
        "name": "Task",
        "input": {"description": "review app.py", "prompt": prompt, "agent_type": "review"},
    }


def delegate(child_turns: list) -> dict:
    """A scenario: the main agent asks for one review, the subagent plays child_turns, the main
    agent ends."""
    return {
        "turns": [{"tool_calls": [review()]}, {"text": "Main agent done."}],
        "tracks": [{"match": "CHILD:", "turns": child_turns}],
    }


def child_requests(api) -> list:
    return [request for request in api.requests if request.track != "default"]


def task_result(api) -> dict:
    (result,) = results_sent(api)
    return result


@pytest.fixture
def project(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    return tmp_path


def test_the_task_tool_offers_review_next_to_the_other_types(scripted_api, agent):
    scripted_api.play({"turns": [{"text": "Hi."}]})
    assert agent.run_turn([], "hi") == 0
    task_tool = next(
        tool for tool in scripted_api.requests[0].body["tools"] if tool["name"] == "Task"
    )
    assert set(task_tool["input_schema"]["properties"]["agent_type"]["enum"]) == {
        "explore",
        "plan",
        "code",
        "review",
    }
    (line,) = [
        line for line in task_tool["description"].splitlines() if line.startswith("- review: ")
    ]
    assert line.startswith("- review: read-only") and "finding" in line


def test_a_review_subagent_gets_the_read_only_tools_and_a_prompt_that_asks_for_findings(
    scripted_api, agent
):
    scripted_api.play(delegate([{"text": "no findings: app.py looks fine."}]))
    assert agent.run_turn([], "review my change") == 0
    (child,) = child_requests(scripted_api)
    assert {tool["name"] for tool in child.body["tools"]} == READ_ONLY_TOOLS
    system = child.body["system"]
    assert system == agent.AGENT_TYPES["review"]["system"] and agent.REPORT_RULES in system
    assert "findings" in system.lower() and "no findings" in system.lower()
    assert system not in (
        agent.AGENT_TYPES["explore"]["system"],
        agent.AGENT_TYPES["plan"]["system"],
    )


def test_a_review_subagent_cannot_change_a_file(scripted_api, agent, project):
    scripted_api.play(
        delegate(
            [
                {
                    "tool_calls": [
                        {
                            "name": "write_file",
                            "input": {"path": "app.py", "content": "fixed"},
                            "invalid": True,
                        }
                    ]
                },
                {
                    "expect": {"tool_result_is_error": True},
                    "tool_calls": [
                        {"name": "read_only_bash", "input": {"command": "sed -i s/len/max/ app.py"}}
                    ],
                },
                {"expect": {"tool_result_is_error": True}, "text": FINDING},
            ]
        )
    )
    assert agent.run_turn([], "review my change") == 0
    assert len(child_requests(scripted_api)) == 3  # the subagent tried twice, and reported
    assert (project / "app.py").read_text() == APP


def test_the_findings_come_back_to_the_main_agent_as_the_task_result(scripted_api, agent, project):
    scripted_api.play(
        delegate(
            [
                {"tool_calls": [{"name": "read_file", "input": {"path": "app.py"}}]},
                {
                    "expect": {"tool_result_contains": "sum(numbers) / len(numbers)"},
                    "text": FINDING,
                },
            ]
        )
    )
    assert agent.run_turn([], "review my change") == 0
    result = task_result(scripted_api)
    assert not result["is_error"] and result["content"] == FINDING

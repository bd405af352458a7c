"""Exercise 5: Task(mode=summary|detailed|full), each mode with its own report budget. The task is
in README.md.

The scripted model plays the main agent on the default track and the subagent on a track that
matches the subagent's prompt (it starts with CHILD:). The subagent writes a report far over every
budget, so what reaches the main agent shows the cut. """

import pytest

from tests.agents import results_sent

MODES = ["summary", "detailed", "full"]
HUGE_REPORT = "".join(
    f"src/module_{n}.py:{n}: a finding worth a line\n" for n in range(2000)
)  # ~90,000 characters


def task(**mode) -> dict:
    return {
        "name": "Task",
        "input": {
            "description": "look around",
            "prompt": "CHILD: Find the config loader.",
            "agent_type": "explore",
            **mode,
        },
    }


def delegate(report: str, **mode) -> dict:
    """A scenario: the main agent makes one Task call, the subagent answers with report, the main
    agent ends."""
    return {
        "turns": [{"tool_calls": [task(**mode)]}, {"text": "Main agent done."}],
        "tracks": [{"match": "CHILD:", "turns": [{"text": report}]}],
    }


def child_request(api):
    (child,) = [request for request in api.requests if request.track != "default"]
    return child


def task_result(api) -> dict:
    (result,) = results_sent(api)
    return result


def test_the_task_tool_offers_three_modes_and_mode_is_optional(scripted_api, agent):
    scripted_api.play({"turns": [{"text": "Hi."}]})
    assert agent.run_turn([], "hi") == 0
    task_tool = next(
        tool for tool in scripted_api.requests[0].body["tools"] if tool["name"] == "Task"
    )
    schema = task_tool["input_schema"]
    assert schema["properties"]["mode"]["enum"] == MODES and "mode" not in schema["required"]
    assert "summary" in task_tool["description"] and "default" in task_tool["description"]


def test_the_budgets_grow_from_summary_to_full_and_fit_the_tool_result_budget(agent):
    budgets = [agent.REPORT_BUDGETS[mode] for mode in MODES]
    assert budgets == sorted(set(budgets)) and budgets[-1] <= agent.TOOL_RESULT_BUDGET


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_keeps_the_report_under_its_budget_and_tells_the_subagent(
    scripted_api, agent, mode
):
    budget = agent.REPORT_BUDGETS[mode]
    scripted_api.play(delegate(HUGE_REPORT, mode=mode))
    assert agent.run_turn([], "find the config loader") == 0
    result = task_result(scripted_api)
    assert not result["is_error"] and len(result["content"]) <= budget
    assert result["content"].startswith("src/module_0.py:0: a finding worth a line\n")
    assert f"{budget:,}" in str(child_request(scripted_api).body)  # the subagent knew its budget


def test_without_a_mode_the_report_is_a_summary(scripted_api, agent):
    scripted_api.play(delegate(HUGE_REPORT))
    assert agent.run_turn([], "find the config loader") == 0
    assert len(task_result(scripted_api)["content"]) <= agent.REPORT_BUDGETS["summary"]
    assert f"{agent.REPORT_BUDGETS['summary']:,}" in str(child_request(scripted_api).body)


def test_a_cut_summary_says_how_to_get_more(scripted_api, agent):
    scripted_api.play(delegate(HUGE_REPORT, mode="summary"))
    assert agent.run_turn([], "find the config loader") == 0
    assert "detailed" in task_result(scripted_api)["content"][-300:]


@pytest.mark.parametrize("mode", MODES)
def test_a_report_within_budget_comes_back_whole(scripted_api, agent, mode):
    report = "The config loader is load_config() in src/config.py, line 12."
    scripted_api.play(delegate(report, mode=mode))
    assert agent.run_turn([], "find the config loader") == 0
    assert task_result(scripted_api)["content"] == report


def test_an_unknown_mode_is_refused_by_the_schema(scripted_api, agent):
    scripted_api.play(
        {"turns": [{"tool_calls": [{**task(mode="brief"), "invalid": True}]}, {"text": "ok"}]}
    )
    assert agent.run_turn([], "go") == 0
    result = task_result(scripted_api)
    assert (
        result["is_error"]
        and "'brief' is not one of ['summary', 'detailed', 'full']" in result["content"]
    )

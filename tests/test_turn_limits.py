"""One turn has a ceiling: a budget of model calls that the subagents' calls spend too, reports
held to their budget, and no more subagents at once than the script allows."""

import threading

import pytest

from tests.agents import versions_from
from tests.test_subagents import child_requests, delegate, task, task_results

LS = {"name": "read_only_bash", "input": {"command": "ls"}}
ECHO = {"name": "bash", "input": {"command": "echo x"}}


def test_a_turn_stops_at_its_budget_of_model_calls_and_the_next_one_starts_afresh(
    scripted_api, make_agent, capsys
):
    agent = make_agent(MAX_CALLS_PER_TURN=2)
    scripted_api.play({"turns": [{"tool_calls": [ECHO], "repeat": 2}, {"text": "Done now."}]})
    history = []
    assert agent.run_turn(history, "loop") == 1
    assert len(scripted_api.requests) == 2
    assert ("[stopped: this turn made its 2 model calls, subagents' included "
            "(MAX_CALLS_PER_TURN); your conversation is kept") in capsys.readouterr().err
    assert agent.run_turn(history, "go on") == 0  # the history is valid, and the budget full again


@pytest.mark.parametrize("version", versions_from("v3"))
def test_the_subagents_calls_spend_the_same_budget(scripted_api, make_agent, capsys):
    agent = make_agent(MAX_CALLS_PER_TURN=3)
    child = {"match": "CHILD:", "turns": [{"tool_calls": [LS], "repeat": 2}]}
    scripted_api.play({"turns": [{"tool_calls": [task()]}], "tracks": [child]})
    history = []
    assert agent.run_turn(history, "go") == 1
    assert len(scripted_api.requests) == 3  # one of the main agent, two of the subagent
    (result,) = history[-1]["content"]
    assert result["is_error"]
    assert result["content"].startswith("error: the explore subagent stopped without a report: "
                                        "this turn made its 3 model calls")
    assert "[stopped: this turn made its 3 model calls" in capsys.readouterr().err


@pytest.mark.parametrize("version", versions_from("v3"))
def test_a_long_report_is_cut_to_its_budget_and_says_so(scripted_api, agent):
    budget = agent.REPORT_BUDGET
    scripted_api.play(delegate([{"text": "r" * (2 * budget)}]))
    assert agent.run_turn([], "go") == 0
    (result,) = task_results(scripted_api)
    note = f"…\n[cut here: {2 * budget:,} characters in all]"
    assert result["content"] == "r" * (budget - len(note)) + note


@pytest.mark.parametrize("version", versions_from("v3"))
def test_a_failed_subagents_last_words_are_cut_to_the_same_budget(scripted_api, make_agent):
    agent = make_agent(SUBAGENT_MAX_ROUNDS=1)
    budget = agent.REPORT_BUDGET
    scripted_api.play(delegate([{"text": "w" * (2 * budget), "tool_calls": [LS]}]))
    assert agent.run_turn([], "go") == 0
    (result,) = task_results(scripted_api)
    note = f"…\n[cut here: {2 * budget:,} characters in all]"
    last = "Its last message:\n" + "w" * (budget - len(note)) + note + "\nTry again"
    assert last in result["content"]


@pytest.mark.parametrize("version", versions_from("v3"))
def test_results_come_back_in_call_order_when_other_calls_come_before_the_tasks(
    scripted_api, agent, tmp_path
):
    (tmp_path / "a.txt").write_text("alpha\n")
    read = {"name": "read_file", "input": {"path": "a.txt"}}
    scripted_api.play({"turns": [{"tool_calls": [read, task(), ECHO]}, {"text": "Done."}],
                       "tracks": [{"match": "CHILD:", "turns": [{"text": "report"}]}]})
    history = []
    assert agent.run_turn(history, "go") == 0
    calls = [block.id for block in history[1]["content"] if block.type == "tool_use"]
    results = history[2]["content"]
    assert [result["tool_use_id"] for result in results] == calls
    assert [result["content"] for result in results] == ["     1\talpha", "report",
                                                          "x\n[exit code 0]"]
    assert len(child_requests(scripted_api)) == 1


BEYOND_THE_LIMIT = 0.3  # seconds a full set of subagents waits for one more, which must not come


@pytest.mark.parametrize("version", versions_from("v3"))
def test_no_more_subagents_run_at_once_than_the_script_allows(scripted_api, agent, monkeypatch):
    """Each subagent holds its place until every place it could share is taken: the first
    PARALLEL_SUBAGENTS wait for one another (a condition, not a guess at how long threads take to
    start), so on a busy machine too the most at once is the limit, not fewer. Then they give a
    call beyond the limit, if the script lets one in, a moment to arrive (BEYOND_THE_LIMIT): the
    test passes without it, it only has to be there to catch a limit set too high."""
    changed = threading.Condition()
    running = []
    finished = []
    most = [0]
    calls = [task(f"CHILD {number}") for number in range(agent.PARALLEL_SUBAGENTS + 2)]

    def every_free_place_is_taken() -> bool:
        still_to_run = len(calls) - len(finished)
        return len(running) >= min(agent.PARALLEL_SUBAGENTS, still_to_run)

    def one_too_many_or_all_in() -> bool:
        still_to_run = len(calls) - len(finished)
        return len(running) > agent.PARALLEL_SUBAGENTS or len(running) == still_to_run

    def subagent(description: str, prompt: str, agent_type: str) -> str:
        with changed:
            running.append(prompt)
            most[0] = max(most[0], len(running))
            changed.notify_all()
            assert changed.wait_for(every_free_place_is_taken, timeout=30)
            changed.wait_for(one_too_many_or_all_in, timeout=BEYOND_THE_LIMIT)
            running.remove(prompt)
            finished.append(prompt)
            changed.notify_all()
        return "report"

    monkeypatch.setitem(agent.TOOL_HANDLERS, "Task", subagent)
    scripted_api.play({"turns": [{"tool_calls": calls}, {"text": "Done."}]})
    assert agent.run_turn([], "go") == 0
    assert most[0] == agent.PARALLEL_SUBAGENTS

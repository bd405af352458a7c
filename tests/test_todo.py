"""The todo tool (v2 on): the plan the user sees, the one line the model gets back, the rules, the
reminders.

The scripted model calls `todo`; the tests read what came back out of the next request, exactly as
the model receives it, and what the user saw out of the captured output. """

from pathlib import Path

import pytest

from tests.agents import call_tool, once, results_sent, versions_from

SCENARIOS = Path(__file__).parent / "scenarios"
OPEN_TODOS_REMINDER = "You have not updated the todo list"


def item(content: str, status: str = "pending", active_form: str | None = None) -> dict:
    return {"content": content, "status": status, "activeForm": active_form or f"Doing: {content}"}


PLAN = [
    item("Write the fix", "in_progress", "Writing the fix"),
    item("Run the tests", "pending", "Running the tests"),
]


def todo(items, **flags) -> dict:
    return {"name": "todo", "input": {"items": items}, **flags}


def bash(command: str = "true") -> dict:
    return {"name": "bash", "input": {"command": command}}


def call_todo(api, agent, items, **flags) -> dict:
    return call_tool(api, agent, "todo", {"items": items}, **flags)


def reminders_in(message: dict) -> list[str]:
    return [
        block["text"]
        for block in message["content"]
        if block["type"] == "text" and block["text"].startswith("<reminder>")
    ]


def open_todo_reminder_after_each_round(api) -> list[bool]:
    """For each request: does its last message remind the model of open todo items?"""
    return [
        any(OPEN_TODOS_REMINDER in text for text in reminders_in(request.body["messages"][-1]))
        for request in api.requests
    ]


@pytest.mark.parametrize("version", versions_from("v2"))
# -- what the user sees, what the model gets back --
def test_a_plan_is_shown_to_the_user_and_summed_up_in_one_line_for_the_model(
    scripted_api, agent, capsys
):
    scripted_api.play(
        SCENARIOS / "todo_plan_and_progress.yaml"
    )  # its `expect`s check the model's side
    assert agent.run_turn([], "fix the bug") == 0
    out = capsys.readouterr().out
    assert (
        "  [>] Read the code (Reading the code)\n"
        "  [ ] Write the fix\n"
        "  [ ] Run the tests\n"
        "  0/3 done\n"
    ) in out
    assert (
        "  [x] Read the code\n"
        "  [>] Write the fix (Writing the fix)\n"
        "  [ ] Run the tests\n"
        "  1/3 done\n"
    ) in out
    (result,) = scripted_api.requests[1].body["messages"][-1]["content"]
    assert result == {
        "type": "tool_result",
        "tool_use_id": result["tool_use_id"],
        "is_error": False,
        "content": "todo list updated: 0/3 done; in progress: Reading the code",
    }


@pytest.mark.parametrize("version", versions_from("v2"))
@pytest.mark.parametrize(
    ("items", "summary", "shown"),
    [
        (
            [item("Write the fix"), item("Run the tests")],
            "0/2 done; nothing in progress, next: Write the fix",
            "  [ ] Write the fix\n  [ ] Run the tests\n  0/2 done\n",
        ),
        (
            [item("Write the fix", "completed"), item("Run the tests", "completed")],
            "2/2 done",
            "  [x] Write the fix\n  [x] Run the tests\n  2/2 done\n",
        ),
        (
            [item("  テストを実行する ", "in_progress", "テストを実行中")],
            "0/1 done; in progress: テストを実行中",
            "  [>] テストを実行する (テストを実行中)\n  0/1 done\n",
        ),
        ([], "the list is empty", "  (the todo list is empty)\n"),
    ],
    ids=["nothing-in-progress", "all-done", "japanese", "cleared"],
)
def test_the_summary_says_what_is_next_or_that_all_is_done(
    scripted_api, agent, capsys, items, summary, shown
):
    result = call_todo(scripted_api, agent, items)
    assert result["content"] == f"todo list updated: {summary}" and not result["is_error"]
    assert shown in capsys.readouterr().out


@once("v2")
def test_the_plan_on_screen_has_no_escape_codes(scripted_api, agent, capsys):
    call_todo(
        scripted_api,
        agent,
        [item("\x1b[2JWipe the screen", "in_progress", "\x1b]0;title\x07Retitling")],
    )
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "[>] ?Wipe the screen (?Retitling)" in shown


@once("v2")
def test_twenty_items_are_accepted_and_the_result_stays_one_short_line(scripted_api, agent, capsys):
    items = [
        item(f"Step {n}: " + "a long description " * 20, "completed" if n < 5 else "pending")
        for n in range(1, 21)
    ]
    items[4]["status"] = "in_progress"
    result = call_todo(scripted_api, agent, items)
    assert not result["is_error"]
    assert result["content"].startswith(
        "todo list updated: 4/20 done; in progress: Doing: Step 5: a long"
    )
    assert len(result["content"]) < 120 and "\n" not in result["content"]
    shown = [
        line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith(("  [ ]", "  [>]", "  [x]"))
    ]
    assert (
        len(shown) == 20 and max(map(len, shown)) < 170
    )  # long items are shortened for the user too


@once("v2")
# -- the rules: a list that breaks one is rejected, and the previous list stays --
@pytest.mark.parametrize(
    ("items", "flags", "expected"),
    [
        (
            [item(f"Step {n}") for n in range(1, 22)],
            {},
            "todo list rejected: 21 items, but a list holds at most 20; merge small steps",
        ),
        (
            [item("Write the fix", "in_progress"), item("Run the tests", "in_progress")],
            {},
            "at most one item may be in_progress, but item 1 ('Write the fix') and item 2 ('Run "
            "the tests') are",
        ),
        ([item("Write the fix"), item("  \n")], {}, "item 2 has an empty content"),
        (
            [item("Write the fix"), item("Run the tests", active_form=" ")],
            {},
            "item 2 ('Run the tests') has an empty activeForm",
        ),
        (
            [item("Write the fix"), item("Run the tests", "done")],
            {"invalid": True},
            "invalid input for todo (items/1/status): 'done' is not one of ['pending', "
            "'in_progress', 'completed']",
        ),
        (
            [{"content": "Write the fix", "status": "pending"}],
            {"invalid": True},
            "invalid input for todo (items/0): 'activeForm' is a required property",
        ),
        ("1. Write the fix 2. Run the tests", {"invalid": True}, "is not of type 'array'"),
    ],
    ids=[
        "too-many",
        "two-in-progress",
        "blank-content",
        "blank-activeForm",
        "bad-status",
        "missing-field",
        "not-a-list",
    ],
)
def test_a_list_that_breaks_a_rule_is_rejected_and_the_previous_list_stays(
    scripted_api, agent, capsys, items, flags, expected
):
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [todo(PLAN)]},
                {"tool_calls": [todo(items, **flags)]},
                {"text": "ok"},
            ]
        }
    )
    assert agent.run_turn([], "go") == 0
    (result,) = results_sent(scripted_api)
    assert result["is_error"] and expected in result["content"]
    assert len(result["content"]) < 400  # names the rule and the item; never echoes the whole list
    if not flags:  # the rules TodoList checks; the schema's own errors come from v1's run_tool
        assert (
            "Your previous list is kept (0/2 done; in progress: Writing the fix)"
            in result["content"]
        )
    assert agent.TODO.items == PLAN
    assert (
        capsys.readouterr().out.count("[>] Write the fix") == 1
    )  # the user saw the plan once, unchanged


@pytest.mark.parametrize("version", versions_from("v2"))
# -- reminders --
def test_the_first_user_message_carries_a_planning_reminder_and_later_ones_do_not(
    scripted_api, agent
):
    scripted_api.play({"turns": [{"text": "First answer."}, {"text": "Second answer."}]})
    history = []
    assert agent.run_turn(history, "first task") == 0
    assert agent.run_turn(history, "second task") == 0
    first, last = (request.body["messages"] for request in scripted_api.requests)
    assert first[0]["content"][0] == {"type": "text", "text": "first task"}
    assert reminders_in(first[0]) == [agent.PLANNING_REMINDER["text"]]
    assert "todo tool" in agent.PLANNING_REMINDER["text"]
    assert last[0] == first[0]  # unchanged, so the cached prefix still matches
    assert last[-1]["content"] == [{"type": "text", "text": "second task"}]


@pytest.mark.parametrize("version", versions_from("v2"))
def test_the_planning_reminder_is_not_repeated_after_a_failed_first_turn(scripted_api, agent):
    scripted_api.play(
        {"turns": [{"error": {"status": 401, "message": "invalid x-api-key"}}, {"text": "Hello."}]}
    )
    history = []
    assert agent.run_turn(history, "first try") == 1
    assert agent.run_turn(history, "second try") == 0
    texts = [block["text"] for block in scripted_api.requests[-1].body["messages"][0]["content"]]
    assert texts == ["first try", agent.PLANNING_REMINDER["text"], "second try"]


@pytest.mark.parametrize("version", versions_from("v2"))
def test_open_items_untouched_for_n_rounds_bring_a_reminder_and_not_before(scripted_api, agent):
    assert agent.TODO_REMINDER_ROUNDS == 10
    scripted_api.play(SCENARIOS / "todo_silent_rounds.yaml")
    assert agent.run_turn([], "speed up the report") == 0
    assert open_todo_reminder_after_each_round(scripted_api) == [False] * 11 + [True]
    *results, reminder = results_sent(scripted_api)
    assert [block["type"] for block in results] == [
        "tool_result"
    ]  # the API wants the results first
    assert (
        reminder["text"].startswith("<reminder>")
        and "0/2 done; in progress: Finding the slow query" in reminder["text"]
    )


@pytest.mark.parametrize("version", versions_from("v2"))
def test_a_todo_call_and_each_reminder_start_the_count_again(scripted_api, agent):
    agent.TODO_REMINDER_ROUNDS = 2
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [todo(PLAN)]},
                {"tool_calls": [bash()]},  # 1 round without todo
                {
                    "tool_calls": [
                        todo([item("Write the fix", "in_progress"), item("Run the tests")])
                    ]
                },  # count restarts
                {"tool_calls": [bash()], "repeat": 4},  # 1, 2 (reminder), 1, 2 (reminder)
                {"text": "Done."},
            ]
        }
    )
    assert agent.run_turn([], "go") == 0
    assert open_todo_reminder_after_each_round(scripted_api) == [False] * 5 + [True, False, True]


@pytest.mark.parametrize("version", versions_from("v2"))
@pytest.mark.parametrize(
    "plan",
    [None, [item("Write the fix", "completed"), item("Run the tests", "completed")]],
    ids=["no-list", "all-completed"],
)
def test_no_reminder_when_no_item_is_open(scripted_api, agent, plan):
    agent.TODO_REMINDER_ROUNDS = 2
    turns = [{"tool_calls": [todo(plan)]}] if plan else []
    scripted_api.play({"turns": [*turns, {"tool_calls": [bash()], "repeat": 5}, {"text": "Done."}]})
    assert agent.run_turn([], "go") == 0
    assert not any(open_todo_reminder_after_each_round(scripted_api))


@pytest.mark.parametrize("version", versions_from("v2"))
def test_an_agent_loop_without_the_todo_tool_sees_no_reminders(scripted_api, agent):
    """v3 runs subagents through the same loop without the todo tool: they must never see todo
    reminders."""
    agent.TODO.replace(PLAN)  # the parent's plan has open items...
    agent.TODO_REMINDER_ROUNDS = 1  # ...and a reminder would be due after every round
    tools = [tool for tool in agent.TOOLS if tool["name"] != "todo"]
    scripted_api.play({"turns": [{"tool_calls": [bash()], "repeat": 3}, {"text": "Report."}]})
    messages = [{"role": "user", "content": [{"type": "text", "text": "explore"}]}]
    assert agent.agent_loop(messages, "You explore.", tools, agent.SCREEN) == "Report."
    assert not any(b"<reminder>" in request.raw for request in scripted_api.requests)
    assert agent.TODO.items == PLAN

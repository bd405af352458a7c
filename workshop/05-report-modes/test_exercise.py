"""Exercise 5: Task(mode=summary|detailed|full), each mode with its own report budget. The task is
in README.md.

The scripted model plays the main agent on the default track and the subagent on a track that
matches the subagent's prompt (it starts with CHILD:). The subagent writes a report far over every
budget, so what reaches the main agent shows the cut. A test's name starts with the number of the
rule it checks (test_rule3_... checks rule 3 of README.md), and its failure says what is missing.
"""

import re

import pytest

from tests.agents import results_sent

MODES = ["summary", "detailed", "full"]
HUGE_REPORT = "".join(
    f"src/module_{n}.py:{n}: a finding worth a line\n" for n in range(2000)
)  # ~90,000 characters
SHORT_REPORT = "The config loader is load_config() in src/config.py, line 12.\n"
COPIED = 20  # characters in a row that count as a copy of the report, not a chance match
CONVERSATION = (  # the next turn goes on from the history this one left
    "the turn must leave the conversation valid, the user's words first and the model's reply "
    "last; its history starts and ends with"
)
# A budget in characters: "1,000 characters", "12,000 chars", "1,000 文字" (a number of tokens,
# "about 250 tokens", is not one)
CHARACTER_BUDGET = re.compile(r"(\d[\d,]*)\s*(?:characters|chars|文字)", re.IGNORECASE)
# "summary is the default" however it is put: summary (default), summary, the default, defaults to
# summary, default: summary, by default the summary... but not both words in separate sentences
SUMMARY_IS_DEFAULT = re.compile(
    r"summary\W+(?:(?:is|mode|the|by|its|which)\W+){0,3}default"
    r"|default(?:s|ed)?\W+(?:(?:is|mode|to|the|of|value|a)\W+){0,3}summary"
    r"|summary[^.;\n]{0,3}(?:既定|デフォルト)|(?:既定|デフォルト)[^.;\n。]{0,8}summary",
    re.IGNORECASE,
)


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


EARLIER_RULES = {  # how a Task call fails when an earlier rule does not hold yet
    "('mode' was unexpected)": "Task does not take a mode yet: see rule 1 first",
    "'mode' is a required property": "mode must be optional: see rule 1 first",
    "required positional argument: 'mode'": (
        "a Task call without mode fails: the handler needs its own default, see rule 4"
    ),
}


def why_it_failed(result: dict) -> str:
    """What a failed Task call says, and the earlier rule behind it when there is one."""
    for sign, rule in EARLIER_RULES.items():
        if sign in result["content"]:
            return rule
    return f"the main agent got {result['content'][:300]!r}"


def child_request(api, rule: int):
    children = [request for request in api.requests if request.track != "default"]
    assert children, (
        f"rule {rule}: no subagent ran, so this rule cannot be checked: "
        f"{why_it_failed(task_result(api))}"
    )
    return children[0]


def task_result(api, rule: int | None = None) -> dict:
    """The Task call's result; with a rule, the call must have worked."""
    (result,) = results_sent(api)
    if rule is not None:
        assert not result["is_error"], (
            f"rule {rule}: the Task call failed, so this rule cannot be checked: "
            f"{why_it_failed(result)}"
        )
    return result


def report_characters(content: str, report: str) -> int:
    """How many characters of `report` reached the main agent in `content`: those inside a piece
    of COPIED characters or more that content copies from it (a cut can leave a head and a
    tail)."""
    copied = set()
    for at in range(len(content) - COPIED + 1):
        if content[at : at + COPIED] in report:
            copied.update(range(at, at + COPIED))
    return len(copied)


def conversation_ends(history: list) -> tuple:
    """The words at both ends of the history a turn leaves: the user's message that starts it,
    and the model's reply that ends it (none when it ends on another message)."""
    last = history[-1]
    reply = [block.text for block in last["content"] if last["role"] == "assistant"]
    return history[0]["content"][0]["text"], reply


def budgets(agent, rule: int) -> dict:
    budgets = getattr(agent, "REPORT_BUDGETS", None)
    assert isinstance(budgets, dict), (
        f"rule {rule}: the script needs REPORT_BUDGETS = {{...}}"
        + (" (rule 2) before this rule can be checked" if rule != 2 else "")
    )
    return budgets


def test_rule1_the_task_tool_offers_three_modes_and_mode_is_optional(scripted_api, agent):
    scripted_api.play({"turns": [{"text": "Hi."}]})
    history = []
    assert agent.run_turn(history, "hi") == 0
    ends = conversation_ends(history)
    assert ends == ("hi", ["Hi."]), f"rule 1: {CONVERSATION} {ends}"
    task_tool = next(
        tool for tool in scripted_api.requests[0].body["tools"] if tool["name"] == "Task"
    )
    schema = task_tool["input_schema"]
    enum = schema["properties"].get("mode", {}).get("enum")
    assert enum == MODES, f"rule 1: Task needs an input mode with the enum {MODES}; it has {enum}"
    assert "mode" not in schema["required"], "rule 1: mode must be optional (not in required)"
    description = task_tool["description"]
    assert SUMMARY_IS_DEFAULT.search(description), (
        "rule 1: the Task description must say that summary is the default mode, in so many "
        "words: 'summary (the default)', 'summary is the default', 'mode defaults to summary'; "
        f"it says {description!r}"
    )


def test_rule1_an_unknown_mode_is_refused_by_the_schema(scripted_api, agent):
    scripted_api.play(
        {"turns": [{"tool_calls": [{**task(mode="brief"), "invalid": True}]}, {"text": "ok"}]}
    )
    history = []
    assert agent.run_turn(history, "go") == 0
    ends = conversation_ends(history)
    assert ends == ("go", ["ok"]), f"rule 1: {CONVERSATION} {ends}"
    result = task_result(scripted_api)
    assert result["is_error"] and "'brief' is not one of" in result["content"], (
        f"rule 1: the schema must refuse mode='brief'; the main agent got {result['content']!r}"
    )


def test_rule2_the_budgets_grow_from_summary_to_full_and_fit_the_tool_result_budget(agent):
    found = budgets(agent, rule=2)
    assert list(found) == MODES, (
        f"rule 2: REPORT_BUDGETS needs the keys {MODES}, in this order; it has {list(found)}"
    )
    values = [found[mode] for mode in MODES]
    assert values == sorted(set(values)), f"rule 2: the budgets must grow, summary to full: {found}"
    assert values[-1] <= agent.TOOL_RESULT_BUDGET, (
        f"rule 2: the full budget, {values[-1]:,}, is over TOOL_RESULT_BUDGET "
        f"({agent.TOOL_RESULT_BUDGET:,}): clip() would cut the middle out of a full report"
    )


@pytest.mark.parametrize("mode", [*MODES, None])
def test_rule3_the_subagent_is_told_its_budget_in_its_first_message_and_no_other(
    scripted_api, agent, mode
):
    budget = budgets(agent, rule=3)[mode or "summary"]
    scripted_api.play(delegate(SHORT_REPORT, **({"mode": mode} if mode else {})))
    history = []
    assert agent.run_turn(history, "find the config loader") == 0
    ends = conversation_ends(history)
    assert ends == ("find the config loader", ["Main agent done."]), (
        f"rule 3: {CONVERSATION} {ends}"
    )
    child = child_request(scripted_api, rule=3).body
    first_message = str(child["messages"][0]["content"])
    assert f"{budget:,}" in first_message, (
        f"rule 3: the subagent's first message must tell it the {mode or 'default'} budget, "
        f"written as {budget:,}; it was {first_message!r}"
    )
    assert child["system"] == agent.AGENT_TYPES["explore"]["system"], (
        "rule 3: the subagent's system prompt is its type's, the same for every call: tell it "
        "the mode in its first message, not in the system prompt"
    )
    others = {
        where: sorted(set(CHARACTER_BUDGET.findall(text)) - {f"{budget:,}"})
        for where, text in (("system prompt", child["system"]), ("first message", first_message))
    }
    others = {where: numbers for where, numbers in others.items() if numbers}
    assert not others, (
        f"rule 3: the subagent must be told one budget in characters, {budget:,}; its request "
        f"names others too: {others}"
        + (" (REPORT_RULES, part of every system prompt, still names one?)" if "system prompt"
           in others else "")
    )


@pytest.mark.parametrize("mode", [*MODES, None])
def test_rule4_the_report_is_cut_to_its_modes_budget(scripted_api, agent, mode):
    budget = budgets(agent, rule=4)[mode or "summary"]
    scripted_api.play(delegate(HUGE_REPORT, **({"mode": mode} if mode else {})))
    history = []
    assert agent.run_turn(history, "find the config loader") == 0
    ends = conversation_ends(history)
    assert ends == ("find the config loader", ["Main agent done."]), (
        f"rule 4: {CONVERSATION} {ends}"
    )
    result = task_result(scripted_api, rule=4)
    assert len(result["content"]) <= budget, (
        f"rule 4: a report in mode {mode or 'summary (no mode given)'} may have {budget:,} "
        f"characters, note included; the main agent got {len(result['content']):,}"
    )
    assert result["content"].startswith(HUGE_REPORT[:100]), (
        "rule 4: the report must keep its beginning"
    )


def test_rule5_a_cut_summary_says_how_to_get_more(scripted_api, agent):
    scripted_api.play(delegate(HUGE_REPORT, mode="summary"))
    history = []
    assert agent.run_turn(history, "find the config loader") == 0
    ends = conversation_ends(history)
    assert ends == ("find the config loader", ["Main agent done."]), (
        f"rule 5: {CONVERSATION} {ends}"
    )
    end = task_result(scripted_api, rule=5)["content"][-300:]
    assert "detailed" in end, (
        f"rule 5: a cut summary must end with a note that names mode detailed; it ends {end!r}"
    )


@pytest.mark.parametrize("mode", MODES)
def test_rule6_a_report_within_budget_comes_back_whole(scripted_api, agent, mode):
    scripted_api.play(delegate(SHORT_REPORT, mode=mode))
    history = []
    assert agent.run_turn(history, "find the config loader") == 0
    ends = conversation_ends(history)
    assert ends == ("find the config loader", ["Main agent done."]), (
        f"rule 6: {CONVERSATION} {ends}"
    )
    content = task_result(scripted_api, rule=6)["content"]
    assert content == SHORT_REPORT, (
        f"rule 6: a report within the budget must come back as it is, {SHORT_REPORT!r}; the "
        f"main agent got {content!r}"
    )


def test_rule7_a_subagent_that_fails_still_hands_back_its_last_message(scripted_api, agent):
    child_turns = [
        {"text": HUGE_REPORT, "tool_calls": [{"name": "read_file", "input": {"path": "x.py"}}]},
        {"error": {"status": 400, "message": "the request is malformed"}},
    ]
    scripted_api.play(
        {
            "turns": [{"tool_calls": [task()]}, {"text": "Main agent done."}],
            "tracks": [{"match": "CHILD:", "turns": child_turns}],
        }
    )
    history = []
    assert agent.run_turn(history, "find the config loader") == 0
    ends = conversation_ends(history)
    assert ends == ("find the config loader", ["Main agent done."]), (
        f"rule 7: {CONVERSATION} {ends}"
    )
    result = task_result(scripted_api)
    summary = budgets(agent, rule=7)["summary"]
    assert HUGE_REPORT[:100] in result["content"], (
        "rule 7: when a subagent fails, the main agent still gets the beginning of its last "
        f"message; {why_it_failed(result)}"
    )
    shown = report_characters(result["content"], HUGE_REPORT)
    assert shown <= summary, (
        "rule 7: when a subagent fails, its last message must be cut to the summary budget "
        f"({summary:,} characters); {shown:,} of its characters reached the main agent"
    )

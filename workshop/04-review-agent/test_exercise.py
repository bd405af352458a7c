"""Exercise 4: a read-only `review` agent type that returns findings. The task is in README.md.

The scripted model plays the main agent on the default track and the subagent on a track that
matches the subagent's prompt (it starts with CHILD:), so a test reads both sides: what the subagent
was given, and what came back to the main agent. A test's name starts with the number of the rule
it checks (test_rule3_... checks rule 3 of README.md), and its failure says what is missing. """

import re

import pytest

from tests.agents import ROOT, load_script, results_sent

READ_ONLY_TOOLS = {"read_only_bash", "read_file"}
ASKED_FOR = {  # what rule 4 asks of the review prompt, and words that ask for it, in any case
    "findings": re.compile(r"finding|\bissues?\b|\bproblems?\b|指摘", re.I),
    "a place (path:line)": re.compile(
        r"(?:path|file)\s?:\s?line|file and line|line numbers?|\blocation|場所|行番号", re.I
    ),
    "how serious it is": re.compile(
        r"sever|serious|critical|\b(?:high|major|minor|blocker)\b|priorit|重大|深刻|重要度|優先度",
        re.I,
    ),
    "a fix": re.compile(r"\bfix|suggest|remed|recommend|solution|修正|直し方|対処|改善", re.I),
}
EXAMPLES = {  # for the failure message
    "findings": "'findings', 'issues'",
    "a place (path:line)": "'path:line', 'file:line', 'line number', 'location'",
    "how serious it is": "'severity', 'high/medium/low', 'critical', 'major/minor'",
    "a fix": "'fix', 'suggest', 'recommend'",
}
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


def task_tool(api) -> dict:
    """The Task tool as the main agent's first request offers it."""
    (tool,) = [tool for tool in api.requests[0].body["tools"] if tool["name"] == "Task"]
    return tool


def check_the_turn(history: list, task: str, reply: str, rule: int) -> None:
    """The turn as the attendee sees it: their task opens the history and the model's last reply
    closes it, so the conversation stays valid for the next turn."""
    first = history[0]["content"][0]["text"]
    last = getattr(history[-1]["content"][-1], "text", None)  # None: a tool call or its result
    assert [first, last] == [task, reply], (
        f"rule {rule}: the turn must start with the task {task!r} and end with the model's reply "
        f"{reply!r}; the history starts with {first!r} and ends with {last!r}"
    )


def the_child(api, agent, rule: int):
    """The first request of the review subagent. When there is none, the message says why: an
    earlier rule that does not hold yet, or what the main agent got back instead."""
    children = child_requests(api)
    why = f"the main agent got {[result['content'] for result in results_sent(api)]}"
    if "review" not in agent.AGENT_TYPES:
        why = "AGENT_TYPES has no review yet: see rule 1 first"
    elif "review" not in task_tool(api)["input_schema"]["properties"]["agent_type"]["enum"]:
        why = "the Task tool does not offer review yet: see rule 2 first"
    assert children, f"rule {rule}: no review subagent ran, so this rule cannot be checked: {why}"
    return children[0]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    return tmp_path


def test_rule1_review_joins_the_other_types_which_stay_as_they_are(agent):
    assert "review" in agent.AGENT_TYPES, "rule 1: AGENT_TYPES has no entry 'review'"
    untouched = load_script(ROOT / "v3_subagents.py")
    assert agent.REPORT_RULES == untouched.REPORT_RULES, (
        "rule 1: REPORT_RULES is shared by every agent type and must stay as it is; ask for "
        "findings in review's own system prompt"
    )
    for name in ("explore", "plan", "code"):
        assert agent.AGENT_TYPES.get(name) == untouched.AGENT_TYPES[name], (
            f"rule 1: the agent type {name} must stay as it is; put what review needs in review's "
            "own entry"
        )


def test_rule2_the_task_tool_offers_review(scripted_api, agent):
    scripted_api.play({"turns": [{"text": "Hi."}]})
    history = []
    assert agent.run_turn(history, "hi") == 0
    check_the_turn(history, "hi", "Hi.", rule=2)
    tool = task_tool(scripted_api)
    enum = tool["input_schema"]["properties"]["agent_type"]["enum"]
    assert set(enum) == {"explore", "plan", "code", "review"}, (
        f"rule 2: the Task tool's agent_type must offer review too; it offers {enum}. TASK_TOOL "
        "reads AGENT_TYPES when the script loads: put review inside the AGENT_TYPES = {...} literal"
    )
    lines = [line for line in tool["description"].splitlines() if line.startswith("- review:")]
    assert len(lines) == 1 and lines[0].startswith("- review: read-only"), (
        f"rule 2: the Task description must list '- review: read-only; ...'; it lists {lines}"
    )
    assert "finding" in lines[0], f"rule 2: the review line must mention findings: {lines[0]!r}"


def test_rule3_a_review_subagent_gets_the_read_only_tools_and_cannot_change_a_file(
    scripted_api, agent, project
):
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
                    "tool_calls": [
                        {"name": "read_only_bash", "input": {"command": "sed -i s/len/max/ app.py"}}
                    ],
                },
                {"text": FINDING},
            ]
        )
    )
    history = []
    assert agent.run_turn(history, "review my change") == 0
    check_the_turn(history, "review my change", "Main agent done.", rule=3)
    tools = {tool["name"] for tool in the_child(scripted_api, agent, rule=3).body["tools"]}
    after = (project / "app.py").read_text()
    assert after == APP, (
        f"rule 3: the review subagent changed app.py to {after!r} with the tools it got, "
        f"{sorted(tools)}; it gets {sorted(READ_ONLY_TOOLS)} and nothing else"
    )
    assert tools == READ_ONLY_TOOLS, (
        f"rule 3: a review subagent gets {sorted(READ_ONLY_TOOLS)} and nothing else; it got "
        f"{sorted(tools)}"
    )


def test_rule4_its_own_prompt_asks_for_findings_and_says_what_a_clean_result_is(
    scripted_api, agent
):
    scripted_api.play(delegate([{"text": "no findings: app.py looks fine."}]))
    history = []
    assert agent.run_turn(history, "review my change") == 0
    check_the_turn(history, "review my change", "Main agent done.", rule=4)
    system = the_child(scripted_api, agent, rule=4).body["system"]
    others = [agent.AGENT_TYPES[name]["system"] for name in ("explore", "plan", "code")]
    assert system not in others, "rule 4: review needs a system prompt of its own"
    assert agent.REPORT_RULES in system, (
        "rule 4: the review prompt must include REPORT_RULES, so the subagent knows that only "
        "its final message comes back"
    )
    own = system.replace(agent.REPORT_RULES, "")  # REPORT_RULES already says "line numbers"
    asked = re.sub("no findings", "", own, flags=re.I)  # what it asks for when there are some
    missing = [what for what, words in ASKED_FOR.items() if not words.search(asked)]
    assert not missing, (
        "rule 4: the review prompt must ask for findings, each with a place (path:line), how "
        f"serious it is and a fix; nothing in it asks for {' or '.join(missing)} (words such as "
        f"{'; '.join(EXAMPLES[what] for what in missing)}). Without REPORT_RULES it reads {own!r}"
    )
    assert "no findings" in own.lower(), (
        "rule 4: the review prompt must say to answer 'no findings' when there are none, or the "
        "subagent invents problems"
    )


def test_rule5_the_findings_come_back_to_the_main_agent_unchanged(
    scripted_api, agent, project, capsys
):
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
    history = []
    assert agent.run_turn(history, "review my change") == 0
    check_the_turn(history, "review my change", "Main agent done.", rule=5)
    (task,) = the_child(scripted_api, agent, rule=5).body["messages"]
    prompt = {"type": "text", "text": "CHILD: Review app.py. Report findings."}
    assert task["content"] == [prompt], (
        f"rule 5: the review subagent must start from the main agent's prompt alone; it got {task}"
    )
    (result,) = results_sent(scripted_api)
    assert not result["is_error"] and result["content"] == FINDING, (
        f"rule 5: the Task result must be the subagent's findings, unchanged: {FINDING!r}; the "
        f"main agent got {result['content']!r}"
    )
    screen = capsys.readouterr().out
    assert "[review] review app.py" in screen, (
        f"rule 5: while the review subagent works, the screen shows its status line "
        f"'[review] review app.py'; it shows {screen!r}"
    )

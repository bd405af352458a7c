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


def the_child(api, agent, rule: int):
    """The first request of the review subagent. When there is none, the message says why: an
    earlier rule that does not hold yet, or what the main agent got back instead."""
    children = child_requests(api)
    task_tool = [tool for tool in api.requests[0].body["tools"] if tool["name"] == "Task"]
    offered = task_tool[0]["input_schema"]["properties"]["agent_type"]["enum"] if task_tool else []
    why = f"the main agent got {results_sent(api)}"
    if "review" not in agent.AGENT_TYPES:
        why = "AGENT_TYPES has no review yet: see rule 1 first"
    elif "review" not in offered:
        why = "the Task tool does not offer review yet: see rule 2 first"
    assert children, f"rule {rule}: no review subagent ran, so this rule cannot be checked: {why}"
    return children[0]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "app.py").write_text(APP)
    return tmp_path


def test_rule1_review_joins_the_other_types_which_stay_as_they_are(agent):
    assert "review" in agent.AGENT_TYPES, "rule 1: AGENT_TYPES has no entry 'review'"
    untouched = load_script(ROOT / "v3_subagents.py", "untouched_v3")
    for name in ("explore", "plan", "code"):
        assert agent.AGENT_TYPES.get(name) == untouched.AGENT_TYPES[name], (
            f"rule 1: the agent type {name} must stay as it is; put what review needs in review's "
            "own entry"
        )
    assert agent.REPORT_RULES == untouched.REPORT_RULES, (
        "rule 1: REPORT_RULES is shared by every agent type and must stay as it is; ask for "
        "findings in review's own system prompt"
    )


def test_rule2_the_task_tool_offers_review(scripted_api, agent):
    scripted_api.play({"turns": [{"text": "Hi."}]})
    assert agent.run_turn([], "hi") == 0
    task_tool = next(
        tool for tool in scripted_api.requests[0].body["tools"] if tool["name"] == "Task"
    )
    enum = task_tool["input_schema"]["properties"]["agent_type"]["enum"]
    assert set(enum) == {"explore", "plan", "code", "review"}, (
        f"rule 2: the Task tool's agent_type must offer review too; it offers {enum}. TASK_TOOL "
        "reads AGENT_TYPES when the script loads: put review inside the AGENT_TYPES = {...} literal"
    )
    lines = [line for line in task_tool["description"].splitlines() if line.startswith("- review:")]
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
    assert agent.run_turn([], "review my change") == 0
    tools = {tool["name"] for tool in the_child(scripted_api, agent, rule=3).body["tools"]}
    assert tools == READ_ONLY_TOOLS, (
        f"rule 3: a review subagent gets {sorted(READ_ONLY_TOOLS)} and nothing else; it got "
        f"{sorted(tools)}"
    )
    assert (project / "app.py").read_text() == APP, "rule 3: the review subagent changed app.py"


def test_rule4_its_own_prompt_asks_for_findings_and_says_what_a_clean_result_is(
    scripted_api, agent
):
    scripted_api.play(delegate([{"text": "no findings: app.py looks fine."}]))
    assert agent.run_turn([], "review my change") == 0
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


def test_rule5_the_findings_come_back_to_the_main_agent_unchanged(scripted_api, agent, project):
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
    the_child(scripted_api, agent, rule=5)
    (result,) = results_sent(scripted_api)
    assert not result["is_error"] and result["content"] == FINDING, (
        f"rule 5: the Task result must be the subagent's findings, unchanged: {FINDING!r}; the "
        f"main agent got {result['content']!r}"
    )

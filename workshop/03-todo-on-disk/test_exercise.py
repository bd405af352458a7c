"""Exercise 3: the todo list survives the session, in .agent/todo.json. The task is in README.md.

"A session starts" is the first model call of a fresh script: each test loads the script anew, so
module-level state (the TODO list) starts empty, just as when a user starts the program again. A
test's name starts with the number of the rule it checks (test_rule3_... checks rule 3 of
README.md), and its failure says what is missing.
"""

import json

import pytest

from tests.agents import results_sent, run_in_process

def item(content: str, status: str = "pending", active_form: str | None = None) -> dict:
    return {"content": content, "status": status, "activeForm": active_form or f"Doing: {content}"}


PLAN = [
    item("Write the fix", "completed", "Writing the fix"),
    item("Run the tests", "in_progress", "Running the tests"),
    item("ドキュメントを直す", active_form="ドキュメントを直している"),
]
PLAN_SUMMARY = "1/3 done; in progress: Running the tests"
TWO_IN_PROGRESS = [item("Write the fix", "in_progress"), item("Run the tests", "in_progress")]


def todo(items) -> dict:
    return {"name": "todo", "input": {"items": items}}


def save(folder, data) -> None:
    (folder / ".agent").mkdir(parents=True)
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    (folder / ".agent" / "todo.json").write_text(text, encoding="utf-8")


def saved_items(folder, rule: int):
    """The items in folder's .agent/todo.json. Its shape, {"items": [...]}, is rule 1's concern:
    the tests of the other rules take a bare list too."""
    path = folder / ".agent" / "todo.json"
    why = "save the list after each accepted update"
    if rule != 1:
        why = "nothing was saved at all: see rule 1 first"
    assert path.is_file(), f"rule {rule}: there is no {path}; {why}"
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list) and rule != 1:
        return data
    assert isinstance(data, dict) and "items" in data, (
        f'rule {rule}: todo.json must hold an object {{"items": [...]}}; it holds {data!r}'
    )
    return data["items"]


def first_message_text(api) -> str:
    return "\n".join(block["text"] for block in api.requests[0].body["messages"][0]["content"])


def first_turn(agent, task: str) -> list[str]:
    """Run a session's first turn on task. Returns what the history keeps at its two ends: the
    task the user gave (the first block of the first message) and the model's reply (the last
    block of the last message, kept as the SDK returned it)."""
    history = []
    assert agent.run_turn(history, task) == 0
    return [history[0]["content"][0]["text"], history[-1]["content"][-1].text]


def test_rule1_each_accepted_update_is_saved(scripted_api, agent, tmp_path):
    scripted_api.play(
        {"turns": [{"tool_calls": [todo(PLAN[:2])]}, {"tool_calls": [todo(PLAN)]}, {"text": "Ok."}]}
    )
    kept = first_turn(agent, "fix the bug")
    assert kept == ["fix the bug", "Ok."], (
        f"rule 1: saving must leave the turn whole, from the task to the model's reply, 'Ok.'; "
        f"the history kept {kept}"
    )
    items = saved_items(tmp_path, rule=1)
    assert items == PLAN, (
        f"rule 1: after the second update todo.json must hold {PLAN}; it holds {items}"
    )


def test_rule2_a_rejected_update_leaves_the_saved_list_alone(scripted_api, agent, tmp_path):
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [todo(PLAN)]},
                {"tool_calls": [todo(TWO_IN_PROGRESS)]},
                {"text": "Ok."},
            ]
        }
    )
    kept = first_turn(agent, "fix the bug")
    assert kept == ["fix the bug", "Ok."], (
        f"rule 2: a rejected update must leave the turn whole, from the task to the model's "
        f"reply, 'Ok.'; the history kept {kept}"
    )
    items = saved_items(tmp_path, rule=2)
    assert items == PLAN, (
        f"rule 2: a rejected todo call (two items in progress) must leave todo.json as it was, "
        f"{PLAN}; it holds {items}"
    )


def test_rule3_a_saved_list_is_restored_and_the_model_gets_its_items(
    scripted_api, agent, tmp_path
):
    save(tmp_path, {"items": PLAN})
    scripted_api.play({"turns": [{"tool_calls": [todo(TWO_IN_PROGRESS)]}, {"text": "Ok."}]})
    kept = first_turn(agent, "go on")
    assert kept == ["go on", "Ok."], (
        f"rule 3: the restored list must leave the turn whole, the task first and the model's "
        f"reply, 'Ok.', last; the history kept {kept}"
    )
    told = first_message_text(scripted_api)
    assert PLAN_SUMMARY in told, (
        f"rule 3: the session's first user message must tell the model about the restored list, "
        f"with TODO.summary() ({PLAN_SUMMARY!r}); it was {told!r}"
    )
    values = [value for entry in PLAN for value in entry.values()]
    missing = [value for value in values if value not in told and json.dumps(value) not in told]
    assert not missing, (
        "rule 3: the model must get every restored item (content, status, activeForm): its next "
        f"todo call replaces the whole list, so it must be able to send them again. Missing: "
        f"{missing}"
    )
    (rejected,) = results_sent(scripted_api)
    assert f"Your previous list is kept ({PLAN_SUMMARY})" in rejected["content"], (
        "rule 3: the restored list must be loaded into TODO; a rejected call said "
        f"{rejected['content']!r}"
    )


def test_rule4_without_a_saved_list_the_session_starts_as_before(scripted_api, agent, tmp_path):
    scripted_api.play({"turns": [{"text": "Hello."}]})
    kept = first_turn(agent, "hi")
    assert kept == ["hi", "Hello."], (
        f"rule 4: without todo.json the turn must run as before, from the task to the model's "
        f"reply, 'Hello.'; the history kept {kept}"
    )
    blocks = scripted_api.requests[0].body["messages"][0]["content"]
    assert len(blocks) == 2, (
        "rule 4: without todo.json the first message holds the task and the planning reminder "
        f"only; it has {len(blocks)} blocks: {first_message_text(scripted_api)!r}"
    )
    assert not (tmp_path / ".agent").exists(), (
        "rule 4: a session that never updates the list must not create the .agent folder"
    )


@pytest.mark.parametrize(
    "damage",
    [
        '{"items": [{"content": "Write the fix", "status": "done"',
        {"items": [{"content": "Write the fix", "status": "done"}]},
        {"items": TWO_IN_PROGRESS},
    ],
    ids=["not-json", "not-the-todo-shape", "breaks-a-todo-rule"],
)
def test_rule5_a_damaged_file_is_reported_to_the_user_and_the_session_goes_on(
    scripted_api, agent, tmp_path, capsys, damage
):
    save(tmp_path, damage)
    scripted_api.play({"turns": [{"text": "Ok."}]})
    code = agent.run_turn([], "fix the bug")
    err = capsys.readouterr().err
    assert code == 0 and "todo.json" in err, (
        f"rule 5: a damaged todo.json ({damage!r}) must not stop the session, and the user must "
        f"be told on stderr, naming todo.json; the turn ended with {code}, stderr {err!r}"
    )
    assert agent.TODO.items == [] and "restored" not in first_message_text(scripted_api), (
        f"rule 5: after a damaged todo.json the list starts empty; it is {agent.TODO.items}"
    )


def test_rule6_the_file_is_in_the_folder_given_with_workdir(scripted_api, script_path, tmp_path):
    project = tmp_path / "project"
    save(project, {"items": PLAN})
    scripted_api.play({"turns": [{"tool_calls": [todo(PLAN[:1])]}, {"text": "Ok."}]})
    done = run_in_process(script_path, "--workdir", str(project), "go on", cwd=tmp_path)
    assert done.returncode == 0, (
        f"rule 6: run with --workdir, the script ended with exit code {done.returncode}: "
        f"{done.stderr[-1000:]}"
    )
    shown = done.stdout.splitlines()
    assert "Ok." in shown, (
        f"rule 6: run with --workdir, the session must go on to the model's reply, 'Ok.', on "
        f"stdout; it printed {shown}"
    )
    told = first_message_text(scripted_api)
    assert PLAN_SUMMARY in told, (
        f"rule 6: started with --workdir {project}, the script must restore the todo.json in that "
        "folder; restore it when the session starts, not when the script is loaded. The first "
        f"message was {told!r}"
    )
    started_in = tmp_path / ".agent"
    assert not started_in.exists(), (
        f"rule 6: the list was saved in {started_in}, in the folder the program started from; "
        "save it in the --workdir folder: build the path when you save, after main() moved there"
    )
    items = saved_items(project, rule=6)
    assert items == PLAN[:1], (
        f"rule 6: the todo call's list must be saved in the --workdir folder; there todo.json "
        f"holds {items}"
    )

"""Exercise 3: the todo list survives the session, in .agent/todo.json. The task is in README.md.

"A session starts" is the first model call of a fresh script: each test loads the script anew, so
module-level state (the TODO list) starts empty, just as when a user starts the program again.
"""

import json

from tests.agents import results_sent, run_file

def item(content: str, status: str = "pending", active_form: str | None = None) -> dict:
    return {"content": content, "status": status, "activeForm": active_form or f"Doing: {content}"}


PLAN = [
    item("Write the fix", "completed", "Writing the fix"),
    item("Run the tests", "in_progress", "Running the tests"),
    item("ドキュメントを直す", "pending", "ドキュメントを直している"),
]
PLAN_SUMMARY = "1/3 done; in progress: Running the tests"


def todo(items) -> dict:
    return {"name": "todo", "input": {"items": items}}


def save(folder, data) -> None:
    (folder / ".agent").mkdir(parents=True)
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    (folder / ".agent" / "todo.json").write_text(text, encoding="utf-8")


def saved(folder) -> dict:
    return json.loads((folder / ".agent" / "todo.json").read_text(encoding="utf-8"))


def first_message_text(api) -> str:
    return "\n".join(block["text"] for block in api.requests[0].body["messages"][0]["content"])


def test_each_accepted_update_is_saved(scripted_api, agent, tmp_path):
    scripted_api.play(
        {"turns": [{"tool_calls": [todo(PLAN[:2])]}, {"tool_calls": [todo(PLAN)]}, {"text": "Ok."}]}
    )
    assert agent.run_turn([], "fix the bug") == 0
    assert saved(tmp_path) == {"items": PLAN}


def test_a_rejected_update_leaves_the_saved_list_alone(scripted_api, agent, tmp_path):
    two_in_progress = [item("Write the fix", "in_progress"), item("Run the tests", "in_progress")]
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [todo(PLAN)]},
                {"tool_calls": [todo(two_in_progress)]},
                {"expect": {"tool_result_is_error": True}, "text": "Ok."},
            ]
        }
    )
    assert agent.run_turn([], "fix the bug") == 0
    assert saved(tmp_path) == {"items": PLAN}


def test_a_saved_list_is_restored_when_a_session_starts_and_the_model_is_told(
    scripted_api, agent, tmp_path
):
    save(tmp_path, {"items": PLAN})
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [todo([item("One", "in_progress"), item("Two", "in_progress")])]},
                {"text": "Ok."},
            ]
        }
    )
    assert agent.run_turn([], "go on") == 0
    assert PLAN_SUMMARY in first_message_text(
        scripted_api
    )  # the model learns what it had planned...
    (rejected,) = results_sent(scripted_api)
    assert (
        f"Your previous list is kept ({PLAN_SUMMARY})" in rejected["content"]
    )  # ...and the list is really there


def test_without_a_saved_list_the_session_starts_as_before(scripted_api, agent, tmp_path):
    scripted_api.play({"turns": [{"text": "Hello."}]})
    assert agent.run_turn([], "hi") == 0
    assert "restored" not in first_message_text(scripted_api) and not (tmp_path / ".agent").exists()


def test_a_damaged_file_is_reported_to_the_user_and_the_session_goes_on(
    scripted_api, agent, tmp_path, capsys
):
    save(tmp_path, '{"items": [{"content": "Write the fix", "status": "done"')
    scripted_api.play({"turns": [{"tool_calls": [todo(PLAN)]}, {"text": "Ok."}]})
    assert agent.run_turn([], "fix the bug") == 0
    assert "todo.json" in capsys.readouterr().err
    assert saved(tmp_path) == {"items": PLAN}  # the next accepted update replaces the damaged file


def test_the_file_is_in_the_folder_given_with_workdir(scripted_api, script_path, tmp_path):
    project = tmp_path / "project"
    save(project, {"items": PLAN})
    scripted_api.play({"turns": [{"tool_calls": [todo(PLAN[:1])]}, {"text": "Ok."}]})
    done = run_file(script_path, "--workdir", str(project), "go on", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert PLAN_SUMMARY in first_message_text(scripted_api)
    assert saved(project) == {"items": PLAN[:1]} and not (tmp_path / ".agent").exists()

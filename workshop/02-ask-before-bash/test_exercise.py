"""Exercise 2: ask the user before each bash command runs. The task is in README.md.

The user is played by a stand-in for input(): it gives the scripted answers in order and records
every question it was asked. An input() with no answers left behaves like a closed stdin (EOFError).
"""

import pytest

class User:
    """Answers questions from a list, and remembers each question."""

    def __init__(self) -> None:
        self.answers: list[str] = []
        self.questions: list[str] = []

    def input(self, prompt: str = "") -> str:
        self.questions.append(prompt)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)


@pytest.fixture
def user(monkeypatch) -> User:
    user = User()
    monkeypatch.setattr("builtins.input", user.input)
    return user


def bash(command: str) -> dict:
    return {"name": "bash", "input": {"command": command}}


def results_of(api) -> list[dict]:
    """The tool_results the model got back, in order, over the whole session."""
    return [
        block
        for request in api.requests
        for block in request.body["messages"][-1]["content"]
        if block["type"] == "tool_result"
    ]


def test_yes_runs_the_command_and_the_question_shows_it(scripted_api, agent, user, tmp_path):
    user.answers = ["y"]
    scripted_api.play(
        {"turns": [{"tool_calls": [bash("echo hello > made.txt && echo made")]}, {"text": "Done."}]}
    )
    assert agent.run_turn([], "make a file") == 0
    assert len(user.questions) == 1 and "echo hello > made.txt && echo made" in user.questions[0]
    (result,) = results_of(scripted_api)
    assert not result["is_error"] and result["content"] == "made\n[exit code 0]"
    assert (tmp_path / "made.txt").exists()


def test_no_does_not_run_it_and_the_model_reads_that_it_was_denied(
    scripted_api, agent, user, tmp_path
):
    user.answers = ["n"]
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [bash("echo hello > made.txt")]},
                {"expect": {"tool_result_is_error": True}, "text": "Understood, I will not."},
            ]
        }
    )
    assert agent.run_turn([], "make a file") == 0
    (result,) = results_of(scripted_api)
    assert result["is_error"] and "denied" in result["content"].lower()
    assert not (tmp_path / "made.txt").exists()


@pytest.mark.parametrize(
    "answers", [["maybe"], [""], []], ids=["unknown-answer", "just-enter", "stdin-closed"]
)
def test_anything_but_yes_or_always_denies(scripted_api, agent, user, tmp_path, answers):
    user.answers = answers
    scripted_api.play({"turns": [{"tool_calls": [bash("echo hello > made.txt")]}, {"text": "Ok."}]})
    assert agent.run_turn([], "make a file") == 0
    (result,) = results_of(scripted_api)
    assert result["is_error"] and "denied" in result["content"].lower()
    assert not (tmp_path / "made.txt").exists()


def test_each_call_is_asked_about_on_its_own(scripted_api, agent, user, tmp_path):
    user.answers = ["y", "n"]
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [bash("echo one > one.txt"), bash("echo two > two.txt")]},
                {"text": "One of two."},
            ]
        }
    )
    assert agent.run_turn([], "make two files") == 0
    assert (
        len(user.questions) == 2
        and "one.txt" in user.questions[0]
        and "two.txt" in user.questions[1]
    )
    first, second = results_of(scripted_api)
    assert not first["is_error"] and second["is_error"]
    assert (tmp_path / "one.txt").exists() and not (tmp_path / "two.txt").exists()


def test_always_stops_the_questions_for_the_rest_of_the_session(
    scripted_api, agent, user, tmp_path
):
    user.answers = ["a"]
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [bash("echo one > one.txt")]},
                {"text": "First done."},
                {"tool_calls": [bash("echo two > two.txt")]},
                {"text": "Second done."},
            ]
        }
    )
    history = []
    assert agent.run_turn(history, "make one file") == 0
    assert agent.run_turn(history, "and another") == 0
    assert len(user.questions) == 1
    assert (tmp_path / "one.txt").exists() and (tmp_path / "two.txt").exists()


def test_the_file_tools_do_not_ask(scripted_api, agent, user, tmp_path):
    scripted_api.play(
        {
            "turns": [
                {
                    "tool_calls": [
                        {"name": "write_file", "input": {"path": "a.txt", "content": "1"}},
                        {"name": "read_file", "input": {"path": "a.txt"}},
                    ]
                },
                {"text": "Done."},
            ]
        }
    )
    assert agent.run_turn([], "write and read a file") == 0
    assert user.questions == []
    assert not any(result["is_error"] for result in results_of(scripted_api))

"""Exercise 2: ask the user before each bash command runs. The task is in README.md.

The user is played by a stand-in for input(): it gives the scripted answers in order and records
every question it was asked. An input() with no answers left behaves like a closed stdin (EOFError).
A test's name starts with the number of the rule it checks (test_rule3_... checks rule 3 of
README.md), and its failure says what is missing. Each test also reads the conversation the user
sees: a turn ends with the model's reply, so the next one can start from it.
"""

import pytest

# Commands joined with ; run in every shell the bash tool may use: Windows PowerShell 5.1 has
# no &&.
LONG_COMMAND = (  # 414 characters, its end the part that matters: a question cut to fit a
    # terminal row, or at 200 or 300 characters, hides it
    "echo start > made.txt; "
    + "; ".join(f"echo line {n} of a long generated script >> made.txt" for n in range(1, 8))
    + "; echo the-end-of-the-command"
)


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


def asked_at_all(user: User, rule: int) -> None:
    """Rules 2 to 5 are about the answers, so a question must have been asked (rule 1)."""
    assert user.questions, (
        f"rule {rule}: no bash command was asked about with input(), so the answers cannot be "
        "checked: see rule 1 first"
    )


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


def conversation(history: list) -> list[str]:
    """The conversation as the user reads it, in order: each task they typed and each reply of the
    model (tool calls and their results left out). It stays valid: the next turn starts from it."""
    words = []
    for message in history:
        for block in message["content"]:
            if not isinstance(block, dict):  # the model's blocks, as the SDK returned them
                block = block.model_dump()
            if block["type"] == "text":
                words.append(block["text"])
    return words


def test_rule1_the_question_goes_to_input_and_shows_the_whole_command(
    scripted_api, agent, user, tmp_path
):
    user.answers = ["y"]
    scripted_api.play({"turns": [{"tool_calls": [bash(LONG_COMMAND)]}, {"text": "Done."}]})
    history = []
    assert agent.run_turn(history, "make a file") == 0
    assert len(user.questions) == 1, (
        f"rule 1: one bash call must ask one question with input(); asked {user.questions}"
    )
    assert LONG_COMMAND in user.questions[0], (
        "rule 1: the question passed to input() must show the whole command, however long "
        f"(the user approves what will run); it was {user.questions[0]!r}"
    )
    words = conversation(history)
    assert words == ["make a file", "Done."], (
        f"rule 1: the turn must end with the model's reply; the conversation was {words}"
    )


def test_rule2_yes_runs_this_command_and_the_next_one_is_asked_again(
    scripted_api, agent, user, tmp_path
):
    user.answers = ["y", "n"]
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [bash("echo one > one.txt; echo made"), bash("echo 2 > two.txt")]},
                {"text": "One of two."},
            ]
        }
    )
    history = []
    assert agent.run_turn(history, "make two files") == 0
    asked_at_all(user, rule=2)
    first = results_of(scripted_api)[0]
    assert (tmp_path / "one.txt").exists() and first["content"] == "made\n[exit code 0]", (
        f"rule 2: 'y' must run the command and return its output; the model got {first}"
    )
    assert len(user.questions) == 2, (
        "rule 2: after 'y' the next command must be asked about again; the questions were "
        f"{user.questions}"
    )
    assert not (tmp_path / "two.txt").exists(), (
        "rule 2: the second command ran after 'n': each command runs only on its own 'y'"
    )
    words = conversation(history)
    assert words == ["make two files", "One of two."], (
        f"rule 2: the turn must end with the model's reply; the conversation was {words}"
    )


def test_rule3_always_stops_the_questions_for_the_rest_of_the_session(
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
    asked_at_all(user, rule=3)
    assert (tmp_path / "one.txt").exists(), (
        "rule 3: 'a' must allow the command it answers too; it did not run, and the model got "
        f"{results_of(scripted_api)[0]['content']!r}"
    )
    assert len(user.questions) == 1 and (tmp_path / "two.txt").exists(), (
        "rule 3: after 'a', later bash commands of the session must run without a question; "
        f"the questions were {user.questions}"
    )
    words = conversation(history)
    assert words == ["make one file", "First done.", "and another", "Second done."], (
        f"rule 3: each turn must end with the model's reply; the conversation was {words}"
    )


@pytest.mark.parametrize(
    "answers",
    [["n"], ["maybe"], [""], []],
    ids=["no", "unknown-answer", "just-enter", "stdin-closed"],
)
def test_rule4_anything_but_yes_or_always_denies(scripted_api, agent, user, tmp_path, answers):
    user.answers = list(answers)
    scripted_api.play({"turns": [{"tool_calls": [bash("echo hello > made.txt")]}, {"text": "Ok."}]})
    history = []
    assert agent.run_turn(history, "make a file") == 0
    asked_at_all(user, rule=4)
    (result,) = results_of(scripted_api)
    said = repr(answers[0]) if answers else "nothing (stdin closed: input() raised EOFError)"
    assert not (tmp_path / "made.txt").exists() and "denied" in result["content"].lower(), (
        f"rule 4: the answer {said} must deny the command: it must not run, and the result "
        f"must say 'denied'; the model got {result['content']!r}"
    )
    words = conversation(history)
    assert words == ["make a file", "Ok."], (
        f"rule 4: the turn must end with the model's reply; the conversation was {words}"
    )


def test_rule5_a_denial_is_an_error_result_the_model_reads(scripted_api, agent, user, tmp_path):
    user.answers = ["n"]
    scripted_api.play(
        {
            "turns": [
                {"tool_calls": [bash("echo hello > made.txt")]},
                {"text": "Understood, I will not."},
            ]
        }
    )
    history = []
    assert agent.run_turn(history, "make a file") == 0
    asked_at_all(user, rule=5)
    (result,) = results_of(scripted_api)
    assert result["is_error"] and "denied" in result["content"].lower(), (
        "rule 5: a denied command's tool result must be an error (raise ToolError) that says "
        f"'denied'; the model got is_error={result['is_error']}, {result['content']!r}"
    )
    assert not (tmp_path / "made.txt").exists(), (
        "rule 5: the denied command ran, though its result tells the model it did not: ask first"
    )
    words = conversation(history)
    assert words == ["make a file", "Understood, I will not."], (
        f"rule 5: the turn must end with the model's reply; the conversation was {words}"
    )


def test_rule6_the_file_tools_do_not_ask(scripted_api, agent, user, tmp_path):
    scripted_api.play(
        {
            "turns": [
                {
                    "tool_calls": [
                        {"name": "write_file", "input": {"path": "a.txt", "content": "one\n"}},
                        {
                            "name": "edit_file",
                            "input": {"path": "a.txt", "old_text": "one", "new_text": "two"},
                        },
                        {"name": "read_file", "input": {"path": "a.txt"}},
                    ]
                },
                {"text": "Done."},
            ]
        }
    )
    history = []
    assert agent.run_turn(history, "write, edit and read a file") == 0
    assert user.questions == [], (
        f"rule 6: only bash asks; write_file, edit_file and read_file asked {user.questions}"
    )
    failed = [result["content"] for result in results_of(scripted_api) if result["is_error"]]
    assert not failed and (tmp_path / "a.txt").read_text() == "two\n", (
        f"rule 6: write_file, edit_file and read_file must run as before; they failed: {failed}"
    )
    words = conversation(history)
    assert words == ["write, edit and read a file", "Done."], (
        f"rule 6: the turn must end with the model's reply; the conversation was {words}"
    )

"""plumbing/setup.py where only a script's main() reaches it (test_cli.py runs main() whole):
the start-up checks, the settings line of --help and the key's header, which answers the SDK
retries, and leave(). Called here directly, a few milliseconds each."""

import argparse
import io
import os
import sys
import threading

import anthropic
import httpx2
import pytest
from rich.console import Console

import plumbing.setup
from plumbing.budget import ROOM_NOTE
from plumbing.model import BadReply
from plumbing.replies import Refused, add_user_message, copy_history
from plumbing.screen import Screen
from plumbing.setup import (
    SERVER_ERROR_SHOWN,
    check_setup,
    explain_api_error,
    in_effect,
    key_header,
    leave,
    recover_from,
    retryable,
)

NO_KEY = ("ANTHROPIC_API_KEY is not set (nor ANTHROPIC_AUTH_TOKEN): export it or put it in .env "
          "(see .env.example). No key? Try the offline demo: python -m scripted.demo v3, or a "
          "local model (docs: Other models, and no key)")


def piped_screen() -> tuple[Screen, io.StringIO]:
    shown = io.StringIO()
    return Screen(Console(file=shown, force_terminal=False, width=300)), shown


def keys(monkeypatch, key: str | None, token: str | None) -> None:
    for name, value in (("ANTHROPIC_API_KEY", key), ("ANTHROPIC_AUTH_TOKEN", token)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)


# -- check_setup: one line, and the setting to change --
def test_with_no_key_at_all_the_program_exits_naming_both_variables_and_the_demo(
    monkeypatch, tmp_path
):
    keys(monkeypatch, None, "")
    with pytest.raises(SystemExit) as exited:
        check_setup(argparse.Namespace(workdir=str(tmp_path), task=[]), "v3", piped_screen()[0])
    assert exited.value.code == NO_KEY


@pytest.mark.parametrize(("key", "token"), [("k", None), (None, "t"), ("", "t")])
def test_either_variable_is_key_enough_and_the_screen_then_waits_for_the_model(
    monkeypatch, tmp_path, key, token
):
    keys(monkeypatch, key, token)
    screen, shown = piped_screen()
    check_setup(argparse.Namespace(workdir=str(tmp_path), task=["fix", ""]), "v1", screen)
    assert screen.waiting_for == "waiting for the model"
    assert shown.getvalue() == ""


def test_a_work_directory_that_is_not_a_folder_is_named(monkeypatch, tmp_path):
    keys(monkeypatch, "k", None)
    (tmp_path / "notes.txt").write_text("x")
    args = argparse.Namespace(workdir=str(tmp_path / "notes.txt"), task=[])
    with pytest.raises(SystemExit) as exited:
        check_setup(args, "v1", piped_screen()[0])
    assert exited.value.code == f"--workdir {str(tmp_path / 'notes.txt')!r} is not a folder"


@pytest.mark.parametrize("task", [[" "], ["", "\t"]])
def test_a_task_of_blanks_is_refused_but_no_task_is_a_session(monkeypatch, tmp_path, task):
    keys(monkeypatch, "k", None)
    with pytest.raises(SystemExit) as exited:
        check_setup(argparse.Namespace(workdir=str(tmp_path), task=task), "v1", piped_screen()[0])
    assert exited.value.code == ("the task is empty: say what to do, or give no task for an "
                                 "interactive session")
    check_setup(argparse.Namespace(workdir=str(tmp_path), task=[]), "v1", piped_screen()[0])


def test_a_env_file_in_the_work_directory_is_said_not_to_be_read_unless_it_is_the_scripts(
    monkeypatch, tmp_path
):
    keys(monkeypatch, "k", None)
    (tmp_path / ".env").write_text("MODEL_ID=elsewhere\n")
    args = argparse.Namespace(workdir=str(tmp_path), task=[])
    monkeypatch.setattr(sys, "argv", [str(tmp_path.parent / "v1_basic.py")])
    screen, shown = piped_screen()
    check_setup(args, "v1", screen)
    assert shown.getvalue() == (
        f"[{tmp_path.resolve() / '.env'} is not read: settings come from your environment and the "
        ".env beside the script, never from the folder the agent works in]\n")
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "v1_basic.py")])  # the script's own .env
    screen, shown = piped_screen()
    check_setup(args, "v1", screen)
    assert shown.getvalue() == ""


# -- --help's last line: the settings in effect, the header the key goes in --
BEARER = "Authorization: Bearer"  # where this SDK puts either variable (its _client.py)


def client_for(monkeypatch, key: str | None, token: str | None, base_url: str):
    keys(monkeypatch, key, token)
    client = anthropic.Anthropic(base_url=base_url)
    assert set(client.auth_headers.values()) <= {"Bearer k", "Bearer t"}, "the SDK changed"
    return client


def test_the_settings_line_names_model_max_tokens_endpoint_path_and_header(monkeypatch):
    client = client_for(monkeypatch, "k", None, "http://127.0.0.1:9/gateway/v1/")
    assert in_effect("claude-x", 1234, client) == (
        f"In effect: MODEL_ID=claude-x, MAX_TOKENS=1234, endpoint 127.0.0.1:9/gateway/v1, the key "
        f"from ANTHROPIC_API_KEY sent as {BEARER}.")
    client = client_for(monkeypatch, "k", None, "https://api.example.com")
    assert "endpoint api.example.com, the key" in in_effect("m", 1, client)


@pytest.mark.parametrize(("key", "token", "said"), [
    ("k", None, f"the key from ANTHROPIC_API_KEY sent as {BEARER}"),
    ("k", "t", f"the key from ANTHROPIC_API_KEY sent as {BEARER} (ANTHROPIC_AUTH_TOKEN is set "
               "too, and not sent)"),
    (None, "t", f"the key from ANTHROPIC_AUTH_TOKEN sent as {BEARER}"),
    (None, None, "no key set"),
])
def test_the_key_line_names_the_variable_sent_and_never_the_key(monkeypatch, key, token, said):
    assert key_header(client_for(monkeypatch, key, token, "http://127.0.0.1:9")) == said


# -- which answers the SDK retries: its documented rule, or the server's x-should-retry --
@pytest.mark.parametrize(("status", "should_retry", "retried"), [
    (408, None, True), (409, None, True), (429, None, True), (500, None, True),
    (529, None, True), (400, None, False), (404, None, False), (499, None, False),
    (400, "true", True), (500, "false", False), (500, "no", True), (400, "True", False),
])
def test_an_answer_is_retried_by_its_status_unless_the_server_says(status, should_retry, retried):
    headers = {} if should_retry is None else {"x-should-retry": should_retry}
    assert retryable(httpx2.Response(status, headers=headers)) is retried


# -- leave: at once, with the code given, the live region taken down first --
def test_leave_takes_the_spinner_down_ends_what_was_started_and_exits_with_the_code(monkeypatch):
    """What leave() ends is this process's (test_plumbing_commands.py and test_sandbox.py test
    that): here, the test's own children must live on, so the calls are only recorded."""
    done = []
    monkeypatch.setattr(plumbing.setup, "end_every_process_started",
                        lambda: done.append("processes ended"))
    monkeypatch.setattr(plumbing.setup, "remove_private_folders",
                        lambda: done.append("folders removed"))
    monkeypatch.setattr(os, "_exit", lambda code: done.append(f"exit {code}"))
    screen = Screen(Console(file=io.StringIO(), force_terminal=True, width=80))
    screen.wait("waiting for the model")  # the spinner runs
    leave(130, screen)
    assert done == ["processes ended", "folders removed", "exit 130"]
    assert screen.live is None and screen.waiting_for == ""


# -- an API error in one line: the SDK's own errors, from the scripted API over HTTP --
def failed_call(scripted_api, turns: list, retries: int,
                max_tokens: int = 10) -> anthropic.APIStatusError:
    scripted_api.play({"turns": turns})
    client = anthropic.Anthropic(base_url=scripted_api.start(), api_key="k",
                                 max_retries=retries)
    with pytest.raises(anthropic.APIStatusError) as raised:
        client.messages.create(model="claude-sonnet-5-5", max_tokens=max_tokens,
                               messages=[{"role": "user", "content": "Hi."}])
    return raised.value


@pytest.mark.allow_violations
def test_a_server_error_from_another_endpoint_says_whose_fault_and_what_to_try(scripted_api):
    failing = {"error": {"status": 500, "message": "upstream failed: " + "x" * 600}}
    exc = failed_call(scripted_api, [failing, failing], retries=1)
    netloc = exc.request.url.netloc.decode()
    said = explain_api_error(exc)
    shown, tail = said.split("; the endpoint at ")
    assert shown.startswith("the API answered 500, still after 1 retries: api_error: upstream "
                            "failed: xxx")
    assert len(shown) == SERVER_ERROR_SHOWN
    assert tail == (f"{netloc}, or the server behind it, failed on this request: its log says "
                    "why; try again, or another MODEL_ID or ANTHROPIC_BASE_URL")


@pytest.mark.allow_violations
def test_a_model_not_found_names_the_model_and_the_endpoint(scripted_api):
    exc = failed_call(scripted_api, [{"error": {"status": 404, "message": "no such model"}}], 0)
    url = f"http://{exc.request.url.netloc.decode()}"
    assert explain_api_error(exc) == (
        f"not found (404): is MODEL_ID=claude-sonnet-5-5 offered at {url}?")


@pytest.mark.allow_violations
@pytest.mark.parametrize(("message", "max_tokens"), [
    ("max_tokens: must be at most 8192", 10_000),  # names the field, not the number sent
    ("request (20,000 tokens) exceeds the available context size (16,384 tokens)", 20_000),
])
def test_a_refused_max_tokens_by_its_name_or_its_number_is_one_line_naming_the_setting(
    scripted_api, message, max_tokens
):
    exc = failed_call(scripted_api, [{"error": {"status": 400, "message": message}}], 0,
                      max_tokens=max_tokens)
    assert explain_api_error(exc) == (
        f"the endpoint refused max_tokens={max_tokens} (invalid_request_error: {message}): set "
        "MAX_TOKENS lower, in the environment or .env (a local server's limit is its context "
        "size)")


MESSAGES_URL = "https://api.anthropic.com/v1/messages"


def test_an_api_error_of_a_kind_not_listed_is_said_in_the_apis_own_words():
    """The SDK raises APIResponseValidationError when a strict client reads a reply that is
    off its schema: no row of API_ERRORS is about it, so the API's message is shown as is."""
    response = httpx2.Response(200, request=httpx2.Request("POST", MESSAGES_URL))
    exc = anthropic.APIResponseValidationError(response, None, message="Data off the schema.")
    assert explain_api_error(exc) == "API error: Data off the schema."


def test_a_server_error_of_claudes_own_api_is_not_blamed_on_a_gateway():
    request = httpx2.Request("POST", MESSAGES_URL, headers={"x-stainless-retry-count": "2"})
    body = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
    exc = anthropic.InternalServerError(
        "Internal server error", response=httpx2.Response(500, request=request, json=body),
        body=body)
    assert explain_api_error(exc) == (
        "the API answered 500, still after 2 retries: api_error: Internal server error")


def test_a_not_found_for_a_request_without_a_model_says_so_with_a_question_mark():
    request = httpx2.Request("GET", "http://127.0.0.1:9/v1/models/claude-x")
    exc = anthropic.NotFoundError("Not Found", response=httpx2.Response(404, request=request),
                                  body=None)
    assert explain_api_error(exc) == "not found (404): is MODEL_ID=? offered at http://127.0.0.1:9?"


# -- recover_from: one line for each way a turn fails, and the history left valid --
def history() -> list:
    return [{"role": "user", "content": [{"type": "text", "text": "Read a.txt."}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read",
                                               "input": {"path": "a.txt"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                          "content": "a" * 50}]},
            {"role": "assistant", "content": [{"type": "text", "text": "It says a."}]}]


def recovered(exc: BaseException, messages: list, before: list, capsys) -> tuple[int, str]:
    code = recover_from(exc, messages, before, piped_screen()[0], threading.Event())
    return code, capsys.readouterr().err


def test_a_reply_that_is_no_reply_is_named_and_the_conversation_kept(capsys):
    messages = history()
    messages.append({"role": "user", "content": [{"type": "text", "text": "And b.txt?"}]})
    kept = copy_history(messages)
    code, said = recovered(BadReply("the stream stopped before message_stop"), messages,
                           history(), capsys)
    assert (code, said) == (1, "\n[error: the stream stopped before message_stop; your "
                               "conversation is kept]\n")
    assert messages == kept


def test_a_refusal_takes_the_exchange_out_and_says_what_to_do(capsys):
    messages, before = history(), history()[:2]
    code, said = recovered(Refused("the model declined to answer"), messages, before, capsys)
    assert (code, said) == (1, "\n[the model declined to answer; this turn is taken out of the "
                               "conversation, so it does not weigh on the next one: ask again "
                               "differently, or ask something else]\n")
    assert messages == before


def test_a_bugs_long_error_is_cut_to_one_alert_that_says_its_length(capsys):
    messages, before = history(), history()[:2]
    code, said = recovered(RuntimeError("x" * 2_000), messages, before, capsys)
    error = "RuntimeError: " + "x" * 2_000
    mark = f"… [{len(error):,} characters in all]"
    shown = error[:1_000 - len(mark)] + mark
    assert said == f"\n[error: {shown}; this turn is not kept in the history]\n"
    assert (code, messages) == (1, before)


TOO_LONG = {"error": {"status": 400, "message": "prompt is too long: 30012 tokens > 25000 maximum"}}


@pytest.mark.allow_violations
def test_a_message_joined_to_a_stopped_turn_and_too_long_is_taken_back_with_its_size(
    scripted_api, capsys
):
    """The last turn stopped on the user's side, so the new message joined that user message:
    only the new text is measured and taken back, the stopped turn's own text stays."""
    exc = failed_call(scripted_api, [TOO_LONG], 0)
    before = history()[:3]  # the turn stopped after the tool result
    messages = copy_history(before)
    add_user_message(messages, "z" * 120)
    code, said = recovered(exc, messages, before, capsys)
    assert said == ("\n[error: your message is 120 characters, too long for the model's context "
                    "window (invalid_request_error: prompt is too long: 30012 tokens > 25000 "
                    "maximum); it is taken back and the conversation is as before: send a shorter "
                    "one, or save the text in a file and ask for the parts you need]\n")
    assert (code, messages) == (1, history()[:3])


@pytest.mark.allow_violations
def test_a_joined_turn_too_long_after_its_own_tool_call_makes_room_and_keeps_the_message(
    scripted_api, capsys
):
    exc = failed_call(scripted_api, [TOO_LONG], 0)
    before = history()[:3]
    messages = copy_history(before)
    add_user_message(messages, "Now b.txt.")
    messages += [{"role": "assistant", "content": [{"type": "tool_use", "id": "t2",
                                                    "name": "read", "input": {"path": "b.txt"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2",
                                               "content": "b" * 50}]}]
    code, said = recovered(exc, messages, before, capsys)
    assert code == 1 and "the 1 oldest tool results were taken out of the history" in said
    assert messages[2]["content"][1]["text"] == "Now b.txt."  # the message stays
    assert messages[2]["content"][0]["content"] == ROOM_NOTE and len(messages) == 5

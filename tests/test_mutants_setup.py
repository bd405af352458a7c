"""plumbing/setup.py where only a script's main() reaches it (test_cli.py runs main() whole):
the start-up checks, the settings line of --help and the key's header, which answers the SDK
retries, and leave(). Called here directly, a few milliseconds each."""

import argparse
import io
import os
import sys

import anthropic
import httpx2
import pytest
from rich.console import Console

import plumbing.setup
from plumbing.screen import Screen
from plumbing.setup import (
    SERVER_ERROR_SHOWN,
    check_setup,
    explain_api_error,
    in_effect,
    key_header,
    leave,
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
def failed_call(scripted_api, turns: list, retries: int) -> anthropic.APIStatusError:
    scripted_api.play({"turns": turns})
    client = anthropic.Anthropic(base_url=scripted_api.start(), api_key="k",
                                 max_retries=retries)
    with pytest.raises(anthropic.APIStatusError) as raised:
        client.messages.create(model="claude-sonnet-5-5", max_tokens=10,
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

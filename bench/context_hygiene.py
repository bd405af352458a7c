"""How much smaller does the main conversation stay when a subagent does the reading? Measured
offline.

    python bench/context_hygiene.py

A scripted "read 20 files, then answer" task, done twice against the scripted server: inline by the
previous version (v2_planning.py, or v1_basic.py if there is no v2), which reads the files itself,
and by v3_subagents.py, which hands the reading to one explore subagent and gets back a short
report. Prints the largest request the main agent sent in each case, and their ratio (the target is
0.20 or less). Nothing is asserted: the sizes depend on the files, which are generated here. """

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripted.loading import VERSIONS, load_agent  # noqa: E402
from scripted.server import ScriptedAPI  # noqa: E402

FILES = 20
QUESTION = "Which module under src/ defines load_settings? Read them all."
TARGET_RATIO = 0.20  # the subagent's share of the inline request size, at most
REPORT = (
    "src/module_13.py defines load_settings(path) at line 40; no other module defines or calls it."
)


def write_project(folder: Path) -> list[str]:
    """Twenty modules of a few kilobytes each, like a small code base."""
    paths = []
    for number in range(FILES):
        functions = [
            f'def helper_{number}_{index}(value):\n    """Helper {index} of module {number}."""\n'
            f"    result = value * {index} + {number}\n    return result\n\n"
            for index in range(30)
        ]
        if number == 13:
            functions[8] = (
                'def load_settings(path):\n    """Read the settings file."""\n    return {}\n\n'
            )
        path = f"src/module_{number:02}.py"
        (folder / path).parent.mkdir(exist_ok=True)
        (folder / path).write_text("".join(functions))
        paths.append(path)
    return paths


def reading_turns(paths: list[str]) -> list[dict]:
    """Four rounds of five read_file calls, then the answer."""
    rounds = [paths[start : start + 5] for start in range(0, len(paths), 5)]
    return [
        {"tool_calls": [{"name": "read_file", "input": {"path": path}} for path in group]}
        for group in rounds
    ] + [{"text": REPORT}]


def inline(paths: list[str]) -> dict:
    return {"turns": reading_turns(paths)}


def delegated(paths: list[str]) -> dict:
    task = {
        "description": "find load_settings",
        "agent_type": "explore",
        "prompt": f"SUBAGENT: {QUESTION} Report the file and line.",
    }
    return {
        "turns": [{"tool_calls": [{"name": "Task", "input": task}]}, {"text": REPORT}],
        "tracks": [{"match": "SUBAGENT:", "turns": reading_turns(paths)}],
    }


def run_question(api: ScriptedAPI, version: str, scenario: dict) -> list[dict]:
    """Run the question through the version; return its requests in order: the track that
    answered each (default: the main agent) and its size in bytes."""
    api.play(scenario)
    agent = load_agent(version)
    with contextlib.redirect_stdout(io.StringIO()):
        code = agent.run_turn([], QUESTION)
    if code != 0 or api.violations or api.problems or api.remaining():
        sys.exit(f"{version} did not play the scenario: {api.violations + api.problems}")
    return [{"track": request.track, "size": request.size} for request in api.requests]


def largest_main_request(requests: list[dict]) -> int:
    return max(request["size"] for request in requests if request["track"] == "default")


def measure() -> dict:
    """The largest main-agent request, inline and delegated, in bytes, and every request of the
    two runs in order (the docs show these: the numbers, and a chart of the requests)."""
    previous = "v2" if "v2" in VERSIONS else "v1"
    api = ScriptedAPI()
    os.environ.update(api.client_env("bench"))
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)
        paths = write_project(Path(workdir))
        requests = {
            "inline": run_question(api, previous, inline(paths)),
            "delegated": run_question(api, "v3", delegated(paths)),
        }
        os.chdir(ROOT)
    api.stop()
    return {
        "previous": previous,
        "inline": largest_main_request(requests["inline"]),
        "delegated": largest_main_request(requests["delegated"]),
        "requests": requests,
    }


def main() -> None:
    sizes = measure()
    if sys.argv[1:] == ["--json"]:  # what the docs build measures
        print(json.dumps(sizes))
        return
    previous, read_inline, read_by_subagent = sizes["previous"], sizes["inline"], sizes["delegated"]
    print(f"read {FILES} files, then answer: the main agent's largest request")
    print(f"  {previous}, reading inline:          {read_inline:>8,} bytes")
    print(f"  v3, one explore subagent reads: {read_by_subagent:>8,} bytes")
    ratio = read_by_subagent / read_inline
    print(f"  ratio v3 / {previous}: {ratio:.3f} (target {TARGET_RATIO:.2f} or less)")


if __name__ == "__main__":
    main()

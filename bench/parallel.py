"""Do Task calls in one reply really run at the same time? Measured offline, in wall time.

    python bench/parallel.py

The scripted model makes one Task call, then (in a second run) four Task calls in one reply. Every
subagent makes two model calls (a read_only_bash call, then its report), and the scripted server
takes 0.5 s to answer each, as a slow model would. Four subagents run one after the other would take
about four times as long as one; run in parallel, about as long as one. Prints both wall times and
their ratio (the target is 1.3 or less). Nothing is asserted: the numbers depend on the machine. """

import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripted.loading import load_agent  # noqa: E402
from scripted.server import ScriptedAPI  # noqa: E402

LATENCY = 0.5  # seconds the scripted server takes for each of a subagent's model calls
TARGET_RATIO = 1.3  # four in parallel against one; one after the other would be about 4


def scenario(subagents: int) -> dict:
    """The main agent makes `subagents` Task calls in one reply; each subagent has its own track."""
    tasks = [
        {
            "name": "Task",
            "input": {
                "description": f"question {n}",
                "prompt": f"QUESTION-{n}: count the files.",
                "agent_type": "explore",
            },
        }
        for n in range(subagents)
    ]
    child = [
        {
            "latency": LATENCY,
            "tool_calls": [{"name": "read_only_bash", "input": {"command": "ls"}}],
        },
        {"latency": LATENCY, "text": "There are no files."},
    ]
    return {
        "turns": [{"tool_calls": tasks}, {"text": "All answered."}],
        "tracks": [{"match": f"QUESTION-{n}:", "turns": child} for n in range(subagents)],
    }


def wall_time(api: ScriptedAPI, subagents: int) -> float:
    api.play(scenario(subagents))
    agent = load_agent("v3")
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = agent.run_turn([], "Answer the questions.")
    elapsed = time.perf_counter() - start
    if code != 0 or api.violations or api.problems or api.remaining():
        sys.exit(f"the scenario did not play: {api.violations + api.problems}")
    return elapsed


def main() -> None:
    api = ScriptedAPI()
    os.environ.update(api.client_env("bench"))
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)
        one = wall_time(api, 1)
        four = wall_time(api, 4)
        os.chdir(ROOT)
    api.stop()
    print(f"subagents with {LATENCY} s per model call, two calls each")
    print(f"  one Task call:             {one:.2f} s")
    print(f"  four Task calls, one reply: {four:.2f} s")
    print(
        f"  ratio four / one: {four / one:.2f}x (target {TARGET_RATIO} or less; one after the"
        " other would be about 4x)"
    )


if __name__ == "__main__":
    main()

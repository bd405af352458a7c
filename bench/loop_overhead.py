"""How much does the agent loop add to each model call? Measured offline against the scripted
server.

    python bench/loop_overhead.py [v1|v2|v3|v4] [--rounds N]

Runs N rounds in which the scripted model calls `bash true` and then answers, once through the
version's agent_loop and once as bare SDK streaming calls with the same requests; prints the time
per round for both and their ratio. Nothing here is asserted: the numbers depend on the machine.
"""

import argparse
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

def scenario(rounds: int) -> dict:
    return {
        "turns": [
            {"tool_calls": [{"name": "bash", "input": {"command": "true"}}], "repeat": rounds},
            {"text": "done"},
        ]
    }


def time_agent_loop(agent, api: ScriptedAPI, rounds: int) -> float:
    api.play(scenario(rounds))
    history = []
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        agent.run_turn(history, "go")
    return (time.perf_counter() - start) / (rounds + 1)


def time_bare_sdk(agent, api: ScriptedAPI, rounds: int) -> float:
    """The same requests the loop sent, replayed as plain streaming calls: the SDK and server cost
    alone."""
    bodies = [request.body for request in api.requests]
    api.play({"turns": [{"text": "x", "repeat": len(bodies)}]})
    start = time.perf_counter()
    for body in bodies:
        with agent.client.messages.stream(
            model=body["model"],
            max_tokens=body["max_tokens"],
            system=body["system"],
            tools=body["tools"],
            messages=body["messages"],
        ) as stream:
            stream.get_final_message()
    return (time.perf_counter() - start) / len(bodies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", nargs="?", default="v1")
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    api = ScriptedAPI()
    os.environ.update(api.client_env("bench"), MAX_ROUNDS=str(args.rounds + 5))
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)
        agent = load_agent(args.version)
        loop = time_agent_loop(agent, api, args.rounds)
        bare = time_bare_sdk(agent, api, args.rounds)
    api.stop()
    print(f"{args.version}: {args.rounds + 1} model calls")
    print(f"  agent loop (model call + tool + bookkeeping): {loop * 1000:.1f} ms per round")
    print(f"  bare SDK streaming call, same requests:       {bare * 1000:.1f} ms per call")
    print(f"  loop overhead per round: {(loop - bare) * 1000:.1f} ms (ratio {loop / bare:.2f}x)")


if __name__ == "__main__":
    main()

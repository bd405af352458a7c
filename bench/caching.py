"""What automatic prompt caching buys a v1 session: the share of input tokens read from the cache.

    python bench/caching.py

A scripted v1 session of ROUNDS model calls (one task: a tool call a round, then the answer),
against the scripted server's prompt cache, which follows the documented rule: the breakpoint on
the last block, the longest cached prefix read, nothing cached below the model's minimum. Each
request can read from the cache at most what the request before it sent: everything but the
newest turn (the reply since, and the tool results it asked for). That is the physical limit,
printed beside what was read, and their ratio. Tokens are the scripted server's (four characters
of JSON a token); nothing here depends on time, and nothing is asserted.
"""

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripted.loading import load_agent  # noqa: E402
from scripted.models import MODELS  # noqa: E402
from scripted.server import ScriptedAPI  # noqa: E402

ROUNDS = 20  # model calls in the session
TASK = "Read the twenty notes and tell me which one mentions the deadline."


def scenario() -> dict:
    """ROUNDS - 1 rounds of one read_file each, then the answer."""
    turns = [
        {"tool_calls": [{"name": "read_file", "input": {"path": f"notes/{number:02}.txt"}}]}
        for number in range(ROUNDS - 1)
    ]
    return {"turns": turns + [{"text": "notes/13.txt mentions the deadline."}]}


def write_notes(folder: Path) -> None:
    (folder / "notes").mkdir()
    for number in range(ROUNDS - 1):
        text = f"Note {number}: the meeting moved to room {number}.\n" * 20
        if number == 13:
            text += "The deadline is Friday.\n"
        (folder / "notes" / f"{number:02}.txt").write_text(text)


def measure() -> dict:
    """Input tokens of each request: read from the cache, written to it, neither; and the most
    the cache could have given each one (all of the request before)."""
    api = ScriptedAPI()
    os.environ.update(api.client_env("bench"))
    saved = os.getcwd()
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)
        write_notes(Path(workdir))
        api.play(scenario())
        agent = load_agent("v1")
        with contextlib.redirect_stdout(io.StringIO()):
            code = agent.run_turn([], TASK)
        os.chdir(saved)
    api.stop()
    if code != 0 or api.violations or api.problems or api.remaining():
        sys.exit(f"v1 did not play the scenario: {api.violations + api.problems}")
    usages = [request.reply["body"]["usage"] for request in api.requests]
    totals = [prompt_tokens(usage) for usage in usages]
    read = sum(usage["cache_read_input_tokens"] for usage in usages)
    limit = sum(totals[:-1])  # request n can read at most all of request n - 1
    return {
        "model": agent.MODEL_ID,
        "minimum": MODELS[agent.MODEL_ID].cache_minimum,
        "calls": len(usages),
        "input": sum(totals),
        "read": read,
        "limit": limit,
    }


def prompt_tokens(usage: dict) -> int:
    """All the input tokens of a request: read from the cache, written to it, and the rest."""
    return (
        usage["input_tokens"]
        + usage["cache_creation_input_tokens"]
        + usage["cache_read_input_tokens"]
    )


def main() -> None:
    figures = measure()
    if sys.argv[1:] == ["--json"]:  # what the docs build measures
        print(json.dumps(figures))
        return
    total = figures["input"]
    print(
        f"a v1 session of {figures['calls']} model calls on {figures['model']} "
        f"(nothing is cached below {figures['minimum']:,} tokens)"
    )
    read_share = figures["read"] / total
    limit_share = figures["limit"] / total
    print(f"  input tokens, all calls:          {total:>9,}")
    print(f"  read from the cache:              {figures['read']:>9,}  ({read_share:.1%})")
    print(f"  the most the cache could give:    {figures['limit']:>9,}  ({limit_share:.1%})")
    print(f"  read / the most it could give:    {figures['read'] / figures['limit']:.3f}")


if __name__ == "__main__":
    main()

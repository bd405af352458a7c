"""What a long session costs, and what it remembers: no compaction, clearing, v5's compaction.

    python bench/compaction.py

One scripted v5 session of TURNS user turns. Each of the first five reads FILES_PER_TURN notes of
about NOTE_LINES lines, one read a model call, then answers; the last one asks for two facts that
only the first two notes hold. It is played three ways against the scripted server, whose prompt
cache follows the documented rule (the breakpoint on the last block, the longest cached prefix
within 20 blocks read) and whose context window is WINDOW tokens:

    none       the history grows until a request no longer fits the window; the session is over
    clearing   before every model call, each tool result but the last KEEP_RECENT is replaced by
               a one-line placeholder (learn-claude-code's micro-compaction, s06/s08): the prefix
               changes with every call, so nothing is read from the cache
    compaction v5 as it is, with COMPACT_AT tokens: past it, a summary on the cached prefix

For each: the input billed, priced as the pricing page prices prompt caching (a cache write at
1.25 times the base input price, a cache read at 0.1 times:
https://platform.claude.com/docs/en/about-claude/pricing), in tokens at the base price and in
dollars at INPUT_PRICE; the largest request; how many model calls of the session were answered
(and the summary requests besides); and whether the two facts were in the request that asked
for them. Tokens are the scripted server's (four characters of JSON a token); nothing here
depends on time.
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
from scripted.server import ScriptedAPI  # noqa: E402

TURNS = 6  # user turns: five that read notes, then the question about the first two
FILES_PER_TURN = 6  # notes read in each of the first five turns, one model call each
NOTE_LINES = 120  # lines of one note (about 3,000 tokens once read)
WINDOW = 60_000  # tokens: the scripted model's context window in this session
COMPACT_AT = 20_000  # v5's threshold here, a third of the window
KEEP_RECENT = 3  # clearing: the tool results left whole, as learn-claude-code keeps them
CLEARED = "[Previous: used read_file]"  # what clearing puts in place of a tool result
WRITE_PRICE, READ_PRICE = 1.25, 0.1  # a cache write, a cache read, times the base input price
INPUT_PRICE = 2.0  # dollars per million input tokens: claude-sonnet-5-5
FACTS = {"notes/01.md": "the staging password rotates every 45 days",
         "notes/02.md": "releases are signed with the key K-7731"}
QUESTION = "Which key signs releases, and how often does the staging password rotate?"
SUMMARY = ("Read the notes so far, one model call each, for the user's reading tasks. Facts to "
           "keep: " + "; ".join(f"{fact} ({path})" for path, fact in FACTS.items()) + ".")


def note_paths() -> list[list[str]]:
    """The notes each reading turn reads, in order."""
    paths = [f"notes/{number:02}.md" for number in range(1, (TURNS - 1) * FILES_PER_TURN + 1)]
    return [paths[start:start + FILES_PER_TURN] for start in range(0, len(paths), FILES_PER_TURN)]


def write_notes(folder: Path) -> None:
    (folder / "notes").mkdir()
    for paths in note_paths():
        for path in paths:
            lines = [f"{path} line {number}: meeting notes, nothing to keep here, only words to "
                     "fill the page as real notes do." for number in range(NOTE_LINES)]
            if path in FACTS:
                lines[NOTE_LINES // 2] = f"Remember: {FACTS[path]}."
            (folder / path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def tasks() -> list[str]:
    reading = [f"Read {', '.join(paths)} and tell me what they are about."
               for paths in note_paths()]
    return reading + [QUESTION]


def scenario(summary_mark: str) -> dict:
    """The model's side: a read a call, an answer a turn; a summary whenever one is asked for."""
    turns = []
    for paths in note_paths():
        turns += [{"tool_calls": [{"name": "read_file", "input": {"path": path}}]}
                  for path in paths]
        turns.append({"text": "Meeting notes, nothing to act on."})
    turns.append({"text": "K-7731 signs releases; the staging password rotates every 45 days."})
    summaries = {"match": summary_mark, "in": "last", "turns": [{"text": SUMMARY, "repeat": 20}]}
    return {"turns": turns, "tracks": [summaries], "context_window": WINDOW}


def clearing(call_model):
    """call_model, after clearing each tool result but the last KEEP_RECENT in place."""

    def call_model_after_clearing(messages, system, tools, screen):
        results = [block for message in messages if message["role"] == "user"
                   for block in message["content"] if block.get("type") == "tool_result"]
        for block in results[:-KEEP_RECENT]:
            block["content"] = CLEARED
        return call_model(messages, system, tools, screen)

    return call_model_after_clearing


def play(way: str) -> dict:
    """One session, played one way; its figures."""
    api = ScriptedAPI()
    os.environ.update(api.client_env("bench"))
    os.environ["COMPACT_AT"] = str(COMPACT_AT if way == "compaction" else 10**12)
    saved = os.getcwd()
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)
        write_notes(Path(workdir))
        agent = load_agent("v5")
        api.play(scenario(agent.SUMMARY_QUESTION[:60]))
        if way == "clearing":
            agent.call_model = clearing(agent.call_model)
        history, failed = [], False
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for task in tasks():
                if agent.run_turn(history, task) != 0:
                    failed = True  # the window is full: the session is over
                    break
        os.chdir(saved)
    api.stop()
    if api.violations or api.problems:
        sys.exit(f"{way}: the session broke the API's rules: {api.violations + api.problems}")
    return figures(api, failed)


def figures(api: ScriptedAPI, failed: bool) -> dict:
    answered = [request for request in api.requests if request.reply["status"] == 200]
    usages = [request.reply["body"]["usage"] for request in answered]
    written = sum(usage["cache_creation_input_tokens"] for usage in usages)
    read = sum(usage["cache_read_input_tokens"] for usage in usages)
    fresh = sum(usage["input_tokens"] for usage in usages)
    billed = fresh + WRITE_PRICE * written + READ_PRICE * read
    summaries = [request for request in answered if request.track != "default"]
    asked = [request for request in answered
             if QUESTION in json.dumps(request.body["messages"][-1])]
    facts = "not reached"
    if asked:
        sent = json.dumps(asked[-1].body["messages"])
        facts = "yes" if all(fact in sent for fact in FACTS.values()) else "no"
    return {
        "billed": round(billed),
        "dollars": round(billed * INPUT_PRICE / 1_000_000, 4),
        "largest": max(sum(usage.values()) - usage["output_tokens"] for usage in usages),
        "calls": len(answered) - len(summaries),
        "summaries": len(summaries),
        "session_calls": len(scenario("")["turns"]),
        "window_exceeded": failed,
        "facts": facts,
    }


def measure() -> dict:
    return {way: play(way) for way in ("none", "clearing", "compaction")}


def table(results: dict) -> str:
    """The figures as the benchmark prints them (and the docs show them)."""
    calls = results["none"]["session_calls"]
    lines = [
        f"one session of {calls} model calls ({TURNS} user turns), a window of {WINDOW:,} tokens; "
        f"v5 compacts at {COMPACT_AT:,}, clearing keeps the last {KEEP_RECENT} results",
        f"  {'':<11}{'input billed':>14}{'dollars':>9}{'largest':>9}{'calls':>8}"
        f"{'summaries':>11}  facts",
    ]
    for way, result in results.items():
        lines.append(f"  {way:<11}{result['billed']:>14,}{result['dollars']:>9.4f}"
                     f"{result['largest']:>9,}{result['calls']:>4}/{calls:<3}"
                     f"{result['summaries']:>11}  {result['facts']}")
    lines.append("  input billed: tokens at the base price (a cache write 1.25 times, a read 0.1 "
                 f"times); dollars at ${INPUT_PRICE:g} per million")
    return "\n".join(lines) + "\n"


def main() -> None:
    results = measure()
    if sys.argv[1:] == ["--json"]:  # what the docs build measures
        print(json.dumps(results))
        return
    print(table(results), end="")

if __name__ == "__main__":
    main()

"""What a long session costs, and what it remembers: v5's compaction against the other ways.

    python bench/compaction.py

One scripted v5 session of TURNS user turns. Each of the first five reads FILES_PER_TURN notes of
about NOTE_LINES lines, one read a model call, then answers; the last one asks for two facts that
only the first two notes hold. It is played seven ways against the scripted server, whose prompt
cache follows the documented rule (each breakpoint reads the longest cached prefix within 20
blocks before it) and whose context window is WINDOW tokens unless a way says otherwise. In
every way, a turn that overflows the window is sent again once, as the agent's error line asks.

    none, sent again    no compaction: the agent makes room by clearing the oldest tool results
                        after an overflow, and the user sends the turn again
    none, 1M window     no compaction, in the model's 1M-token window: the uncompacted session
                        with caching as the API does it, what compaction's input is compared with
    clearing            context editing's rule, done by the agent: once a request has sent more
                        than COMPACT_AT tokens, each tool result but the newest KEEP_RECENT is
                        replaced by a placeholder before the next call
    learn-claude-code   that course's rule: before every call, each tool result but the last
                        KEEP_RECENT that is longer than 100 characters is cleared, read_file's
                        kept; past 50,000 tokens a summary replaces the history (v5's own
                        compaction stands in for theirs)
    v5                  v5 as it is, with COMPACT_AT, and a summary that keeps both facts
    v5, lossy summary   the same, but the model's summary drops one of the facts
    v5, no breakpoint   v5 with the system prompt sent as plain text, without the breakpoint
                        at its end: each compaction writes system and tools to the cache again

For each: the input billed, priced as the pricing page prices prompt caching (a cache write at
1.25 times the base input price, a cache read at 0.1 times:
https://platform.claude.com/docs/en/about-claude/pricing), in tokens at the base price; every
reply's output tokens (summaries included); both in dollars at INPUT_PRICE and OUTPUT_PRICE; the
largest request; the requests the window refused; how many model calls of the session were
answered (and the summary requests besides); how many of the two facts were in the request that
asked for them (0 if the question was never sent); and for v5, what the first request after a
compaction read from the cache and wrote to it. Tokens are the scripted server's (four
characters of JSON a token); nothing here depends on time.
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

from plumbing.compaction import prompt_size  # noqa: E402
from scripted.loading import load_agent  # noqa: E402
from scripted.server import ScriptedAPI  # noqa: E402

TURNS = 6  # user turns: five that read notes, then the question about the first two
FILES_PER_TURN = 6  # notes read in each of the first five turns, one model call each
NOTE_LINES = 120  # lines of one note (about 3,000 tokens once read)
WINDOW = 60_000  # tokens: the scripted model's context window in this session
LARGE_WINDOW = 1_000_000  # tokens: the window of a current model, where nothing overflows
COMPACT_AT = 20_000  # v5's threshold here, a third of the window; clearing's trigger too
KEEP_RECENT = 3  # clearing: the tool results left whole, newest first
CLEAR_OVER = 100  # learn-claude-code: a result this long or shorter is never cleared
KEPT_TOOL = "read_file"  # learn-claude-code: its results are never cleared
AUTO_COMPACT_AT = 50_000  # learn-claude-code: tokens past which a summary replaces the history
CLEARED = "[tool result cleared to save context]"  # what clearing puts in a result's place
WRITE_PRICE = 1.25  # a cache write, times the base input price
READ_PRICE = 0.1  # a cache read, times the base input price
INPUT_PRICE = 2.0  # dollars per million input tokens: claude-sonnet-5-5
OUTPUT_PRICE = 10.0  # dollars per million output tokens: claude-sonnet-5-5
FACTS = {"notes/01.md": "the staging password rotates every 45 days",
         "notes/02.md": "releases are signed with the key K-7731"}
QUESTION = "Which key signs releases, and how often does the staging password rotate?"
SUMMARY = ("Read the notes so far, one model call each, for the user's reading tasks. Facts to "
           "keep: " + "; ".join(f"{fact} ({path})" for path, fact in FACTS.items()) + ".")
LOSSY_SUMMARY = ("Read the notes so far, one model call each, for the user's reading tasks. "
                 f"Facts to keep: {FACTS['notes/02.md']} (notes/02.md).")
WAYS = {  # name: (the table's row, the window, COMPACT_AT, the clearing rule, the summary)
    "resent": ("none, sent again", WINDOW, None, None, SUMMARY),
    "cached": ("none, 1M window", LARGE_WINDOW, None, None, SUMMARY),
    "clearing": ("clearing", WINDOW, None, "past the trigger", SUMMARY),
    "lcc": ("learn-claude-code", WINDOW, AUTO_COMPACT_AT, "every call", SUMMARY),
    "compaction": ("v5", WINDOW, COMPACT_AT, None, SUMMARY),
    "lossy": ("v5, lossy summary", WINDOW, COMPACT_AT, None, LOSSY_SUMMARY),
    "no_breakpoint": ("v5, no breakpoint", WINDOW, COMPACT_AT, None, SUMMARY),
}


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


def scenario(summary_mark: str, summary: str, window: int) -> dict:
    """The model's side: a read a call, an answer a turn; a summary whenever one is asked for."""
    turns = []
    for paths in note_paths():
        turns += [{"tool_calls": [{"name": "read_file", "input": {"path": path}}]}
                  for path in paths]
        turns.append({"text": "Meeting notes, nothing to act on."})
    turns.append({"text": "K-7731 signs releases; the staging password rotates every 45 days."})
    summaries = {"match": summary_mark, "in": "last", "turns": [{"text": summary, "repeat": 20}]}
    return {"turns": turns, "tracks": [summaries], "context_window": window}


def tool_results(messages: list) -> list[dict]:
    return [block for message in messages if message["role"] == "user"
            for block in message["content"] if block.get("type") == "tool_result"]


def tool_names(messages: list) -> dict[str, str]:
    """The tool each tool_use id called."""
    return {block.id: block.name for message in messages if message["role"] == "assistant"
            for block in message["content"] if getattr(block, "type", "") == "tool_use"}


def past_the_trigger(last_size: int, messages: list) -> list[dict]:
    """Context editing's rule: once the last request passed COMPACT_AT, all but the newest few."""
    if last_size <= COMPACT_AT:
        return []
    return tool_results(messages)[:-KEEP_RECENT]


def every_call(last_size: int, messages: list) -> list[dict]:
    """learn-claude-code's rule: all but the last few, if long and not from read_file."""
    names = tool_names(messages)
    return [block for block in tool_results(messages)[:-KEEP_RECENT]
            if len(str(block["content"])) > CLEAR_OVER and names[block["tool_use_id"]] != KEPT_TOOL]


RULES = {"past the trigger": past_the_trigger, "every call": every_call}


def clearing(call_model, rule):
    """call_model, after clearing in place the tool results the rule picks."""
    last_size = 0

    def call_model_after_clearing(messages, system, tools, screen):
        nonlocal last_size
        for block in rule(last_size, messages):
            block["content"] = CLEARED
        response = call_model(messages, system, tools, screen)
        last_size = prompt_size(response.usage)
        return response

    return call_model_after_clearing


def play(way: str) -> dict:
    """One session, played one way; its figures."""
    _, window, compact_at, rule, summary = WAYS[way]
    api = ScriptedAPI()
    os.environ.update(api.client_env("bench"))
    os.environ["COMPACT_AT"] = str(compact_at or 10**12)
    saved = os.getcwd()
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)
        write_notes(Path(workdir))
        agent = load_agent("v5")
        api.play(scenario(agent.SUMMARY_QUESTION[:60], summary, window))
        if rule:
            agent.call_model = clearing(agent.call_model, RULES[rule])
        if way == "no_breakpoint":
            agent.cached_system = str  # the system prompt as v4 sends it: plain text
        history = []
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for task in tasks():
                if agent.run_turn(history, task) != 0:  # the error line: send it again
                    agent.run_turn(history, task)
        os.chdir(saved)
    api.stop()
    if api.violations or api.problems:
        sys.exit(f"{way}: the session broke the API's rules: {api.violations + api.problems}")
    return figures(api)


def figures(api: ScriptedAPI) -> dict:
    answered = [request for request in api.requests if request.reply["status"] == 200]
    usages = [request.reply["body"]["usage"] for request in answered]
    written = sum(usage["cache_creation_input_tokens"] for usage in usages)
    read = sum(usage["cache_read_input_tokens"] for usage in usages)
    fresh = sum(usage["input_tokens"] for usage in usages)
    billed = fresh + WRITE_PRICE * written + READ_PRICE * read
    output = sum(usage["output_tokens"] for usage in usages)
    summaries = [number for number, request in enumerate(answered) if request.track != "default"]
    asked = [request for request in answered
             if QUESTION in json.dumps(request.body["messages"][-1])]
    sent = json.dumps(asked[-1].body["messages"]) if asked else ""
    after = {"cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    if summaries:  # the first request after the first compaction
        after = usages[summaries[0] + 1]
    return {
        "billed": round(billed),
        "output": output,
        "dollars": round((billed * INPUT_PRICE + output * OUTPUT_PRICE) / 1_000_000, 4),
        "largest": max(prompt_size_of(usage) for usage in usages),
        "overflows": len(api.requests) - len(answered),
        "calls": len(answered) - len(summaries),
        "summaries": len(summaries),
        "session_calls": len(scenario("", "", WINDOW)["turns"]),
        "facts": len([fact for fact in FACTS.values() if fact in sent]),
        "facts_asked": len(FACTS),
        "after_read": after["cache_read_input_tokens"],
        "after_written": after["cache_creation_input_tokens"],
    }


def prompt_size_of(usage: dict) -> int:
    return sum(usage.values()) - usage["output_tokens"]


def measure() -> dict:
    return {way: play(way) for way in WAYS}


def table(results: dict) -> str:
    """The figures as the benchmark prints them (and the docs show them)."""
    calls = results["resent"]["session_calls"]
    lines = [
        f"one session of {calls} model calls ({TURNS} user turns), a window of {WINDOW:,} tokens; "
        f"v5 compacts at {COMPACT_AT:,}",
        f"  {'':<19}{'input billed':>13}{'output':>8}{'dollars':>9}{'largest':>10}"
        f"{'overflows':>10}{'calls':>8}{'summaries':>10}  facts",
    ]
    for way, result in results.items():
        lines.append(f"  {WAYS[way][0]:<19}{result['billed']:>13,}{result['output']:>8,}"
                     f"{result['dollars']:>9.4f}{result['largest']:>10,}{result['overflows']:>10}"
                     f"{result['calls']:>4}/{calls:<3}{result['summaries']:>10}  "
                     f"{result['facts']} of {result['facts_asked']}")
    lines.append("  input billed: tokens at the base price, a cache write 1.25 times, a read 0.1; "
                 f"dollars: ${INPUT_PRICE:g} in, ${OUTPUT_PRICE:g} out per million")
    return "\n".join(lines) + "\n"


def main() -> None:
    results = measure()
    if sys.argv[1:] == ["--json"]:  # what the docs build measures
        print(json.dumps(results))
        return
    print(table(results), end="")


if __name__ == "__main__":
    main()

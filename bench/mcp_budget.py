"""What one gistdex-like query puts in the context: each response mode, with and without v6's
budget, and the ways a reader might answer the question with them.

    python bench/mcp_budget.py

v6_mcp.py runs as it is, against the scripted server, with the project's own MCP server
(mcp_servers/docs_search.py) started over stdio as a .mcp.json starts it. Each way of answering
is one user turn: the scripted model calls mcp__docs__search_docs for QUERY, once or twice, then
answers. What entered the context is read off the requests the API received: the tokens of the
tool results (the scripted server's count, four characters of JSON a token), the input of every
model call of the turn, and how many of the server's best TOP sections the model could read (the
first SECTION_START characters of each, in a tool result it was sent). The ways:

    full, no client budget     gistdex before its fix: everything, and nothing cuts it
    full, v6's budget          a server without modes: v6 cuts the answer to MCP_RESULT_BUDGET
    summary                    the server's default, in a few lines
    detailed                   the text of the best sections
    summary, then detailed     the note's path: a summary first, and detailed once it is needed

Claude Code's default cap on one MCP result, CLAUDE_CODE_CAP tokens, is printed for scale
(https://code.claude.com/docs/en/mcp#mcp-output-limits-and-warnings); the scripted server's tokens
are not the API's, so read its ratios as rough. Nothing here depends on time, nothing is asserted.
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_servers import docs_search  # noqa: E402
from scripted.loading import load_agent  # noqa: E402
from scripted.server import ScriptedAPI, tokens  # noqa: E402

QUERY = "context budget"  # words a user of these docs might look up, as gistdex's user did
TOOL = "mcp__docs__search_docs"
TOP = 5  # the server's best sections, as many as its summary names
SECTION_START = 300  # characters of a section that count as having read it
CLAUDE_CODE_CAP = 25_000  # tokens: Claude Code's default MAX_MCP_OUTPUT_TOKENS
NO_BUDGET = 10**9  # MCP_RESULT_BUDGET that never cuts
WIDTH = 100  # characters of a printed line
START_TIMEOUT = 300  # seconds for the server to start: the docs build runs demos beside it
WAYS = {  # key: (what the table calls it, the modes of the calls in order, v6's budget or none)
    "full_uncut": ("full, no client budget", ["full"], False),
    "full_cut": ("full, v6's budget", ["full"], True),
    "summary_uncut": ("summary, no client budget", ["summary"], False),
    "summary_cut": ("summary, v6's budget", ["summary"], True),
    "detailed_uncut": ("detailed, no client budget", ["detailed"], False),
    "detailed_cut": ("detailed, v6's budget", ["detailed"], True),
    "summary_then_detailed": ("summary, then detailed", ["summary", "detailed"], True),
}


def scenario(modes: list[str]) -> dict:
    """One call of the search tool per mode, one model call each, then the answer."""
    calls = [{"tool_calls": [{"name": TOOL, "input": {"query": QUERY, "mode": mode}}]}
             for mode in modes]
    return {"turns": [*calls, {"text": "The docs explain the context budget."}]}


def server_file(folder: Path) -> Path:
    """A .mcp.json that starts the docs server with this Python, as docs.mcp.json names it."""
    path = folder / ".mcp.json"
    server = {"command": sys.executable, "args": [str(ROOT / "mcp_servers" / "docs_search.py")]}
    path.write_text(json.dumps({"mcpServers": {"docs": server}}), encoding="utf-8")
    return path


def tool_results(body: dict) -> list[dict]:
    return [block for message in body["messages"] if message["role"] == "user"
            and isinstance(message["content"], list) for block in message["content"]
            if block.get("type") == "tool_result"]


def read_sections(results: list[dict], best: list) -> int:
    """How many of the best sections the model could read: their start is in a result's text."""
    text = "".join(block["text"] for result in results for block in result["content"]
                   if block.get("type") == "text")
    return sum(section.text[:SECTION_START] in text for section in best)


def prompt_tokens(usage: dict) -> int:
    return (usage["input_tokens"] + usage["cache_creation_input_tokens"]
            + usage["cache_read_input_tokens"])


def measure() -> dict:
    """For each way: the tool results' tokens, the model calls and their input, the best sections
    read, and the characters of each answer as the server wrote it and as the model got it."""
    api = ScriptedAPI()
    os.environ.update(api.client_env("bench"))
    os.environ["MCP_TIMEOUT"] = str(START_TIMEOUT)  # what is measured is the context, not time
    saved = os.getcwd()
    best = docs_search.search(QUERY, "both")[:TOP]
    found = {}
    with tempfile.TemporaryDirectory() as workdir:
        os.chdir(workdir)
        agent = load_agent("v6")
        budget = agent.MCP_RESULT_BUDGET
        try:
            quiet = io.StringIO()  # v6's screen: the tool lines and the answers
            with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
                agent.start_mcp_servers(server_file(Path(workdir)), trusted=True)
            if TOOL not in [tool["name"] for tool in agent.TOOLS]:
                sys.exit(f"the docs server offered no {TOOL}:\n{quiet.getvalue()}")
            with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
                for way, (label, modes, budgeted) in WAYS.items():
                    agent.MCP_RESULT_BUDGET = budget if budgeted else NO_BUDGET
                    api.play(scenario(modes))
                    code = agent.run_turn([], f"What do the docs say about {QUERY}?")
                    if code != 0 or api.violations or api.problems or api.remaining():
                        sys.exit(f"{label}: v6 did not play the scenario: "
                                 f"{api.violations + api.problems}")
                    found[way] = way_figures(api, best, modes)
        finally:
            agent.SERVERS.close()
            os.chdir(saved)
    api.stop()
    sizes = docs_search.answer_sizes(QUERY)
    return {"query": QUERY, "budget": budget, "cap": CLAUDE_CODE_CAP, "top": TOP,
            "sizes": sizes, "ways": found}


def way_figures(api: ScriptedAPI, best: list, modes: list[str]) -> dict:
    bodies = [request.body for request in api.requests]
    usages = [request.reply["body"]["usage"] for request in api.requests]
    results = tool_results(bodies[-1])
    return {
        "modes": modes,
        "calls": len(bodies),
        "result_tokens": sum(tokens(result) for result in results),
        "result_characters": sum(len(block["text"]) for result in results
                                 for block in result["content"] if block.get("type") == "text"),
        "input": sum(prompt_tokens(usage) for usage in usages),
        "last_input": prompt_tokens(usages[-1]),
        "sections_read": read_sections(results, best),
        "cut": any("characters of this result were cut" in json.dumps(result)
                   for result in results),
    }


def table(figures: dict) -> str:
    ways = figures["ways"]
    before = ways["full_uncut"]
    lines = [
        f"query {figures['query']!r} to mcp_servers/docs_search.py through v6_mcp.py",
        f"(MCP_RESULT_BUDGET={figures['budget']:,} characters; the cap: Claude Code's "
        f"{figures['cap']:,} tokens;", "tokens are the scripted server's, four characters of JSON "
        "a token)",
        "",
        f"{'way':<28}{'calls':>6}{'results, tokens':>16}{'of full':>8}{'of cap':>7}"
        f"{'input, all calls':>18}{'best ' + str(figures['top']) + ' read':>12}",
    ]
    for way, found in ways.items():
        lines.append(
            f"{WAYS[way][0]:<28}{found['calls']:>6}{found['result_tokens']:>16,}"
            f"{found['result_tokens'] / before['result_tokens']:>8.3f}"
            f"{found['result_tokens'] / figures['cap']:>7.2f}{found['input']:>18,}"
            f"{found['sections_read']:>12}"
        )
    lines += [""] + [textwrap.fill(line, WIDTH, subsequent_indent="  ")
                     for line in findings(figures)]
    return "\n".join(lines)


def findings(figures: dict) -> list[str]:
    """What the table says, in words made from its figures: where each way wins and loses."""
    ways, top = figures["ways"], figures["top"]
    full, cut = ways["full_uncut"], ways["full_cut"]
    summary, detailed = ways["summary_cut"], ways["detailed_cut"]
    path = ways["summary_then_detailed"]
    against_cut = "fewer" if path["input"] < cut["input"] else "more"
    return [
        f"- full, uncut: {full['result_tokens'] / figures['cap']:.1f} times the cap, and every "
        f"best section ({full['sections_read']} of {top}) in {full['result_tokens']:,} tokens.",
        f"- v6's budget alone: {cut['result_tokens'] / full['result_tokens']:.3f} of that, but it "
        f"cuts without knowing what matters: {cut['sections_read']} of {top} best sections reach "
        "the model.",
        f"- summary alone: {summary['result_tokens'] / full['result_tokens']:.3f} of full; it "
        f"names the best sections and reads {summary['sections_read']} of them: to read one, the "
        "model must call again.",
        f"- summary, then detailed (the note's path): {path['sections_read']} of {top} read, in "
        f"{path['calls']} model calls, not {detailed['calls']}: "
        f"{path['input'] - detailed['input']:,} input tokens more than asking for detailed at "
        f"once ({path['input']:,} against {detailed['input']:,}), and "
        f"{abs(path['input'] - cut['input']):,} {against_cut} than the budget alone.",
    ]


def main() -> None:
    figures = measure()
    if sys.argv[1:] == ["--json"]:  # what the docs build measures
        print(json.dumps(figures))
        return
    print(table(figures))


if __name__ == "__main__":
    main()

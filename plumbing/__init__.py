"""The plumbing the six lessons lean on: guards, limits and the terminal, written once.

A version script (v1_basic.py ... v6_mcp.py) is a complete agent that a reader follows top to
bottom; whatever a first reading can skip lives here, one module per concern, and the script
imports it in one block that reads as its table of contents:

    replies    what the API accepts in a history; a failed turn explained in one line
    model      one model reply, streamed: thinking shown, optional fields an endpoint refuses
               dropped, a broken stream or a tool call cut by max_tokens asked again; the one
               reader of an API error, whatever shape the endpoint gives it
    checks     a tool call the model got wrong becomes an error it can read
    budget     the context budget: one limit for every tool result; room made when it is full
    turns      the ceiling of one turn: model calls, subagents' included
    commands   bounded command output; no process outlives a command
    files      paths inside the work directory; regular files, opened safely
    platforms  what each OS offers (Linux, macOS, Windows), and the shell the bash tool runs
    screen     what the user sees: streamed markdown, tool lines, progress (rich)
    prompt     reading a message: line editing, history, pasted blocks, Ctrl-C (prompt_toolkit)
    setup      settings, start-up checks, the API client, retry notices, API errors
    todo       v2+: the todo list's rules, and how the list is shown
    subagents  v3+: what the main agent reads when a subagent fails
    read_only  v3+: the read-only shell's parser
    sandbox    v3+: read-only at the OS level too (bubblewrap, Seatbelt), or parsing only
    status     v3+: one status line per running subagent
    skills     v4+: reading SKILL.md files, and the Agent Skills specification's rules
    compaction v5+: a request's size, the summary request, the fresh history
    mcp        v6: MCP servers from .mcp.json, run in one background event loop, every wait
               bounded; their tools as the API accepts them; each result within a budget

Nothing here keeps state at module level: limits, the screen, the stop event and the client are
passed in, so every script (and every test that loads one) gets its own.
"""

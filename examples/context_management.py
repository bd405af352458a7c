"""The API's own answers to a history that outgrows the window, as the fields one adds to
`client.beta.messages.create(...)`. The v5 chapter shows both; tests/test_chapters.py sends each
through the real SDK to the scripted server, so these are shapes the SDK accepts.

Server-side compaction: https://platform.claude.com/docs/en/build-with-claude/compaction
Context editing: https://platform.claude.com/docs/en/build-with-claude/context-editing
"""

# --8<-- [start:compaction]
SERVER_COMPACTION = {
    "betas": ["compact-2026-01-12"],
    "context_management": {"edits": [{
        "type": "compact_20260112",
        "trigger": {"type": "input_tokens", "value": 150_000},  # the default; 50,000 at least
    }]},
}
# --8<-- [end:compaction]

# --8<-- [start:clearing]
CLEAR_TOOL_USES = {
    "betas": ["context-management-2025-06-27"],
    "context_management": {"edits": [{
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 100_000},  # the default
        "keep": {"type": "tool_uses", "value": 3},  # the newest results stay (the default)
        "clear_at_least": {"type": "input_tokens", "value": 20_000},  # worth the cache it breaks
    }]},
}
# --8<-- [end:clearing]

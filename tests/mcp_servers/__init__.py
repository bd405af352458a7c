"""Small MCP servers the tests start: one that misbehaves on request, and ones that fail to be
servers at all (tests/test_mcp.py)."""

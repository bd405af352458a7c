"""MCP servers shipped with the project: docs_search, the gistdex case made small (v6)."""

"""A scripted stand-in for the Claude Messages API, for tests and the offline demo."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The ladder, in order: each script adds one mechanism to the one before.
SCRIPTS = {
    "v1": "v1_basic.py",
    "v2": "v2_planning.py",
    "v3": "v3_subagents.py",
    "v4": "v4_skills.py",
    "v5": "v5_compaction.py",
    "v6": "v6_mcp.py",
}

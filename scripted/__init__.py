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


def script_args(args: list[str]) -> list[str]:
    """A scenario's or a recording's own arguments for the script (v6's --mcp-config FILE), with
    {root} standing for the project's root, so that they read the same on every machine."""
    return [arg.replace("{root}", str(ROOT)) for arg in args]

"""Starting an MCP server, as each OS finds its program (plumbing/mcp.py). These run for real on
a Windows CPython under Wine too (scripts/windows_under_wine.sh): the first tells Windows'
program lookup from POSIX's, which a forced branch on Linux cannot."""
import os
import subprocess
import sys
import time

from plumbing.mcp import McpServers, ServerSpec, still_running

# Not an MCP server: it writes the prefix of the Python that runs it on stderr and ends, and the
# line that says it failed quotes the end of its stderr.
SAYS_ITS_PYTHON = ["-c", "import sys; sys.stderr.write('prefix=' + sys.prefix); sys.exit(3)"]


def start(spec: ServerSpec, timeout: float = 60) -> object:
    servers = McpServers(timeout, timeout)
    try:
        return servers.start_all([spec])[spec.name]
    finally:
        servers.close()


def test_command_python_is_the_python_that_runs_the_agent_even_off_the_agent_s_path(
        tmp_path, monkeypatch):
    # A venv's python.exe run by its full path, not activated: its folder is not on PATH. Windows
    # looks a bare "python" up beside the running interpreter first (a venv's base Python, without
    # the venv's packages), and the SDK looks on the agent's PATH, not the server's.
    monkeypatch.setenv("PATH", str(tmp_path))
    failed = start(ServerSpec("which", "python", SAYS_ITS_PYTHON, {}, tmp_path))
    assert f"prefix={sys.prefix}" in str(failed), failed


def test_without_the_mcp_sdk_each_server_is_one_line_naming_the_fix_at_once(
        tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if requirements.txt was not installed
    began = time.monotonic()
    failed = start(ServerSpec("docs", sys.executable, ["-c", ""], {}, tmp_path), timeout=20)
    assert "the MCP SDK is missing" in str(failed) and "pip install -r requirements.txt" in str(
        failed), failed
    assert time.monotonic() - began < 10, "it waited out MCP_TIMEOUT instead of saying why"



def test_a_new_child_that_has_ended_is_left_out_not_a_failure_of_the_server_starting():
    """Servers start at once: a pid among the new children may be one that has ended (a server
    with no program) by the time psutil looks at it (a full run under load failed 'stubborn'
    with "process PID not found")."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    assert [process.pid for process in still_running({ended.pid, os.getpid()})] == [os.getpid()]

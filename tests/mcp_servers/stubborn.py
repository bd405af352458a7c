"""Not an MCP server: it reads nothing, answers nothing, ignores SIGTERM and a closed stdin, and
first starts a child that does the same. Only a kill ends them (tests/test_mcp.py)."""

import signal
import subprocess
import sys
import threading

if hasattr(signal, "SIGTERM"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if "child" not in sys.argv:  # the same words after it: a test finds both by them
    subprocess.Popen([sys.executable, __file__, "child", *sys.argv[1:]], stdin=subprocess.DEVNULL)
print("starting up...", file=sys.stderr, flush=True)
threading.Event().wait()

"""The scripts at a real terminal: each runs in a pseudo-terminal (pexpect), against the scripted
server, and gets keys as a person types them: arrows, a paste, Ctrl-C, Ctrl-D.

The other tests run the scripts with pipes, where there is no line editing, spinner or status
board; these are the ones that see what a person sees.
"""

import io
import os
import signal
import sys
import time

import psutil
import pytest

from tests.agents import ROOT, SCRIPTS, VERSIONS, once, run_in_process

pexpect = pytest.importorskip("pexpect", reason="pexpect is in requirements-dev.txt")
pyte = pytest.importorskip("pyte", reason="pyte is in requirements-dev.txt")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

LEFT = "\x1b[D"
CTRL_C = "\x03"
CTRL_D = "\x04"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"  # what a terminal sends around a paste


def spawn(version: str, tmp_path, columns: int = 100, rows: int = 24):
    """The script in a pseudo-terminal of `rows` lines and `columns` columns, working in
    tmp_path."""
    env = {
        **os.environ,
        "TERM": "xterm",
        "NO_COLOR": "1",
        "PROMPT_TOOLKIT_NO_CPR": "1",  # no cursor-position request that pexpect would not answer
        "HOME": str(tmp_path),
        "AGENT_HISTORY": str(tmp_path / "history"),
    }
    child = pexpect.spawn(
        sys.executable,
        [str(ROOT / SCRIPTS[version]), "--workdir", str(tmp_path)],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(rows, columns),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    child.logfile_read = io.StringIO()  # everything the terminal was sent, for pyte
    return child


def leave_and_read_the_screen(child, columns: int) -> list[str]:
    """Ctrl-D at the prompt, which leaves with exit code 0; then the lines of the screen the
    session left (see screen_of)."""
    child.expect("you> ")
    child.send(CTRL_D)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, "Ctrl-D at the prompt did not leave with exit code 0"
    return screen_of(child, columns)


def screen_of(child, columns: int, rows: int = 24) -> list[str]:
    """The lines of the screen a session left, as a terminal shows them (pyte plays back every
    control code the script sent)."""
    screen = pyte.Screen(columns, rows)
    pyte.ByteStream(screen).feed(child.logfile_read.getvalue().encode("utf-8"))
    return screen.display


def user_texts(request) -> list[str]:
    """The texts of the request's last user message, reminders left out."""
    content = request.body["messages"][-1]["content"]
    return [
        block["text"]
        for block in content
        if block["type"] == "text" and not block["text"].startswith("<reminder>")
    ]


BACKSPACE = "\x7f"
ROWS = 50  # enough for the whole session below to stay on the screen
# A session at a terminal costs a second Python that imports the SDK (seconds of CPU). What it
# sees is the plumbing's (plumbing/prompt.py, plumbing/screen.py), the same in every version; what
# each version adds around its prompt runs in-process in every version (tests/test_cli.py: the
# REPL's history and q, Ctrl-C mid-command). So the first version and the newest one sit here.
AT_A_TERMINAL = [VERSIONS[0], VERSIONS[-1]]


@pytest.mark.parametrize("version", AT_A_TERMINAL)
def test_a_session_at_a_terminal_edits_pastes_shows_its_waits_renders_markdown_and_leaves(
    scripted_api, version, tmp_path
):
    """The first and the newest version end to end, as a person types: a typo fixed with the
    arrow keys; the spinner says what the agent waits for, and is erased each time; a bracketed
    paste and a burst of keys with line breaks (a terminal without bracketed paste) each arrive as
    one message; backspace after Japanese removes a whole character (prompt_toolkit edits the line
    itself: a Python linked with libedit deleted one byte of it); the reply's markdown is
    rendered, not shown as raw ** and fences; one Ctrl-C clears the line, a second leaves."""
    scripted_api.play(
        {
            "turns": [
                {
                    "latency": 1.2,
                    "tool_calls": [{"name": "bash", "input": {"command": "sleep 1.2"}}],
                },
                {"latency": 0.1, "text": "First answer."},
                {"text": "Second answer."},
                {"text": "Third answer."},
                {"text": "Here is **bold** text.\n\n```\ncode()\n```\n"},
            ]
        }
    )
    child = spawn(version, tmp_path, rows=ROWS)
    child.expect("you> ")
    child.send("hello wrld" + LEFT * 3 + "o\r")  # the typo fixed with the arrow keys
    child.expect("waiting for the model … 1 s")  # the reply takes 1.2 s
    child.expect("running bash … 1 s")  # so does the command
    child.expect("First answer.")
    child.expect("you> ")
    child.send(PASTE_START + "line one\nline two\nline three" + PASTE_END + "\r")
    child.expect("Second answer.")
    child.expect("you> ")
    child.send("p1\np2\np3\n")  # a paste from a terminal without bracketed paste: one write
    child.expect("Third answer.")
    child.expect("you> ")
    child.send("日本語です" + BACKSPACE * 2 + "\r")
    child.expect("bold")
    child.expect("you> ")
    child.send("half a line" + CTRL_C)
    child.expect("line cleared")
    assert child.isalive()
    child.send(CTRL_C)  # the second one, within a second: leave
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    texts = [user_texts(request) for request in scripted_api.requests]
    typed = [["hello world"], [], ["line one\nline two\nline three"], ["p1\np2\np3"], ["日本語"]]
    assert texts == typed  # [] is the bash call's result, which has no text
    assert "hello world" in (tmp_path / "history").read_text()
    shown = "\n".join(screen_of(child, 100, ROWS))
    assert "First answer." in shown and "you> 日本語" in shown, shown  # all of it still shown
    assert "waiting for" not in shown and "running bash" not in shown, shown  # erased each time
    assert "Here is bold text." in shown and "**" not in shown and "```" not in shown
    assert "code()" in shown


DESCRIPTION = "リポジトリ全体のテストの構成を調べて失敗しているものを一覧にする作業"


def task_call(description: str, prompt: str, agent_type: str) -> dict:
    return {
        "tool_calls": [
            {
                "name": "Task",
                "input": {"description": description, "prompt": prompt, "agent_type": agent_type},
            }
        ]
    }


@pytest.mark.allow_leftover_turns  # the slow subagent is stopped before it asks for its 2nd turn
@once("v3")  # the status board's and the commands' plumbing; each loop meets Ctrl-C elsewhere
def test_a_subagent_keeps_one_status_line_at_80_columns_and_ctrl_c_kills_its_command(
    scripted_api, version, tmp_path
):
    """A description wider than the terminal leaves one status line, not one per redraw; Ctrl-C
    while a subagent's command runs kills that command and comes back to the prompt
    (test_subagents.py stops subagents with Ctrl-C in every version, in-process)."""
    look = {"name": "read_only_bash", "input": {"command": "ls"}}
    slow = {"name": "bash", "input": {"command": "echo $$ > started.flag; sleep 1; touch late.txt"}}
    scripted_api.play(
        {
            "turns": [
                task_call(DESCRIPTION, "WIDE: look", "explore"),
                {"text": "Done."},
                task_call("slow job", "SLOW-JOB: run it", "code"),
                {"expect": {"last_user_contains": "never mind"}, "text": "Stopped. What next?"},
            ],
            "tracks": [
                {
                    "match": "WIDE",
                    "turns": [{"latency": 0.2, "tool_calls": [look]}] * 4
                    + [{"latency": 0.2, "text": "report"}],
                },
                {"match": "SLOW-JOB", "turns": [{"tool_calls": [slow]}, {"text": "done"}]},
            ],
        }
    )
    child = spawn(version, tmp_path, columns=80)
    child.expect("you> ")
    child.send("look\r")
    child.expect("Done.")
    child.expect("you> ")
    child.send("run the slow job\r")
    started = tmp_path / "started.flag"
    deadline = time.monotonic() + 15
    while not (started.exists() and started.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    shell = psutil.Process(int(started.read_text()))  # the command's own shell
    child.send(CTRL_C)
    child.expect("interrupted")
    child.expect("you> ")
    child.send("never mind\r")
    child.expect("Stopped. What next?")
    shell.wait(timeout=10)  # ended (psutil.TimeoutExpired if the command went on), so no touch
    assert not (tmp_path / "late.txt").exists(), "a subagent's command went on after Ctrl-C"
    display = leave_and_read_the_screen(child, 80)  # exit does not wait for a worker thread
    status_lines = [line for line in display if line.startswith("[explore]")]
    assert len(status_lines) == 1, "\n".join(display)
    assert "done" in status_lines[0]
    assert "Traceback" not in child.logfile_read.getvalue()


def test_piped_output_has_no_spinner(scripted_api, tmp_path):
    scripted_api.play({"turns": [{"latency": 1.2, "text": "All done."}]})
    done = run_in_process(ROOT / SCRIPTS["v1"], "--workdir", str(tmp_path), "go")
    assert done.returncode == 0 and "All done." in done.stdout
    assert "waiting for" not in done.stdout and "\r" not in done.stdout

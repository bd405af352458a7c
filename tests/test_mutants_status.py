"""plumbing/status.py as the user sees it: the retries a status line counts, a line that fits its
width, what the shared screen passes on, and the dimmed lines of subagents on a terminal (each
test written for a mutant of the status target that survived)."""

import re
import threading

import anthropic

from plumbing.status import LockedScreen, Status, StatusBoard
from tests.test_plumbing_screen import piped_screen, rendered, terminal_screen

DIM = "\x1b[2m"


def test_the_status_line_counts_each_retry_once_and_says_nothing_without_one():
    status = Status("explore", "look around")
    assert "retried" not in status.line()
    status.alert("retrying: overloaded")
    assert status.line().endswith(" s, 1 retried")
    status.alert("retrying: overloaded")
    line = status.line("done")
    assert line.startswith("[explore] look around done (0 tools, ")
    assert line.endswith(" s, 2 retried)")


def test_a_long_description_is_cut_so_the_whole_line_fits_its_columns():
    status = Status("general-purpose", "read every file under src and say " * 5)
    for columns in (40, 60):
        line = status.line("done", columns)
        assert len(line) == columns and "done (0 tools, " in line


def test_the_shared_screen_passes_on_the_tool_its_input_and_whether_it_failed():
    screen, buffer = terminal_screen()
    shared = LockedScreen(StatusBoard(screen, threading.Event()), screen)
    shared.tool_call("read_file", {"path": "notes.txt"})
    shared.tool_result("no such file: notes.txt", True)
    shared.tool_result("read it", False)
    screen.stop_live()
    shown = buffer.getvalue()
    assert 'read_file {"path": "notes.txt"}' in shown
    assert "\x1b[31m  no such file: notes.txt" in shown  # an error in red
    assert DIM + "  read it" in shown  # a result that is not, dimmed


def test_on_a_terminal_the_subagents_lines_are_dimmed_running_finished_and_interrupted():
    screen, buffer = terminal_screen()
    board = StatusBoard(screen, threading.Event())
    running = board.start("plan", "make a plan")
    [live] = board.lines()
    assert live.style == "dim" and live.plain.startswith("[plan] make a plan … 0 tools")
    board.finish(running, "done")
    board.print_finished()
    assert DIM + "[plan] make a plan done (0 tools, " in buffer.getvalue()
    board.start("code", "change it")
    board.stop_all()
    screen.stop_live()
    assert DIM + "[code] change it interrupted (0 tools, " in buffer.getvalue()
    assert "[code]" not in rendered(screen)


def test_the_shared_screen_shows_the_reply_its_thinking_and_alerts_as_the_main_screen_does(
    capsys,
):
    """A reply through the shared screen ends with its usage line, as on the main screen."""
    reply = anthropic.types.Message(
        id="msg_1", type="message", role="assistant", model="m", stop_reason="end_turn",
        content=[{"type": "text", "text": "All done."}],
        usage={"input_tokens": 1, "output_tokens": 1},
    )
    screen, buffer = piped_screen()
    shared = LockedScreen(StatusBoard(screen, threading.Event()), screen)
    shared.thinking("weighing it\n")
    shared.text("All done.")
    shared.reply_done(reply)
    shared.alert("retrying: overloaded")
    shown = buffer.getvalue()
    assert "weighing it" in shown and "All done.\n  [tokens: in 1, out 1" in shown
    assert "retrying: overloaded" in capsys.readouterr().err


def test_on_a_narrow_terminal_a_finished_or_interrupted_line_fits_its_width():
    screen, buffer = terminal_screen(width=50)
    board = StatusBoard(screen, threading.Event())
    described = "read every file under src and say what each one does " * 3
    board.finish(board.start("explore", described), "done")
    board.print_finished()
    board.start("plan", described)
    board.stop_all()
    screen.stop_live()
    lines = [line for line in plain_lines(buffer.getvalue()) if line.startswith("[")]
    assert len(lines) == 2 and all(len(line) <= 50 for line in lines)
    assert " done (0 tools, " in lines[0] and " interrupted (0 tools, " in lines[1]  # unwrapped


def plain_lines(written: str) -> list[str]:
    return [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line).strip("\r") for line in
            written.splitlines()]

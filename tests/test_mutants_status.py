"""plumbing/status.py as the user sees it: the retries a status line counts, a line that fits its
width, what the shared screen passes on, and the dimmed lines of subagents on a terminal (each
test written for a mutant of the status target that survived)."""

import threading

from plumbing.status import LockedScreen, Status, StatusBoard
from tests.test_plumbing_screen import rendered, terminal_screen

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

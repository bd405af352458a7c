"""plumbing/prompt.py: how the user's next message is read, in-process.

From a pipe the lines are read from sys.stdin; at a terminal prompt_toolkit reads the keys sent
into a pipe of its own (create_pipe_input) and draws into a buffer, as it would on a terminal.
The scripts' prompt is seen through a real pseudo-terminal in test_terminal.py; these tests reach
the same code in the test's own process, where the mutation tool can see which test reaches it.
"""

import io
import re
import sys
import threading

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.keys import Keys
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

import plumbing.prompt
from plumbing.prompt import SECOND_CTRL_C, Prompt, make_session
from plumbing.screen import Screen

CLEARED = "[line cleared; Ctrl-C again to leave]"
UP = "\x1b[A"  # the up arrow, as a terminal sends it
ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


class TerminalStream(io.StringIO):
    """sys.stdin or sys.stdout when they are a terminal."""

    def isatty(self) -> bool:
        return True


def piped_screen() -> tuple[Screen, io.StringIO]:
    shown = io.StringIO()
    return Screen(Console(file=shown, force_terminal=False, width=80)), shown


def piped_prompt(monkeypatch, typed: str) -> tuple[Prompt, io.StringIO]:
    """A prompt whose stdin is a pipe holding `typed`, and what its screen shows."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    screen, shown = piped_screen()
    return Prompt(screen, threading.Event()), shown


# -- from a pipe: a line is a message; a replay shows it as it was typed --
def test_a_piped_line_is_the_message_and_is_shown_as_a_terminal_shows_what_is_typed(monkeypatch):
    prompt, shown = piped_prompt(monkeypatch, "  fix the tests  \nname it X\r\n")
    prompt.stopped.set()  # the last turn's Ctrl-C
    assert prompt.read() == "fix the tests"
    assert shown.getvalue() == "\nyou>   fix the tests  \n"
    assert not prompt.stopped.is_set()  # commands may run again
    assert prompt.screen.waiting_for == "waiting for the model"
    assert prompt.read() == "name it X"  # the line end taken off, nothing more


def test_a_line_ending_in_a_backslash_goes_on_to_the_next_whatever_the_line_ends(monkeypatch):
    prompt, shown = piped_prompt(monkeypatch, "first \\\r\nsecond\\\nthird\r\nnext\n")
    assert prompt.read() == "first \nsecond\nthird"
    assert shown.getvalue() == "\nyou> first \n... second\n... third\n"
    assert prompt.read() == "next"


def test_blank_messages_are_skipped_and_the_prompt_shown_again(monkeypatch):
    prompt, shown = piped_prompt(monkeypatch, "\n   \n\\\n\nhello\n")
    assert prompt.read() == "hello"
    assert shown.getvalue() == "\nyou> \n\nyou>    \n\nyou> \n... \n\nyou> hello\n"


def test_the_end_of_the_piped_input_leaves_even_within_a_continued_message(monkeypatch):
    prompt, shown = piped_prompt(monkeypatch, "")
    assert prompt.read() is None
    assert shown.getvalue() == "\nyou> \n"
    prompt, shown = piped_prompt(monkeypatch, "half a message\\\n")
    assert prompt.read() is None


def test_q_quit_and_exit_leave_but_a_message_that_contains_them_is_sent(monkeypatch):
    prompt, _ = piped_prompt(monkeypatch, "q\n quit \nexit\nquit the loop early\n")
    assert [prompt.read(), prompt.read(), prompt.read()] == [None, None, None]
    assert prompt.read() == "quit the loop early"


# -- Ctrl-C at the prompt: once clears the line, twice within SECOND_CTRL_C leaves --
class Keyboard:
    """What the user does at the prompt, each at a time on the prompt's clock: a message, or
    Ctrl-C (KeyboardInterrupt) or Ctrl-D (EOFError) raised where prompt_toolkit raises them."""

    def __init__(self, *keys: tuple[float, object]) -> None:
        self.keys = list(keys)
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def read_message(self) -> str:
        self.now, key = self.keys.pop(0)
        if isinstance(key, str):
            return key
        raise key


def prompt_at(monkeypatch, keyboard: Keyboard, screen: Screen) -> Prompt:
    monkeypatch.setattr(plumbing.prompt, "time", keyboard)  # the prompt's clock only
    prompt = Prompt(screen, threading.Event())
    prompt.read_message = keyboard.read_message
    return prompt


def test_one_ctrl_c_clears_the_line_and_says_how_to_leave(monkeypatch):
    screen, shown = piped_screen()
    keyboard = Keyboard((100.0, KeyboardInterrupt), (100.5, "the next message"))
    assert prompt_at(monkeypatch, keyboard, screen).read() == "the next message"
    assert shown.getvalue() == CLEARED + "\n"


def test_a_second_ctrl_c_within_the_window_leaves_and_its_line_is_dimmed(monkeypatch):
    shown = io.StringIO()
    screen = Screen(Console(file=shown, force_terminal=True, color_system="standard", width=80))
    keyboard = Keyboard((100.0, KeyboardInterrupt), (100.0 + SECOND_CTRL_C / 2, KeyboardInterrupt))
    assert prompt_at(monkeypatch, keyboard, screen).read() is None
    assert shown.getvalue() == f"\x1b[2m{CLEARED}\x1b[0m\n\n"


def test_the_window_for_a_second_ctrl_c_counts_from_the_last_one(monkeypatch):
    screen, shown = piped_screen()
    keyboard = Keyboard(
        (100.0, KeyboardInterrupt),
        (100.0 + SECOND_CTRL_C, KeyboardInterrupt),  # just too late: clears again
        (99.9 + 2 * SECOND_CTRL_C, KeyboardInterrupt),  # within the window of the second
    )
    assert prompt_at(monkeypatch, keyboard, screen).read() is None
    assert shown.getvalue() == f"{CLEARED}\n{CLEARED}\n\n"


def test_ctrl_d_leaves_and_ends_the_line(monkeypatch):
    screen, shown = piped_screen()
    keyboard = Keyboard((100.0, EOFError), (100.5, "never read"))
    assert prompt_at(monkeypatch, keyboard, screen).read() is None
    assert shown.getvalue() == "\n"


# -- at a terminal: prompt_toolkit, fed keys through a pipe of its own --
@pytest.fixture
def keys():
    """The keys the user types, and what prompt_toolkit draws (with escape sequences)."""
    drawn = io.StringIO()
    output = Vt100_Output(drawn, lambda: Size(rows=24, columns=80), term="xterm")
    with create_pipe_input() as typed, create_app_session(input=typed, output=output):
        typed.drawn = drawn
        yield typed


def at_a_terminal(monkeypatch) -> None:
    """stdin and stdout are a terminal (set in the test: pytest sets sys.stdout after fixtures)"""
    monkeypatch.setattr(sys, "stdin", TerminalStream())
    monkeypatch.setattr(sys, "stdout", TerminalStream())


def test_enter_sends_the_line_and_ctrl_j_does_too(keys):
    session = make_session("off")
    keys.send_text("fix the tests\r")
    assert session.prompt("you> ") == "fix the tests"
    keys.send_text("and the docs\n")
    assert session.prompt("you> ") == "and the docs"


def test_lines_that_arrive_in_one_read_are_one_pasted_message(keys):
    session = make_session("off")
    keys.send_text("first line\rsecond line ends in \\\rthird\r")
    assert session.prompt("you> ") == "first line\nsecond line ends in \\\nthird"


def test_a_trailing_backslash_continues_on_the_next_line_without_the_backslash(keys):
    session = make_session("off")

    def type_the_next_line(buffer) -> None:
        if buffer.text == "two\n":  # Enter was read on its own, after the backslash
            keys.send_text("three\r")

    session.default_buffer.on_text_changed += type_the_next_line
    keys.send_text("two\\\r")
    assert session.prompt("you> ") == "two\nthree"


def test_enter_in_a_ctrl_r_search_takes_the_match_and_the_next_enter_sends_it(keys, tmp_path):
    history = str(tmp_path / "history")
    for earlier in ["make it faster\r", "add a test\r"]:
        keys.send_text(earlier)
        make_session(history).prompt("you> ")
    keys.send_text("\x12fast\r\r")  # Ctrl-R, a word of the earlier message, Enter, Enter
    keys.close()  # with nothing sent, the prompt would wait for more keys: here, it raises
    assert make_session(history).prompt("you> ") == "make it faster"


def test_the_prompt_is_cyan_and_a_message_goes_on_after_dots(keys, monkeypatch):
    at_a_terminal(monkeypatch)
    prompt = Prompt(piped_screen()[0], threading.Event())
    prompt.history = "off"
    keys.send_text("  one\rtwo  \r")
    assert prompt.read() == "one\ntwo"
    drawn = keys.drawn.getvalue()
    assert "\x1b[0;36myou> " in drawn
    assert "you>   one\r\n... two" in ESCAPES.sub("", drawn)


def test_ctrl_z_cannot_suspend_the_agent_at_the_prompt(keys):
    """Suspending would leave the terminal to the shell with the agent stopped in the middle;
    the key is not sent here, as it would stop the process running the tests."""
    bindings = make_session("off").app.key_bindings.get_bindings_for_keys((Keys.ControlZ,))
    assert bindings and not any(binding.filter() for binding in bindings)


def test_a_terminal_on_one_side_only_is_read_as_a_pipe(monkeypatch, keys):
    """`agent < tasks.txt` at a terminal, or `agent | tee log`: the lines come from stdin."""
    keys.send_text("from the keys\r")
    screen, _ = piped_screen()
    for stdin, stdout in [(io.StringIO, TerminalStream), (TerminalStream, io.StringIO)]:
        monkeypatch.setattr(sys, "stdin", stdin("from the pipe\n"))
        monkeypatch.setattr(sys, "stdout", stdout())
        assert Prompt(screen, threading.Event()).read() == "from the pipe"


# -- the history file --
def test_a_message_is_kept_in_the_history_file_and_recalled_in_the_next_session(
    keys, tmp_path, monkeypatch
):
    monkeypatch.setenv("HOME", str(tmp_path))
    keys.send_text("make it faster\r")
    assert make_session("~/history").prompt("you> ") == "make it faster"
    assert "\n+make it faster\n" in (tmp_path / "history").read_text()
    keys.send_text(UP + "\r")
    assert make_session(str(tmp_path / "history")).prompt("you> ") == "make it faster"


def test_the_history_is_kept_in_agent_history_or_in_the_home_folder(
    keys, tmp_path, monkeypatch
):
    at_a_terminal(monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("AGENT_HISTORY", str(tmp_path / "chosen"))
    keys.send_text("where I said\r")
    assert Prompt(piped_screen()[0], threading.Event()).read() == "where I said"
    monkeypatch.delenv("AGENT_HISTORY")
    keys.send_text("by default\r")
    assert Prompt(piped_screen()[0], threading.Event()).read() == "by default"
    assert "+where I said" in (tmp_path / "chosen").read_text()
    assert "+by default" in (tmp_path / "home" / ".agent_history").read_text()
    assert "where I said" not in (tmp_path / "home" / ".agent_history").read_text()


def test_agent_history_off_keeps_no_file_and_recalls_nothing_later(keys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    keys.send_text("a secret\r")
    assert make_session("off").prompt("you> ") == "a secret"
    keys.send_text(UP + "\r")
    assert make_session("off").prompt("you> ") == ""
    assert list(tmp_path.iterdir()) == []


def test_a_history_path_that_is_a_folder_reads_the_message_without_an_error(keys, tmp_path):
    """AGENT_HISTORY naming a folder must not break the prompt: prompt_toolkit would show its
    failed reads and writes of the file as tracebacks, each followed by "Press ENTER"."""
    keys.send_text("still works\r")
    assert make_session(str(tmp_path)).prompt("you> ") == "still works"
    assert list(tmp_path.iterdir()) == []
    assert "Press ENTER to continue" not in keys.drawn.getvalue()  # after a traceback


def test_a_history_path_that_cannot_be_made_reads_the_message_without_an_error(keys, tmp_path):
    """A read-only home must not break the prompt: here, a folder that is not there."""
    keys.send_text("still works\r")
    assert make_session(str(tmp_path / "missing" / "history")).prompt("you> ") == "still works"
    assert list(tmp_path.iterdir()) == []
    assert "Press ENTER to continue" not in keys.drawn.getvalue()  # after a traceback

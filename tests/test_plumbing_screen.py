"""plumbing/screen.py and plumbing/status.py: what reaches the user's terminal.

Tested once, against the modules, with rich writing into a buffer that says it is a terminal (or
a pipe). The scripts' own screens are seen through a real pseudo-terminal in test_terminal.py.
"""

import inspect
import io
import threading

import pytest
from rich.console import Console

from plumbing.screen import LoopScreen, Screen, fit, plain
from plumbing.status import LockedScreen, Status, StatusBoard

def terminal_screen(width: int = 80, **options) -> tuple[Screen, io.StringIO]:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=width, highlight=False, **options)
    return Screen(console), buffer


def piped_screen() -> tuple[Screen, io.StringIO]:
    buffer = io.StringIO()
    return Screen(Console(file=buffer, force_terminal=False, width=80)), buffer


def rendered(screen: Screen) -> str:
    """The live region as rich would draw it now, as plain text."""
    capture = Console(file=io.StringIO(), width=screen.console.width, force_terminal=False)
    with capture.capture() as seen:
        capture.print(screen.live_view())
    return seen.get()


# -- control sequences: nothing from the model, a file or a command drives the terminal --
@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]0;window title\x07after", "?after"),  # OSC: set the window title
        ("\x1b]52;c;ZXZpbA==\x1b\\after", "?after"),  # OSC 52: write the clipboard
        ("\x1b[2J\x1b[Hafter", "??after"),  # CSI: clear the screen, move the cursor
        ("\x9b2Jafter", "?after"),  # the same as an 8-bit C1 control
        ("\x9d0;title\x9cafter", "?after"),  # an 8-bit OSC, ended by an 8-bit ST
        ("bell\x07 back\x08space", "bell? back?space"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
        ("日本語のテキスト", "日本語のテキスト"),
    ],
)
def test_plain_takes_out_every_control_sequence_and_keeps_text(raw, shown):
    assert plain(raw) == shown


@pytest.mark.parametrize(
    "event",
    [
        lambda screen: screen.text("\x1b]52;c;ZXZpbA==\x07streamed"),
        lambda screen: screen.tool_call("bash", {"command": "\x1b]0;t\x07"}),
        lambda screen: screen.tool_result("\x9b2J\x1b]0;t\x07out", False),
        lambda screen: screen.block("  [>] \x1b[2Jtodo"),
        lambda screen: screen.note("\x1b]0;title\x07note"),
    ],
)
@pytest.mark.parametrize("make", [terminal_screen, piped_screen])
def test_no_event_passes_a_control_sequence_to_the_terminal(make, event):
    screen, buffer = make()
    event(screen)
    screen.print_stable_reply_lines(final=True)
    screen.stop_live()
    out = buffer.getvalue()
    assert "\x1b]" not in out and "\x9b" not in out and "\x9d" not in out and "\x07" not in out
    assert "\x1b[2J" not in out


# a clipboard write (OSC 52), a window title ended by ST, the 8-bit CSI and OSC, a DCS string, a
# colour, and NEL: each shows as one "?"
HOSTILE = ("a\x1b]52;c;cHduZWQ=\x07b\x1b]0;title\x1b\\c\x9b2Jd\x9d0;title\x9ce\x90dcs\x9cf"
           "\x1b[31mg\x85h")
SHOWN = "a?b?c?d?e?f?g?h"


def test_plain_shows_one_mark_for_each_sequence_of_any_kind():
    assert plain(HOSTILE) == SHOWN
    assert plain("cut off \x1b]52;c;cHduZWQ=") == "cut off ?"  # a sequence with no end


def test_an_alert_on_stderr_has_no_control_sequence(capsys):
    piped_screen()[0].alert(HOSTILE)
    assert capsys.readouterr().err == f"\n[{SHOWN}]\n"


def test_a_status_line_has_no_control_sequence_of_its_description():
    line = Status("explore", HOSTILE).line()
    assert line.startswith("[explore] a?b?c?d?e?f?g h … 0 tools, ")  # NEL is a space there


@pytest.mark.parametrize("shower", [Screen, Status, LockedScreen])
def test_the_main_screen_a_subagents_status_and_the_shared_screen_each_show_every_loop_event(
    shower
):
    """What the loop calls (LoopScreen) each of them has, with the same parameters."""
    events = [name for name in vars(LoopScreen) if not name.startswith("_")]
    assert len(events) == 7
    for event in events:
        expected = inspect.signature(getattr(LoopScreen, event))
        assert inspect.signature(getattr(shower, event)) == expected, event


# -- a Windows pipe: cp1252 (the West) or cp932 (Japan), where ┊, emoji and more are missing --
WINDOWS_PIPE_SHOWS = {  # what each code page can show of "┊ 日本語 café 🙂"
    "cp1252": "? ??? café ?",
    "cp932": "? 日本語 caf? ?",
}


@pytest.mark.parametrize("encoding", WINDOWS_PIPE_SHOWS)
def test_a_pipe_in_a_windows_code_page_shows_what_it_can_and_never_raises(encoding, monkeypatch):
    """Python writes to a Windows pipe in the ANSI code page, strictly: a character it lacks
    would raise UnicodeEncodeError and end the agent."""
    def windows_pipe() -> tuple[io.TextIOWrapper, io.BytesIO]:
        raw = io.BytesIO()
        return io.TextIOWrapper(raw, encoding=encoding, errors="strict"), raw

    stdout, out = windows_pipe()
    stderr, err = windows_pipe()
    monkeypatch.setattr("sys.stderr", stderr)  # where alerts go in a pipe
    screen = Screen(Console(file=stdout, force_terminal=False, width=80))
    sample = "┊ 日本語 café 🙂"
    screen.thinking(f"{sample}\n")
    screen.text(f"{sample}\n")
    screen.tool_call("bash", {"command": sample})
    screen.tool_result(sample, False)
    screen.note(sample)
    screen.alert(sample)
    shows = WINDOWS_PIPE_SHOWS[encoding]
    assert out.getvalue().decode(encoding).splitlines() == [
        f"  ? {shows}", shows, f"> bash {{\"command\": \"{shows}\"}}", f"  {shows}", f"[{shows}]"]
    assert err.getvalue().decode(encoding) == f"\n[{shows}]\n"


def test_fit_counts_wide_characters_as_two_columns():
    assert fit("日本語", 4) == "日本"
    assert fit("abc", 2) == "ab"
    assert fit("e\u0301t\u00e9", 2) == "e\u0301t"  # a combining accent takes no column


# -- the reply: markdown on a terminal, plain text in a pipe --
def test_a_reply_is_rendered_as_markdown_on_a_terminal_and_stays_plain_in_a_pipe():
    reply = "Some **bold** words.\n\n```python\nprint('x')\n```\n"
    screen, buffer = terminal_screen(no_color=True)
    for piece in (reply[:9], reply[9:20], reply[20:]):
        screen.text(piece)
    screen.print_stable_reply_lines(final=True)
    shown = buffer.getvalue()
    assert "bold" in shown and "**" not in shown and "```" not in shown
    assert "print('x')" in shown
    piped, piped_buffer = piped_screen()
    piped.text(reply)
    assert piped_buffer.getvalue() == reply


def test_no_color_is_honoured_on_a_terminal(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    screen, buffer = terminal_screen()
    screen.tool_call("bash", {"command": "ls"})
    screen.stop_live()
    assert "\x1b[36m" not in buffer.getvalue()  # no cyan
    monkeypatch.delenv("NO_COLOR")
    coloured, coloured_buffer = terminal_screen(color_system="standard")
    coloured.tool_call("bash", {"command": "ls"})
    coloured.stop_live()
    assert "\x1b[36m" in coloured_buffer.getvalue()


def test_a_tool_line_is_cut_to_the_terminal_width_counting_wide_characters():
    screen, buffer = terminal_screen(width=40, no_color=True)
    screen.tool_call("bash", {"command": "echo " + "日本語" * 20})
    screen.stop_live()
    (line,) = [line for line in buffer.getvalue().splitlines() if line.startswith("> bash")]
    assert len(line) + line.count("日") + line.count("本") + line.count("語") <= 40


# -- the status board of v3's subagents --
def test_on_a_terminal_each_running_subagent_has_a_live_line_with_a_clock():
    screen, buffer = terminal_screen(no_color=True)
    board = StatusBoard(screen, threading.Event())
    status = board.start("explore", "look around")
    assert "[explore] look around … 0 tools, 0." in rendered(screen)
    status.tool_call("read_only_bash", {"command": "ls"})
    assert "[explore] look around … 1 tool, " in rendered(screen)
    board.finish(status, "done")
    assert "[explore]" not in rendered(screen)  # off the live region once finished
    board.print_finished()
    screen.stop_live()
    assert "[explore] look around done (1 tool, " in buffer.getvalue()
    assert "started" not in buffer.getvalue()  # a terminal shows the live line instead


def test_in_a_pipe_a_subagent_prints_a_line_when_it_starts_and_when_it_ends():
    screen, buffer = piped_screen()
    board = StatusBoard(screen, threading.Event())
    status = board.start("plan", "\x1b]0;t\x07make a plan")
    board.finish(status, "done")
    board.print_finished()
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "[plan] ?make a plan … started"
    assert lines[1].startswith("[plan] ?make a plan done (0 tools, ")


def test_stop_all_sets_the_stop_event_and_marks_each_running_line_interrupted():
    screen, buffer = piped_screen()
    stopped = threading.Event()
    board = StatusBoard(screen, stopped)
    status = board.start("code", "change it")
    board.stop_all()
    assert stopped.is_set() and status.cancelled
    assert "[code] change it interrupted (0 tools, " in buffer.getvalue()
    with pytest.raises(KeyboardInterrupt):
        status.tool_call("bash", {})  # the subagent stops at its next step

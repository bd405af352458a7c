"""plumbing/screen.py, what its mutation run found unchecked: a result's one line (its count of
more lines, a failed command, the room on a terminal), the widths, the tools that show their own
view, the reply's end and usage line, the lines a streaming reply keeps in the live window, and
the spinner's words."""

import io
import re
import sys
import time

import anthropic
import pytest
from rich.console import Console

from plumbing.screen import (
    LIVE_LINES,
    PIPED_WIDTH,
    REFRESHES_PER_SECOND,
    SPINNER_DELAY,
    THINKING_MARK,
    ReportedUsage,
    Screen,
    result_line,
    showable,
    usage_line,
)
from tests.test_plumbing_screen import piped_screen, rendered, terminal_screen

# -- a result's one line --
@pytest.mark.parametrize(("output", "is_error", "line", "style"), [
    ("one\ntwo\nthree", False, "  one  (+2 lines)", "dim"),
    ("only", False, "  only", "dim"),
    (" \n\n", False, "  (no output)", "dim"),
    ("oops\n[exit code 3]", False, "  oops  (+1 lines, failed: exit code 3)", "red"),
    ("[exit code 10]\n", False, "  [exit code 10]  (failed: exit code 10)", "red"),
    ("killed\n[exit code -9]", False, "  killed  (+1 lines, failed: exit code -9)", "red"),
    ("fine\n[exit code 0]", False, "  fine  (+1 lines)", "dim"),
    ("[exit code 3] was the last one\nfine", False, "  [exit code 3] was the last one  (+1 "
                                                    "lines)", "dim"),
    ("no such file", True, "  no such file", "red"),
    ("\x1b]0;title\x07x", False, "  ?x", "dim"),
])
def test_a_result_is_one_line_with_how_many_more_and_a_failed_command_in_red(
    output, is_error, line, style
):
    assert result_line(output, is_error, PIPED_WIDTH, False) == (line, style)


def test_on_a_terminal_the_notes_fit_on_the_line_and_in_a_pipe_the_text_takes_the_width():
    output = "a" * 50 + "\nb"
    assert result_line(output, False, 20, True) == ("  " + "a" * 8 + "  (+1 lines)", "dim")
    assert result_line(output, False, 20, False) == ("  " + "a" * 20 + "  (+1 lines)", "dim")


# -- how wide a line may be --
def test_a_tool_line_takes_the_piped_width_in_a_pipe():
    screen, shown = piped_screen()
    screen.tool_call("bash", {"command": "x" * 300})
    (line,) = shown.getvalue().splitlines()
    assert len(line) == len("> ") + PIPED_WIDTH


@pytest.mark.parametrize(("columns", "room"), [(80, 77), (23, 20), (10, 20)])
def test_a_terminal_line_leaves_three_columns_and_takes_at_least_twenty(columns, room):
    screen, _ = terminal_screen(width=columns, no_color=True)
    assert screen.width() == room


# -- tools that show their own view (v2's todo list) --
def test_a_quiet_tools_call_and_result_are_not_shown_but_its_error_is():
    screen, shown = piped_screen()
    screen.tool_call("todo", {"items": []})
    assert screen.waiting_for == "running todo"
    screen.tool_result("the list as shown", False)
    assert shown.getvalue() == ""
    screen.tool_call("todo", {"items": []})
    screen.tool_result("items: at most one in progress", True)
    assert shown.getvalue() == "  items: at most one in progress\n"
    screen.tool_call("bash", {"command": "ls"})
    screen.tool_result("a.txt", False)
    assert shown.getvalue().endswith('> bash {"command": "ls"}\n  a.txt\n')
    assert screen.waiting_for == "waiting for the model"


# -- the end of a reply, in a pipe --
def message(*content, **usage) -> anthropic.types.Message:
    return anthropic.types.Message(
        id="msg_1", type="message", role="assistant", model="claude-x", content=list(content),
        stop_reason="end_turn", stop_sequence=None, usage=anthropic.types.Usage(**usage))


def test_a_reply_with_text_ends_its_line_and_then_shows_its_usage():
    screen, shown = piped_screen()
    screen.text("Done.")
    screen.reply_done(message(anthropic.types.TextBlock(type="text", text="Done."),
                              input_tokens=5, output_tokens=2, cache_creation_input_tokens=0,
                              cache_read_input_tokens=7))
    assert shown.getvalue() == "Done.\n  [tokens: in 5, out 2, cache write 0, cache read 7]\n"


def test_a_reply_of_a_tool_call_only_adds_no_empty_line():
    screen, shown = piped_screen()
    call = anthropic.types.ToolUseBlock(type="tool_use", id="toolu_1", name="bash", input={})
    screen.reply_done(message(call, input_tokens=5, output_tokens=2))
    assert shown.getvalue() == (
        "  [tokens: in 5, out 2; no cache figures: the endpoint sent none]\n")


def test_an_alert_after_half_a_line_of_reply_ends_that_line_first(capsys):
    screen, shown = piped_screen()
    screen.text("I will now")
    screen.alert("interrupted")
    screen.line("next", "")
    assert shown.getvalue() == "I will now\nnext\n"
    assert capsys.readouterr().err == "\n[interrupted]\n"
    screen.text("whole line\n")
    screen.alert("again")
    assert shown.getvalue() == "I will now\nnext\nwhole line\n"


# -- a streaming reply on a terminal: the last LIVE_LINES lines may still change --
def test_a_streaming_reply_prints_all_but_its_last_lines_and_the_rest_when_done():
    screen, shown = terminal_screen(no_color=True)
    items = [f"- item {number}" for number in range(1, LIVE_LINES + 5)]
    screen.text("\n".join(items) + "\n")
    printed = shown.getvalue()
    assert "item 4" in printed and "item 5" not in printed
    assert "item 5" in rendered(screen) and f"item {LIVE_LINES + 4}" in rendered(screen)
    screen.reply_done(message(anthropic.types.TextBlock(type="text", text="x"),
                              input_tokens=1, output_tokens=1))
    screen.stop_live()
    assert f"item {LIVE_LINES + 4}" in shown.getvalue()
    assert shown.getvalue().count("item 4") == 1  # a line is printed once
    assert screen.reply == "" and screen.reply_lines == []


# -- the spinner: after SPINNER_DELAY of silence, what the agent waits for and for how long --
def test_the_spinner_names_the_wait_and_its_seconds_only_after_a_silence():
    screen, _ = terminal_screen(no_color=True)
    screen.wait("waiting for the model")
    try:
        screen.since = time.monotonic() - 3.4
        screen.last_output = time.monotonic()
        assert "waiting for the model" not in rendered(screen)  # something was just shown
        screen.last_output = time.monotonic() - SPINNER_DELAY - 0.2
        assert "waiting for the model … 3 s" in rendered(screen)
        screen.reply = "half a reply"
        assert "waiting for the model" not in rendered(screen)  # the reply is the news
    finally:
        screen.stop_live()
    assert screen.live is None


# -- on a terminal, in colour: what rich draws --
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def colour_screen(width: int) -> tuple[Screen, io.StringIO]:
    shown = io.StringIO()
    console = Console(file=shown, force_terminal=True, width=width, color_system="standard",
                      highlight=False)
    return Screen(console), shown


def test_a_reply_is_wrapped_at_the_terminals_width_with_bold_kept_and_a_link_as_text():
    screen, shown = colour_screen(40)
    screen.text("Some **bold** words, a [link](https://example.com/x), and a long sentence that "
                "wraps at forty columns.")
    screen.print_stable_reply_lines(final=True)
    assert "\x1b[1mbold\x1b[0m" in shown.getvalue()
    assert "https://example.com/x" in shown.getvalue() and "\x1b]8" not in shown.getvalue()
    lines = ANSI.sub("", shown.getvalue()).splitlines()
    assert len(lines) > 2 and max(len(line) for line in lines) <= 40


def test_a_second_streamed_reply_is_printed_from_its_first_line():
    screen, shown = terminal_screen(no_color=True)
    second = "The second reply:\n\n" + "\n".join(f"- second {n}" for n in range(1, 11))
    for reply in ("- first 1\n- first 2\n", second):
        screen.text(reply)
        screen.print_stable_reply_lines(final=True)
    lines = [ANSI.sub("", line).strip() for line in shown.getvalue().splitlines()]
    assert lines.count("The second reply:") == 1 and lines.count("• second 1") == 1
    assert lines[-1] == "• second 10"
    assert lines.count("• first 1") == 1


def test_on_a_terminal_an_error_result_is_red_and_its_notes_fit_a_narrow_line():
    screen, shown = colour_screen(30)
    screen.tool_result("no such file", True)
    screen.tool_result("a" * 60 + "\nb", False)
    screen.stop_live()
    assert "\x1b[31m  no such file\x1b[0m" in shown.getvalue()
    assert "  " + "a" * 15 + "  (+1 lines)" in shown.getvalue()


def test_a_thought_on_a_terminal_counts_as_output_for_the_spinner():
    screen, _ = terminal_screen(no_color=True)
    screen.wait("waiting for the model")
    try:
        screen.since = screen.last_output = time.monotonic() - 5
        screen.thinking("a note\n")
        assert "waiting for the model" not in rendered(screen)
    finally:
        screen.stop_live()


def test_the_spinner_is_drawn_dimmed_on_the_screens_terminal_cut_and_erased_when_done(capsys):
    screen, shown = colour_screen(30)
    screen.wait("running a_very_long_tool_name_here")
    try:
        assert screen.live is not None
        print("from print()")  # rich may not take these over: the agent's own output
        print("to stderr", file=sys.stderr)
        screen.last_output = time.monotonic() - SPINNER_DELAY - 1
        screen.live.refresh()
    finally:
        screen.stop_live()
    drawn = shown.getvalue()
    assert "\x1b[2m-\x1b[0m \x1b[2mrunning a_very_long_tool_\x1b[0m" in drawn  # 30 - 3 - 2
    assert drawn.endswith("\r\x1b[1A\x1b[2K")  # transient: the region is erased
    assert "from print()" not in drawn and "to stderr" not in drawn
    said = capsys.readouterr()
    assert said.out == "from print()\n" and said.err == "to stderr\n"


# -- what the second run left: an alert, a note and the prompt's text on a terminal --
def test_an_alert_on_a_terminal_is_bold_red_and_counts_as_output_for_the_spinner():
    screen, shown = colour_screen(40)
    screen.wait("waiting for the model")
    try:
        screen.since = screen.last_output = time.monotonic() - 5
        before = time.monotonic()
        screen.alert("error: the API answered 529")
        assert "\n\x1b[1;31m[error: the API answered 529]\x1b[0m\n" in shown.getvalue()
        assert screen.last_output >= before  # the spinner's silence starts again
    finally:
        screen.stop_live()


def test_a_note_on_a_terminal_is_dimmed():
    screen, shown = colour_screen(40)
    screen.note("tokens: in 5, out 2", indent="  ")
    assert shown.getvalue() == "\x1b[2m  [tokens: in 5, out 2]\x1b[0m\n"


def test_the_prompts_text_on_a_terminal_is_written_as_it_is_and_counts_as_output():
    screen, shown = colour_screen(40)
    screen.write("\n")
    screen.write("you> ")
    assert shown.getvalue() == "\nyou> "
    before = time.monotonic()
    screen.write("x")
    assert screen.last_output >= before  # the spinner's silence starts again


# -- the live region: up while the agent waits on a terminal, down at the prompt, never in a pipe
def test_the_live_region_is_up_while_waiting_down_at_the_prompt_and_never_in_a_pipe():
    screen, _ = terminal_screen(no_color=True)
    screen.wait("waiting for the model")
    try:
        assert screen.live is not None
    finally:
        screen.wait("")
    assert screen.live is None
    screen, _ = piped_screen()
    screen.wait("waiting for the model")
    assert screen.live is None and screen.waiting_for == "waiting for the model"


# -- an alert ends what the reply had shown, once --
def test_an_alert_mid_reply_on_a_terminal_prints_the_whole_reply_first():
    screen, shown = terminal_screen(no_color=True)
    screen.text("- first\n- second\n")  # fewer lines than LIVE_LINES: none printed yet
    screen.alert("interrupted")
    lines = [ANSI.sub("", line).rstrip() for line in shown.getvalue().splitlines()]
    assert lines[-4:] == [" • first", " • second", "", "[interrupted]"]
    assert screen.reply == ""


def test_alerts_after_half_a_line_of_reply_end_that_line_once(capsys):
    screen, shown = piped_screen()
    screen.alert("before any reply")  # nothing to end: no empty line in the reply's stream
    assert shown.getvalue() == ""
    screen.text("I will now")
    screen.alert("interrupted")
    screen.alert("error: again")
    assert shown.getvalue() == "I will now\n"
    assert capsys.readouterr().err == "\n[before any reply]\n\n[interrupted]\n\n[error: again]\n"


# -- a reply renders at the terminal's width, and the next reply streams as the first did --
def test_a_reply_is_rendered_at_the_terminals_width():
    screen, shown = terminal_screen(width=30, no_color=True)
    screen.text("- one two three four five six seven eight nine ten eleven")
    screen.print_stable_reply_lines(final=True)
    assert [ANSI.sub("", line).rstrip() for line in shown.getvalue().splitlines()] == [
        "", " • one two three four five six", "   seven eight nine ten eleven"]  # indented


def test_the_next_reply_prints_its_stable_lines_once_a_tenth_of_a_second_has_passed():
    screen, shown = terminal_screen(no_color=True)
    screen.text("The first reply.")
    screen.print_stable_reply_lines(final=True)
    screen.reply_rendered_at = time.monotonic() - 0.15  # the last render, 0.15 s ago
    screen.text("\n".join(f"- item {n}" for n in range(1, LIVE_LINES + 3)) + "\n")
    printed = [ANSI.sub("", line).strip() for line in shown.getvalue().splitlines()]
    assert printed[-2:] == ["• item 1", "• item 2"]  # all but the last LIVE_LINES
    screen.stop_live()


# -- usage: an input of 0 is a count, and a plain SDK usage has no estimate to compare --
def test_an_input_counted_as_zero_is_shown_as_zero_against_what_was_sent():
    usage = ReportedUsage(input_tokens=0, output_tokens=3, cache_creation_input_tokens=0,
                          cache_read_input_tokens=0, sent_estimate=1_200)
    assert usage_line(usage) == (
        "tokens: in 0, out 3, cache write 0, cache read 0; the endpoint counted 0 input tokens of "
        "about 1,200 sent: a partial count, or part of the request never reached the model")


def test_a_usage_without_an_estimate_of_what_was_sent_makes_no_claim_about_it():
    usage = anthropic.types.Usage(input_tokens=0, output_tokens=3)
    assert usage_line(usage) == "tokens: in 0, out 3; no cache figures: the endpoint sent none"


def test_a_stream_without_an_encoding_takes_any_character():
    assert showable(f"{THINKING_MARK}日本語", object()) == f"{THINKING_MARK}日本語"


def test_the_default_screen_wraps_a_long_thought_at_the_terminals_width(monkeypatch, capsys):
    """Screen() makes its own console (the scripts' one): on a terminal, rich wraps thinking
    at the width rather than leaving it to the terminal."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich: the output is a terminal
    monkeypatch.setenv("COLUMNS", "30")
    monkeypatch.setenv("NO_COLOR", "1")
    screen = Screen()
    screen.thinking("one two three four five six seven eight nine ten eleven twelve\n")
    assert [ANSI.sub("", line) for line in capsys.readouterr().out.splitlines()] == [
        f"{THINKING_MARK}one two three four five ", "six seven eight nine ten ", "eleven twelve"]


def test_a_note_wider_than_the_terminal_wraps_whole_so_its_last_words_are_seen():
    """What to do often ends a note (the setting to change): it is never cut at the edge."""
    screen, shown = terminal_screen(width=30, no_color=True)
    screen.note("the endpoint refused cache_control: set CACHE=off")
    assert [ANSI.sub("", line).rstrip() for line in shown.getvalue().splitlines()] == [
        "[the endpoint refused", "cache_control: set CACHE=off]"]


def test_a_reply_streamed_in_many_pieces_is_rendered_ten_times_a_second_not_once_a_piece(
    monkeypatch
):
    """Rendering the markdown so far costs more as the reply grows: done once a piece, a long
    reply would take time quadratic in its length."""
    screen, _ = terminal_screen(no_color=True)
    renders = []
    render = screen.rendered_reply
    monkeypatch.setattr(screen, "rendered_reply", lambda reply: renders.append(1) or render(reply))
    started = time.monotonic()
    for number in range(200):
        screen.text(f"word{number} ")
    assert len(renders) <= (time.monotonic() - started) * REFRESHES_PER_SECOND + 1

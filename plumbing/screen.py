"""What the user sees: the reply as it streams, tool calls and results, progress.

On a terminal the screen is drawn with rich: the reply's markdown is rendered while it streams
(lines that can no longer change are printed, the last few stay in a live window below them),
and a live region at the bottom holds the spinner and v3's subagent status lines. In a pipe (a
log, the tests, the docs' transcripts) everything is plain text, one event per line.

Text from the model, from files and from commands can hold escape sequences: a window title, a
clipboard write (OSC 52), a cursor move. rich passes ESC and 8-bit controls through, so every
string passes `plain()` before it reaches the terminal.
"""

import io
import json
import re
import sys
import threading
import time
from typing import Protocol

import anthropic
from rich.cells import get_character_cell_size
from rich.console import Console, Group
from rich.live import Live
from rich.markdown import Markdown
from rich.spinner import Spinner
from rich.text import Text

PIPED_WIDTH = 100  # characters of a tool line when the output is not a terminal (logs, the docs)
SPINNER_DELAY = 0.5  # seconds of silence before the spinner says what the agent waits for
LIVE_LINES = 6  # lines of a streaming reply that may still change, kept in the live window
REFRESHES_PER_SECOND = 10
FAILED_COMMAND = re.compile(r"\[exit code (-?[1-9]\d*)\]\Z")  # run_bash's last line, not 0
# A whole escape sequence (CSI, OSC, DCS/APC/PM/SOS strings, a two-character ESC x), 7-bit or
# 8-bit; then any other control character on its own. Newline and tab are kept.
CONTROL_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: cursor moves, colours, ...
    r"|(?:\x1b[\]P^_X]|[\x9d\x90\x9e\x9f\x98])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # strings
    r"|\x1b[ -~]?"  # ESC and one more character
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 (but \t and \n), DEL, C1
CONTROL_MARK = "?"  # shown where a control sequence was taken out
THINKING_MARK = "  ┊ "  # begins each line of the model's thinking, which is shown dimmed


def plain(text: str) -> str:
    """`text` with every control sequence replaced by one visible mark: nothing from the model,
    a file or a command can move the cursor, set the title or write the clipboard."""
    return CONTROL_SEQUENCE.sub(CONTROL_MARK, text)


def showable(text: str, stream) -> str:
    """`text` with each character that the stream's encoding lacks replaced by "?": a Windows pipe
    in cp1252 or cp932 has no ┊ and no emoji, and writing one would raise. (A Windows console
    takes any character: Python writes to it in UTF-16.)"""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    return text.encode(encoding, errors="replace").decode(encoding)


def fit(text: str, columns: int) -> str:
    """The longest start of `text` that takes at most `columns` terminal columns: East Asian
    wide characters take two, combining marks none (rich's tables of character widths)."""
    used = 0
    for index, char in enumerate(text):
        used += get_character_cell_size(char)
        if used > columns:
            return text[:index]
    return text


def result_line(output: str, is_error: bool, width: int, tty: bool) -> tuple[str, str]:
    """A result's first line, and how many more there are; a failed command shows as failed.
    Returns the line and its style."""
    lines = output.strip().splitlines() or ["(no output)"]
    notes = []
    if len(lines) > 1:
        notes.append(f"+{len(lines) - 1} lines")
    failed = FAILED_COMMAND.search(output.rstrip())
    if failed:
        notes.append(f"failed: exit code {failed[1]}")
    more = ""
    if notes:
        more = f"  ({', '.join(notes)})"
    room = width
    if tty:  # the notes go on the same line: keep it from wrapping
        room -= len(more)
    first = fit(plain(lines[0]), room)
    style = "dim"
    if is_error or failed:
        style = "red"
    return f"  {first}{more}", style


class ReportedUsage(anthropic.types.Usage):
    """A reply's usage as the endpoint reported it, with what the request held (made by
    plumbing/model.py). A figure the endpoint did not send is None, never 0."""

    sent_estimate: int = 0  # about how many tokens the request held
    cache_asked: bool = True  # the request asked for prompt caching (cache_control)


# A reported input this many times smaller than what was sent is not a full count: a tokenizer
# counts about four characters a token of English and JSON, and more tokens for other text.
FAR_BELOW = 2


def usage_line(usage: anthropic.types.Usage) -> str:
    """The tokens of one model call, as the endpoint reported them; "in" is what neither the
    cache read nor the cache wrote. A figure the endpoint did not send shows as "not reported",
    never as 0: Ollama and llama.cpp send no cache figures, and a 0 there would claim a cache
    miss. Where the request asked for no cache (the endpoint refused cache_control), or the
    reported input is far below what was sent (a gateway's partial count, or a server that left
    part of the request out of the prompt), the line says so after a semicolon."""
    figures = [f"in {reported(usage.input_tokens)}", f"out {reported(usage.output_tokens)}"]
    notes = []
    written, read = usage.cache_creation_input_tokens, usage.cache_read_input_tokens
    if not getattr(usage, "cache_asked", True):
        notes.append("no cache: the endpoint refused cache_control")
    elif written is None and read is None:
        notes.append("no cache figures: the endpoint sent none")
    else:
        figures += [f"cache write {reported(written)}", f"cache read {reported(read)}"]
    counted, sent = input_counted(usage), getattr(usage, "sent_estimate", 0)
    if usage.input_tokens is not None and counted_far_below(usage):
        notes.append(f"the endpoint counted {counted:,} input tokens of about {sent:,} sent: a "
                     "partial count, or part of the request never reached the model")
    return "; ".join([f"tokens: {', '.join(figures)}", *notes])


def input_counted(usage: anthropic.types.Usage) -> int:
    """All the input the endpoint counted: the rest, the cache's reads and its writes. A figure
    it did not send (None) counts nothing."""
    return ((usage.input_tokens or 0) + (usage.cache_creation_input_tokens or 0)
            + (usage.cache_read_input_tokens or 0))


def counted_far_below(usage: anthropic.types.Usage) -> bool:
    """The endpoint counted far less input than the request held (or none at all)."""
    return input_counted(usage) * FAR_BELOW < getattr(usage, "sent_estimate", 0)


def reported(count: int | None) -> str:
    if count is None:
        return "not reported"
    return f"{count:,}"


class LoopScreen(Protocol):
    """What the agent loop shows, one method per event: the main agent's Screen meets it, and so
    do a subagent's Status (its status line) and the screen threads share (status.py)."""

    def thinking(self, text: str) -> None: ...
    def end_thinking(self) -> None: ...
    def text(self, text: str) -> None: ...
    def alert(self, text: str) -> None: ...
    def reply_done(self, response: anthropic.types.Message) -> None: ...
    def tool_call(self, name: str, tool_input: dict) -> None: ...
    def tool_result(self, output: str, is_error: bool) -> None: ...


class Screen:
    """The terminal of the main agent. Each method shows one kind of event of the loop. On a
    terminal, the spinner says what the agent is waiting for whenever nothing else is shown."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False, soft_wrap=False)
        self.lock = threading.RLock()  # subagents' threads print too
        self.quiet_tools = {"todo"}  # tools that show their own view (v2's todo list): no call line
        self.waiting_for = ""  # what the spinner names; "" at the prompt
        self.since = time.monotonic()  # when that wait began
        self.last_output = time.monotonic()
        self.reply = ""  # the markdown of the reply that is streaming now (terminal only)
        self.reply_lines: list[Text] = []  # the reply rendered, as of the last render
        self.reply_printed = 0  # its rendered lines already printed above the live window
        self.reply_rendered_at = 0.0
        self.status_lines = no_status_lines  # v3's status board puts its lines here
        self.live: Live | None = None
        self.thought = ""  # the model's thinking since its last whole line
        self.partial_line = False  # in a pipe: the reply's text so far ends mid-line

    # -- the events of the loop --
    def thinking(self, text: str) -> None:
        """A piece of the model's thinking as it streams (on Sonnet 5.5, its notes between tool
        calls too). Shown a whole line at a time, dimmed and marked, set apart from the reply."""
        with self.lock:
            self.thought += plain(text)
            lines = self.thought.split("\n")
            self.thought = lines.pop()  # the line still being written
            for line in lines:
                self.thought_line(line)

    def end_thinking(self) -> None:
        """Show the last line of the thinking, if it did not end with a line break."""
        with self.lock:
            if self.thought.strip():
                self.thought_line(self.thought)
            self.thought = ""

    def thought_line(self, line: str) -> None:
        with self.lock:
            if self.tty():  # wrapped, not cut: thinking comes in long paragraphs
                self.console.print(Text(THINKING_MARK + line, style="dim italic"))
            else:
                self.put(THINKING_MARK + line + "\n")
            self.last_output = time.monotonic()

    def text(self, text: str) -> None:
        """A piece of the reply as it streams."""
        text = plain(text)
        self.end_thinking()
        if not self.tty():
            self.write(text)
            return
        with self.lock:
            self.reply += text
            self.last_output = time.monotonic()
            if time.monotonic() - self.reply_rendered_at > 1 / REFRESHES_PER_SECOND:
                self.print_stable_reply_lines(final=False)

    def reply_done(self, response: anthropic.types.Message) -> None:
        self.end_thinking()
        if self.tty():
            with self.lock:
                self.print_stable_reply_lines(final=True)
        elif any(block.type == "text" for block in response.content):
            self.write("\n")
        self.note(usage_line(response.usage), indent="  ")

    def tool_call(self, name: str, tool_input: dict) -> None:
        self.end_thinking()
        if name not in self.quiet_tools:
            line = plain(f"{name} {json.dumps(tool_input, ensure_ascii=False)}")
            self.line(f"> {fit(line, self.width())}", "cyan")
        self.wait(f"running {name}")

    def tool_result(self, output: str, is_error: bool) -> None:
        if is_error or self.waiting_for.removeprefix("running ") not in self.quiet_tools:
            line, style = result_line(output, is_error, self.width(), self.tty())
            self.line(line, style)
        self.wait("waiting for the model")

    def block(self, text: str) -> None:
        """Lines a tool shows as they are, such as v2's todo list."""
        self.line(plain(text), "")

    def note(self, text: str, indent: str = "") -> None:
        self.line(f"{indent}[{plain(text)}]", "dim")

    def alert(self, text: str) -> None:
        """A line the user must not miss: an error, an interruption, a retry. What the reply
        had shown so far is finished first: a retried reply starts afresh below it."""
        with self.lock:
            self.end_thinking()
            self.end_partial_reply()
            if self.tty():
                self.console.print(Text(f"\n[{plain(text)}]", style="bold red"))
            else:
                self.console.file.flush()
                print(showable(f"\n[{plain(text)}]", sys.stderr), file=sys.stderr, flush=True)
            self.last_output = time.monotonic()

    def wait(self, what: str) -> None:
        """Say what the agent waits for now ("" at the prompt); the spinner shows it on a TTY.
        At the prompt the live region is taken down, so the line editor has the terminal."""
        with self.lock:
            self.waiting_for = what
            self.since = time.monotonic()
            if what and self.tty():
                self.start_live()
            elif not what:
                self.stop_live()

    def end_partial_reply(self) -> None:
        """Close a reply that stopped halfway: its lines printed, the line ended."""
        if self.tty() and self.reply:
            self.print_stable_reply_lines(final=True)
        elif self.partial_line:
            self.put("\n")
            self.partial_line = False

    # -- plain lines and raw text --
    def line(self, text: str, style: str) -> None:
        """One whole line; on a terminal, printed above the live region, in `style`. One wider
        than the terminal wraps (a note's last words may say what to do): the tool lines are
        fit() to the width before they come here."""
        with self.lock:
            if self.tty():
                self.console.print(Text(text, style=style))
            else:
                self.put(text + "\n")
                self.partial_line = False
            self.last_output = time.monotonic()

    def write(self, text: str) -> None:
        """Text as it is (already plain), without a line end of its own."""
        with self.lock:
            if self.tty():
                self.console.print(Text(text), end="")
            else:
                self.put(text)
                self.partial_line = not text.endswith("\n")
            self.last_output = time.monotonic()

    def put(self, text: str) -> None:
        """Text into the pipe (not a terminal), as far as its encoding can show it."""
        self.console.file.write(showable(text, self.console.file))
        self.console.file.flush()

    def tty(self) -> bool:
        """Whether the screen is a terminal (rich asks the stream it writes to, sys.stdout unless
        it was given another one, each time)."""
        return self.console.is_terminal

    def width(self) -> int:
        """Columns a line may take: the terminal's width, or PIPED_WIDTH characters in a pipe."""
        if not self.tty():
            return PIPED_WIDTH
        return max(20, self.console.width - 3)

    # -- the streaming reply (terminal only) --
    def print_stable_reply_lines(self, final: bool) -> None:
        """Render the reply's markdown so far; print the lines that can no longer change (all of
        them once the reply is complete); the last few show in the live window meanwhile."""
        lines = self.rendered_reply(self.reply)
        self.reply_lines = lines
        stable = len(lines)
        if not final:
            stable = max(len(lines) - LIVE_LINES, self.reply_printed)
        for line in lines[self.reply_printed:stable]:
            self.console.print(line)
        self.reply_printed = stable
        self.reply_rendered_at = time.monotonic()
        if final:
            self.reply = ""
            self.reply_lines = []
            self.reply_printed = 0

    def rendered_reply(self, reply: str) -> list[Text]:
        if not reply.strip():
            return []
        buffer = io.StringIO()
        renderer = Console(file=buffer, width=self.console.width, force_terminal=True,
                           color_system=self.console.color_system,
                           no_color=self.console.no_color, highlight=False)
        renderer.print(Markdown(reply, hyperlinks=False))
        return [Text.from_ansi(line) for line in buffer.getvalue().rstrip("\n").split("\n")]

    # -- the live region: the end of a streaming reply, the status lines, the spinner --
    def start_live(self) -> None:
        if self.live is None:
            self.live = Live(console=self.console, get_renderable=self.live_view,
                             refresh_per_second=REFRESHES_PER_SECOND, transient=True,
                             redirect_stdout=False, redirect_stderr=False)
            self.live.start()

    def stop_live(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def live_view(self) -> Group:
        """What the live region shows now. Called from rich's refresh thread, which holds rich's
        lock: taking ours here could deadlock with a thread that prints, so it reads a snapshot."""
        reply = self.reply
        parts = list(self.reply_lines[self.reply_printed:])  # rendered at most 0.1 s ago
        parts += self.status_lines()
        quiet = time.monotonic() - self.last_output > SPINNER_DELAY
        if self.waiting_for and quiet and not reply:
            seconds = time.monotonic() - self.since
            label = fit(f"{self.waiting_for} … {seconds:.0f} s", self.width() - 2)
            parts.append(Spinner("line", text=Text(label, style="dim"), style="dim"))
        return Group(*parts)


def no_status_lines() -> list:
    return []

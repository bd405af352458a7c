"""Reading the user's next message: line editing, history, pasted blocks, Ctrl-C.

At a terminal the line is read with prompt_toolkit, which edits the line itself (no readline or
libedit underneath, so backspace after Japanese input deletes one character on every Python
build), keeps a history file, takes a bracketed paste as one message, and runs on Windows
consoles. From a pipe, lines are read as they come.
"""

import os
import sys
import threading
import time
from pathlib import Path

from plumbing.screen import Screen

KEYS = """\
At the prompt: arrow keys edit the line and recall earlier ones, Ctrl-R searches them (kept
in ~/.agent_history; AGENT_HISTORY=off keeps none, AGENT_HISTORY=FILE keeps them there). Enter
sends; a line that ends in a backslash goes on to the next one, and a pasted block of lines is
one message. Ctrl-C stops the current turn and keeps the conversation; at the prompt it clears
the line. Ctrl-C twice, Ctrl-D, q or exit leaves. On a terminal the reply's markdown is
rendered as it streams, a spinner says what the agent waits for, and each retry is shown."""
SECOND_CTRL_C = 1.0  # seconds: a second Ctrl-C at the prompt within this leaves
LEAVE_WORDS = ("q", "quit", "exit")


class Prompt:
    """Where the user's messages come from. The line history is kept in AGENT_HISTORY (default
    ~/.agent_history; "off" keeps none)."""

    def __init__(self, screen: Screen, stopped: threading.Event) -> None:
        self.screen = screen
        self.stopped = stopped
        self.history = os.environ.get("AGENT_HISTORY", "~/.agent_history")
        self.session = None  # the prompt_toolkit session, made on first use at a terminal

    def read(self) -> str | None:
        """The user's next message, never empty; None when they leave (q, quit, exit, Ctrl-D, or
        Ctrl-C twice in a row). At the prompt, one Ctrl-C clears the line."""
        self.screen.wait("")
        last_ctrl_c = 0.0
        while True:
            try:
                text = self.read_message()
            except EOFError:
                self.screen.write("\n")
                return None
            except KeyboardInterrupt:
                if time.monotonic() - last_ctrl_c < SECOND_CTRL_C:
                    self.screen.write("\n")
                    return None
                last_ctrl_c = time.monotonic()
                self.screen.line("[line cleared; Ctrl-C again to leave]", "dim")
                continue
            if text in LEAVE_WORDS:
                return None
            if text:
                self.stopped.clear()  # commands may run again
                self.screen.wait("waiting for the model")
                return text

    def read_message(self) -> str:
        """One message: a line, and the lines after it while a line ends in a backslash. At a
        terminal a pasted block arrives whole (bracketed paste), newlines and all."""
        self.screen.write("\n")
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            return self.read_piped()
        if self.session is None:
            self.session = make_session(self.history)
        return self.session.prompt([("ansicyan", "you> ")]).strip()

    def read_piped(self) -> str:
        self.screen.write("you> ")
        lines = [read_line()]
        while lines[-1].endswith("\\"):
            lines[-1] = lines[-1][:-1]
            lines.append(read_line())
        # A pipe does not echo: the message is shown as a terminal shows what is typed, so a
        # replayed session (python -m scripted.demo --replay) reads like the one recorded.
        self.screen.write("\n... ".join(lines) + "\n")
        return "\n".join(lines).strip()


def read_line() -> str:
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\r\n")


def make_session(history: str):
    """A prompt_toolkit session: Enter sends, unless the line ends in a backslash, which goes on
    to the next line; the history is kept in a file unless it is "off"."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.enums import DEFAULT_BUFFER
    from prompt_toolkit.filters import has_focus
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.key_binding import KeyBindings

    keys = KeyBindings()
    typing = has_focus(DEFAULT_BUFFER)  # not in Ctrl-R's search, whose Enter takes the match

    @keys.add("enter", filter=typing)
    @keys.add("c-j", filter=typing)
    def send_or_continue(event) -> None:
        """Enter sends the message, unless the line ends in a backslash, or more keys came in
        the same read: then it is a line break inside a paste (a terminal without bracketed
        paste sends a pasted block as one burst of keys)."""
        buffer = event.current_buffer
        if event.key_processor.input_queue:
            buffer.insert_text("\n")
        elif buffer.text.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    saved = InMemoryHistory()
    if history != "off":
        path = Path(history).expanduser()
        if writable_file(path):
            saved = FileHistory(str(path))
    return PromptSession(history=saved, key_bindings=keys, multiline=True,
                         prompt_continuation="... ", enable_suspend=False)


def writable_file(path: Path) -> bool:
    """Whether the history can be kept at `path`: a read-only home must not break the prompt."""
    if path.exists():
        return path.is_file() and os.access(path, os.R_OK | os.W_OK)
    return os.access(path.parent, os.W_OK)

"""v3+: one status line per running subagent, in the live region at the bottom of the terminal.

On a terminal the lines stay below everything else and rich redraws them in place; elsewhere (a
pipe, a log, the tests) each subagent prints one line when it starts and one when it ends.
"""

import contextlib
import threading
import time
from concurrent.futures import wait

import anthropic
from rich.text import Text

from plumbing.screen import PIPED_WIDTH, LoopScreen, Screen, fit
from plumbing.todo import shorten

PROGRESS_TICK = 0.2  # seconds between checks while the main thread waits for its subagents


class Status:
    """One subagent as the user sees it: a label, a count of its tool calls, a clock. It is the
    subagent's screen (a LoopScreen): it counts tool calls instead of printing them."""

    def __init__(self, agent_type: str, description: str) -> None:
        self.label = f"[{agent_type}] {shorten(description)}"  # one line, no escape codes
        self.tools = 0
        self.retries = 0  # the model call's retries, counted instead of shown one by one
        self.started = time.monotonic()
        self.cancelled = False

    def stop_if_cancelled(self) -> None:
        """Ctrl-C reaches only the main thread, so a subagent stops at its next step instead."""
        if self.cancelled:
            raise KeyboardInterrupt

    def thinking(self, text: str) -> None:
        self.stop_if_cancelled()

    def end_thinking(self) -> None:
        self.stop_if_cancelled()

    def text(self, text: str) -> None:
        self.stop_if_cancelled()

    def alert(self, text: str) -> None:
        """A retry of the subagent's model call: counted on its status line."""
        self.stop_if_cancelled()
        self.retries += 1

    def reply_done(self, response: anthropic.types.Message) -> None:
        self.stop_if_cancelled()

    def tool_call(self, name: str, tool_input: dict) -> None:
        self.stop_if_cancelled()
        self.tools += 1

    def tool_result(self, output: str, is_error: bool) -> None:
        self.stop_if_cancelled()

    def line(self, outcome: str = "", columns: int = PIPED_WIDTH) -> str:
        """The status line, its label cut so that the whole line fits in `columns`."""
        tools = f"{self.tools} tools"
        if self.tools == 1:
            tools = "1 tool"
        progress = f"{tools}, {time.monotonic() - self.started:.1f} s"
        if self.retries:
            progress += f", {self.retries} retried"
        end = f" … {progress}"
        if outcome:
            end = f" {outcome} ({progress})"
        return fit(self.label, columns - len(end)) + end


class LockedScreen:
    """The main agent's screen, shared by threads: each event prints whole, and a Task's result
    comes right under its subagent's last status line."""

    def __init__(self, board: "StatusBoard", screen: LoopScreen) -> None:
        self.board = board
        self.screen = screen

    def thinking(self, text: str) -> None:
        with self.board.printing():
            self.screen.thinking(text)

    def end_thinking(self) -> None:
        with self.board.printing():
            self.screen.end_thinking()

    def text(self, text: str) -> None:
        with self.board.printing():
            self.screen.text(text)

    def alert(self, text: str) -> None:
        with self.board.printing():
            self.screen.alert(text)

    def reply_done(self, response: anthropic.types.Message) -> None:
        with self.board.printing():
            self.screen.reply_done(response)

    def tool_call(self, name: str, tool_input: dict) -> None:
        with self.board.printing():
            self.screen.tool_call(name, tool_input)

    def tool_result(self, output: str, is_error: bool) -> None:
        with self.board.printing():
            self.board.print_finished()
            self.screen.tool_result(output, is_error)


class StatusBoard:
    """The status lines of the running subagents. Threads print through its lock, so lines never
    mix; on a terminal the screen's live region shows the running ones."""

    def __init__(self, screen: Screen, stopped: threading.Event) -> None:
        self.screen = screen
        self.stopped = stopped
        self.lock = threading.Lock()
        self.running: list[Status] = []
        self.finished: dict[int, str] = {}  # thread: its subagent's last line, not yet shown
        screen.status_lines = self.lines

    def start(self, agent_type: str, description: str) -> Status:
        status = Status(agent_type, description)
        with self.printing():
            self.running.append(status)
            if not self.screen.tty():
                self.screen.line(f"{status.label} … started", "dim")
        return status

    def finish(self, status: Status, outcome: str) -> None:
        with self.printing():
            if status in self.running:  # after Ctrl-C it is not: stop_all() took it off
                self.running.remove(status)
                self.finished[threading.get_ident()] = status.line(outcome, self.screen.width())

    def print_finished(self) -> None:
        """The last status line of the subagent this thread ran, if it has not been shown yet."""
        line = self.finished.pop(threading.get_ident(), None)
        if line is not None:
            self.screen.line(line, "dim")  # cut to the width when it was made

    def locked(self, screen: LoopScreen) -> LockedScreen:
        return LockedScreen(self, screen)

    @contextlib.contextmanager
    def printing(self):
        """Hold the locks while something prints, so that whole lines never mix."""
        with self.lock, self.screen.lock:
            yield

    def lines(self) -> list[Text]:
        """The running subagents' lines, for the live region (the screen holds its lock)."""
        width = self.screen.width()
        return [Text(status.line(columns=width), style="dim") for status in list(self.running)]

    def wait_for(self, futures) -> None:
        """Wait until every subagent has finished; Ctrl-C can interrupt the wait at every tick."""
        while wait(futures, timeout=PROGRESS_TICK).not_done:
            pass

    def stop_all(self) -> None:
        """Ctrl-C: stop every running subagent and every command it started, and mark their
        status lines interrupted."""
        self.stopped.set()
        with self.printing():
            for status in self.running:
                status.cancelled = True
                self.screen.line(status.line("interrupted", self.screen.width()), "dim")
            self.running.clear()
            self.finished.clear()

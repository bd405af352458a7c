"""The ceiling of one user turn: a budget of model calls that the main agent and its subagents
spend together, so that no turn runs up cost without end."""

import threading

from plumbing.replies import AgentStopped

class CallBudget:
    """The model calls one user turn may make, subagents' included. The script makes one and
    starts it again at each turn; subagents' threads spend from it too, so it counts under a
    lock."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.made = 0
        self.lock = threading.Lock()

    def start_turn(self) -> None:
        with self.lock:
            self.made = 0

    def spend(self) -> None:
        """Count one model call, or stop the turn when all of its calls are made."""
        with self.lock:
            if self.made >= self.limit:
                raise AgentStopped(f"this turn made its {self.limit} model calls, subagents' "
                                   "included (MAX_CALLS_PER_TURN)")
            self.made += 1

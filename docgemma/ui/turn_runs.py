"""The turns running in this process, one job: keep a turn running when the page that sent it goes away, and let
the page reopened on its conversation follow it to its answer (issue 46).

Gradio stops iterating an event's generator when its browser disconnects (a reload): a turn streamed straight from
the handler was abandoned there, unrecorded, and the clinician lost the message and its answer. Here a turn's
events are drawn by a thread of its own into a list, and any number of pages follow that list from the start; the
run ends when its events do, whoever is watching. A turn whose run is not here (the app restarted, or another
replica ran it) is the conversation's to tell: its message was kept when sent (``Assistant.stream_turn``).
"""

from __future__ import annotations

import contextvars
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from docgemma.workspace import AgentEvent, TurnDone

#: How many conversations' unsent messages this process keeps (the oldest is let go first): a bound on memory.
HELD_MAX = 1000


@dataclass(frozen=True)
class Held:
    """A message the conversation refused without keeping it anywhere (its previous turn still ran, or another
    process was carrying out a decision on its card): what the clinician typed, and the image that went with it."""

    text: str
    attachment: dict[str, Any] | None = None


class TurnFailed(RuntimeError):
    """A turn's run ended with an error (raised in each page that follows it; the error is its cause)."""


class Run:
    """One turn's events, drawn from ``events`` by a daemon thread and kept for every follower."""

    def __init__(self, events: Iterator[AgentEvent], message: str = "") -> None:
        #: The clinician's message (a page reopened before the turn kept it shows it from here).
        self.message = message
        self._events: list[AgentEvent] = []
        self._done = False
        #: What ended the turn early, raised again in each follower (as the handler itself would have raised it).
        self._error: BaseException | None = None
        self._changed = threading.Condition()
        # In the sender's context: Gradio keeps its event there (``LocalContext``), which ZeroGPU's ``spaces.GPU``
        # reads to attach the GPU to a model call; a bare thread would start without it.
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._draw, events), daemon=True,
                                        name="docgemma-turn")
        self._thread.start()

    def _draw(self, events: Iterator[AgentEvent]) -> None:
        try:
            for event in events:
                with self._changed:
                    self._events.append(event)
                    self._changed.notify_all()
        finally:  # followers stop waiting however the turn ended; an error goes on up (the thread reports it)
            with self._changed:
                self._error = sys.exception()
                self._done = True
                self._changed.notify_all()

    @property
    def done(self) -> bool:
        with self._changed:
            return self._done

    def follow(self) -> Iterator[AgentEvent]:
        """Every event of the turn from its first, as they come, until the turn has ended."""
        seen = 0
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._done or len(self._events) > seen)  # noqa: B023  (read now)
                fresh, finished = self._events[seen:], self._done
            seen += len(fresh)
            yield from fresh
            if finished and seen == len(self._events):
                if self._error is not None:  # the page shows an error, as when the turn ran in its handler
                    raise TurnFailed("the turn ended with an error") from self._error
                return

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the turn to end; True when it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()


class TurnRuns:
    """The running turn of each conversation of this process (by thread id); one at a time per conversation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, Run] = {}
        #: Per conversation, the last message it refused and kept nowhere else: a reloaded page puts it back in the
        #: box (issue 46: a reload emptied the box, and the typed message was gone). In this process only: an app
        #: restart loses it, as it loses the running turn that caused the refusal.
        self._held: OrderedDict[str, Held] = OrderedDict()

    def hold(self, thread: str, held: Held) -> None:
        """Keep ``held`` as the conversation's unsent message (replacing an earlier one)."""
        with self._lock:
            self._held[thread] = held
            self._held.move_to_end(thread)
            while len(self._held) > HELD_MAX:
                self._held.popitem(last=False)

    def held(self, thread: str) -> Held | None:
        """The conversation's unsent message, until the next turn of the conversation starts."""
        with self._lock:
            return self._held.get(thread)

    def _holding(self, thread: str, events: Iterator[AgentEvent], attachment: dict[str, Any] | None
                 ) -> Iterator[AgentEvent]:
        """``events``, holding the message of a turn that refused it without keeping it (``TurnResult.unsent``):
        held by the run itself, so that it is kept whether or not a page is still following."""
        for event in events:
            if isinstance(event, TurnDone) and event.result.unsent:
                self.hold(thread, Held(event.result.unsent, attachment))
            yield event

    def start(self, thread: str, events: Iterator[AgentEvent], message: str = "",
              attachment: dict[str, Any] | None = None) -> Run | None:
        """Run ``events`` as the conversation's turn; None (nothing started) while another turn of it runs. A turn
        that starts is the message sent: the conversation's unsent message, if any, is let go (the box was sent)."""
        with self._lock:
            running = self._runs.get(thread)
            if running is not None and not running.done:
                return None
            for ended in [t for t, r in self._runs.items() if r.done]:  # finished runs are the conversation's now
                del self._runs[ended]
            self._held.pop(thread, None)
            run = self._runs[thread] = Run(self._holding(thread, events, attachment), message)
            return run

    def running(self, thread: str) -> Run | None:
        """The conversation's turn still running here, if any (a finished one is forgotten)."""
        with self._lock:
            run = self._runs.get(thread)
            if run is not None and run.done:
                del self._runs[thread]
                return None
            return run

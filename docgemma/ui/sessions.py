"""Gradio keeps every session's state in memory — a copy of the page's component configuration with its
updated values, about 0.5-1 MB here — until 10,000 sessions have come (``StateHolder``): a closed tab's is
never dropped before that, so the app's memory grew with every session (548 → 616 → 641 → 667 MB over three
rounds of 20). :class:`SessionReaper` drops a session once its tab has been closed for a while, or once it has
been idle for long; the conversation itself lives in the conversation database, and a reopened page restores it
(the browser keeps its id).
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import logging
import threading
import weakref
from typing import Any

log = logging.getLogger(__name__)


class SessionReaper:
    """Every ``every_s`` seconds, drop the Gradio sessions of ``demo`` that were closed (the page's heartbeat
    ended) more than ``closed_s`` seconds after their last event, or idle for ``idle_s`` seconds."""

    def __init__(self, demo: Any, *, closed_s: float, idle_s: float, every_s: float = 30.0) -> None:
        self._demo = weakref.ref(demo)  # the thread ends with the app: it must not keep it alive
        self.closed_s, self.idle_s, self.every_s = closed_s, idle_s, every_s
        self._stop = threading.Event()

    def sweep(self, now: datetime.datetime | None = None) -> int:
        """Drop the sessions due now; returns how many were dropped."""
        demo = self._demo()
        holder = getattr(demo, "state_holder", None) if demo is not None else None
        if holder is None:
            return 0
        now = now or datetime.datetime.now()
        dropped = 0
        for session_id, state in list(holder.session_data.items()):
            last = holder.time_last_used.get(session_id)
            idle = (now - last).total_seconds() if last is not None else 0.0
            if idle > self.idle_s or (getattr(state, "is_closed", False) and idle > self.closed_s):
                holder.delete_state(session_id)  # Gradio's own clean-up of the session's gr.State values
                holder.session_data.pop(session_id, None)
                holder.time_last_used.pop(session_id, None)
                dropped += 1
        if dropped:
            _give_back_memory()
            log.info("dropped %d closed or idle page sessions (%d held)", dropped, len(holder.session_data))
        return dropped

    def start(self) -> SessionReaper:
        """Sweep in a background thread until :meth:`stop` or until the app is gone."""

        def run() -> None:
            while not self._stop.wait(self.every_s) and self._demo() is not None:
                self.sweep()

        threading.Thread(target=run, name="docgemma-sessions", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()


def _give_back_memory() -> None:
    """Return freed heap pages to the system (glibc keeps them otherwise: the memory would stay resident)."""
    # Not glibc: the allocator keeps the pages for reuse, which bounds the memory too.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)

"""How many wrong guesses a client may make: Gradio's ``/login`` took 300 wrong passwords in 18.5 s, and the FHIR
and MCP servers answered every wrong bearer token at once. One limiter for both (``ui/login_limit.py`` for sign-ins,
``exposure.py`` for tokens).

Failed sign-ins (or tokens) are counted over a sliding window per client address and user name, and per client address
alone (a client trying many user names). Past either limit, ``/login`` is answered 429 with the wait, before
Gradio checks the password: a right password is refused too until the window has passed, or the limit would
only slow a guess down. A successful sign-in clears that user's count for that client.

Behind the deployment's nginx every client has the proxy's address (``deploy/``): the per-user limit still holds
for each user, and the per-address limit then bounds the whole site's failed sign-ins.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

#: Wrong passwords per client address and user name in :data:`WINDOW_S`, then 429 until the oldest ages out.
PER_USER = 5
#: Wrong passwords per client address, whatever the user names, in :data:`WINDOW_S`.
PER_CLIENT = 30
WINDOW_S = 300.0
#: Counters kept at most (the oldest dropped): a flood of addresses cannot grow the memory without bound.
MAX_KEYS = 10_000


@dataclass
class AttemptLimiter:
    """Counts failed attempts per client and name (thread-safe); ``clock`` is injectable for tests."""

    per_user: int = PER_USER
    per_client: int = PER_CLIENT
    window_s: float = WINDOW_S
    clock: Callable[[], float] = time.monotonic
    _failures: dict[tuple[str, str], deque[float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_s(self, client: str, user: str) -> float:
        """Seconds until ``user`` may try to sign in from ``client`` again (0: now)."""
        now = self.clock()
        with self._lock:
            waits = [self._wait(("user", f"{client}\0{user}"), self.per_user, now),
                     self._wait(("client", client), self.per_client, now)]
        return max(waits)

    def failed(self, client: str, user: str) -> None:
        now = self.clock()
        with self._lock:
            for key in (("user", f"{client}\0{user}"), ("client", client)):
                self._failures.setdefault(key, deque()).append(now)
                self._failures[key] = self._failures.pop(key)  # most recent last: the oldest are dropped first
            while len(self._failures) > MAX_KEYS:
                del self._failures[next(iter(self._failures))]

    def succeeded(self, client: str, user: str) -> None:
        with self._lock:
            self._failures.pop(("user", f"{client}\0{user}"), None)

    def _wait(self, key: tuple[str, str], limit: int, now: float) -> float:
        times = self._failures.get(key)
        if not times:
            return 0.0
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if not times:
            del self._failures[key]
            return 0.0
        return times[-limit] + self.window_s - now if len(times) >= limit else 0.0

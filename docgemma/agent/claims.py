"""Approval cards as a state machine: who is carrying out the decision on a card, and how far it got.

    pending ──claim──▶ claimed ──the write is seen──▶ written ──the graph moved on──▶ confirmed
       ▲              (owner, lease)                 (record id)
       └──────────── release (recovery: nothing under the action's key in the record)

A card with no row is *pending*: the graph's interrupt holds it, and the first decision to insert its row (one
unique key per thread and card) carries it out. The owner (this process) renews the claim's lease while it
runs. A claim whose lease ran out belongs to a process that died: the next process to touch the card takes it
over (compare-and-swap on the row's version, so two replicas never recover one card twice), asks the record
whether the action's write is there (its idempotency key is the action id), and then completes the turn or
releases the card so it can be decided again.

:class:`MemoryClaims` keeps the rows in this process (tests, the CLI). Several app processes share the durable
rows of :mod:`docgemma.ops.conversation_store`, kept beside the checkpoints (SQLite or PostgreSQL). Leases compare wall
clocks: replicas are assumed to keep their clocks in step (NTP), well within a lease.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

log = logging.getLogger(__name__)
State = Literal["claimed", "written", "confirmed"]
STATES: tuple[State, ...] = ("claimed", "written", "confirmed")


def process_owner() -> str:
    """This process, as a claim's owner: host, pid and a start token (a restarted container reuses its pid),
    then, where Linux tells them, the machine (boot id and pid namespace) and the process's start time, so that
    a process on the same machine can tell for certain that the owner died (:func:`owner_gone`)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}:{_machine()}:{_started(os.getpid())}"


@functools.cache
def _machine() -> str:
    """This boot of this machine, in this pid namespace ("" where it cannot be read: not Linux)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as boot:
            return f"{boot.read().strip()[:13]}/{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return ""


def _started(pid: int) -> str:
    """The start time of process ``pid`` (clock ticks since boot), "" for no such process or a zombie (killed,
    not yet reaped: it runs nothing), or where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return ""
    return "" if fields[0] in ("Z", "X") else fields[19]


def owner_gone(owner: str) -> bool:
    """True only when ``owner`` (a :func:`process_owner`) is certainly no longer running: a process of this boot
    of this machine, in this pid namespace, whose pid now runs nothing or another process (another start time).
    False for an owner elsewhere, or one that cannot be told apart: its claim's lease decides then."""
    parts = owner.split(":")
    if len(parts) != 5 or not parts[3] or parts[0] != socket.gethostname() or parts[3] != _machine():
        return False
    try:
        pid = int(parts[1])
    except ValueError:
        return False
    return _started(pid) != parts[4]


@dataclass(frozen=True)
class Claim:
    """One card's row: its state, who holds it and until when, the record id once written, the decision taken."""

    thread_id: str
    card_id: str
    state: State
    owner: str
    lease_until: float
    version: int = 0
    record_id: str = ""
    decision: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.state == "confirmed"

    def live(self, now: float | None = None) -> bool:
        """Held by a running process: not finished, and its lease has not run out."""
        return not self.done and self.lease_until > (time.time() if now is None else now)


@runtime_checkable
class CardClaims(Protocol):
    """The rows of the state machine. Every change but the first claim is made by the row's owner only."""

    def claim(self, thread_id: str, card_id: str, owner: str, lease_s: float,
              decision: dict[str, Any]) -> tuple[bool, Claim]:
        """Atomically insert ``card_id``'s row as *claimed* by ``owner``: (True, the new row) when this call
        inserted it, else (False, the row already there)."""
        ...

    def take_over(self, held: Claim, owner: str, lease_s: float) -> bool:
        """Make ``owner`` the holder of ``held`` (an expired claim) if nobody changed the row since it was read."""
        ...

    def advance(self, thread_id: str, card_id: str, owner: str, state: State, *, record_id: str = "",
                lease_s: float = 0.0) -> bool:
        """Move ``owner``'s row to ``state`` (keeping its record id unless one is given), lease ``lease_s`` from
        now; False when ``owner`` no longer holds it."""
        ...

    def renew(self, thread_id: str, card_id: str, owner: str, lease_s: float) -> bool:
        """Extend ``owner``'s unfinished claim by ``lease_s`` from now."""
        ...

    def release(self, thread_id: str, card_id: str, owner: str | None = None) -> None:
        """Delete the row (held by ``owner``, or whoever holds it when None): the card is pending again."""
        ...

    def get(self, thread_id: str, card_id: str) -> Claim | None:
        """The card's row, or None while it is pending."""
        ...


class MemoryClaims:
    """Rows of this process only (nothing survives it, so nothing needs recovering)."""

    #: Finished rows kept per thread: a confirmed card is never pending again.
    KEEP = 16

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[tuple[str, str], Claim] = {}

    def claim(self, thread_id: str, card_id: str, owner: str, lease_s: float,
              decision: dict[str, Any]) -> tuple[bool, Claim]:
        with self._lock:
            held = self._rows.get((thread_id, card_id))
            if held is not None:
                return False, held
            self._prune(thread_id)
            row = Claim(thread_id, card_id, "claimed", owner, time.time() + lease_s, 0, "", dict(decision))
            self._rows[(thread_id, card_id)] = row
            return True, row

    def take_over(self, held: Claim, owner: str, lease_s: float) -> bool:
        with self._lock:
            now = self._rows.get((held.thread_id, held.card_id))
            if now is None or now.version != held.version:
                return False
            self._rows[(held.thread_id, held.card_id)] = replace(now, owner=owner, lease_until=time.time() + lease_s,
                                                                 version=now.version + 1)
            return True

    def advance(self, thread_id: str, card_id: str, owner: str, state: State, *, record_id: str = "",
                lease_s: float = 0.0) -> bool:
        with self._lock:
            now = self._rows.get((thread_id, card_id))
            if now is None or now.owner != owner:
                return False
            self._rows[(thread_id, card_id)] = replace(now, state=state, record_id=record_id or now.record_id,
                                                       lease_until=time.time() + lease_s, version=now.version + 1)
            return True

    def renew(self, thread_id: str, card_id: str, owner: str, lease_s: float) -> bool:
        with self._lock:
            now = self._rows.get((thread_id, card_id))
            if now is None or now.owner != owner or now.done:
                return False
            self._rows[(thread_id, card_id)] = replace(now, lease_until=time.time() + lease_s, version=now.version + 1)
            return True

    def release(self, thread_id: str, card_id: str, owner: str | None = None) -> None:
        with self._lock:
            now = self._rows.get((thread_id, card_id))
            if now is not None and (owner is None or now.owner == owner):
                del self._rows[(thread_id, card_id)]

    def get(self, thread_id: str, card_id: str) -> Claim | None:
        with self._lock:
            return self._rows.get((thread_id, card_id))

    def _prune(self, thread_id: str) -> None:
        finished = [key for key, row in self._rows.items() if key[0] == thread_id and row.done]
        for key in finished[:-self.KEEP]:
            del self._rows[key]


@contextmanager
def holding(claims: CardClaims, thread_id: str, card_id: str, owner: str, lease_s: float) -> Iterator[None]:
    """Renew ``owner``'s claim every third of a lease while the block runs: a slow model call must not make a
    running decision look like a dead process's."""
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(lease_s / 3):
            try:
                claims.renew(thread_id, card_id, owner, lease_s)
            except Exception:  # the database may be briefly away: the next renewal tries again
                log.warning("could not renew an approval's lease", exc_info=True)

    threading.Thread(target=renew, name="approval-lease", daemon=True).start()
    try:
        yield
    finally:
        stop.set()


def crash_point(step: str) -> None:
    """Test-only: with ``DOCGEMMA_TEST_CRASH_AT=step`` this process kills itself (SIGKILL) at that step of an
    approval (``claimed``, ``wrote``, ``written``), for tests/integration/test_approval_crash.py. Never set in
    production."""
    if os.environ.get("DOCGEMMA_TEST_CRASH_AT") == step:
        os.kill(os.getpid(), signal.SIGKILL)

"""Who may decide on an approval card: the first decision to claim it. A card is consumed once.

:class:`MemoryClaims` holds the claims in this process (one app process, tests, the CLI). Several app replicas
on one conversation database use the durable claims of :mod:`docgemma.ops.store`, kept in the same database
as the checkpoints, so a card claimed on one replica is claimed for all of them. Either way the record write
itself is guarded again by the pending action's idempotency key.
"""

from __future__ import annotations

import threading
from typing import Protocol, runtime_checkable


@runtime_checkable
class CardClaims(Protocol):
    """One decision per approval card."""

    def claim(self, thread_id: str, card_id: str) -> bool:
        """Atomically take ``card_id`` of ``thread_id``; False when an earlier decision took it."""
        ...

    def release(self, thread_id: str, card_id: str) -> None:
        """Give a claim back: its run failed before the graph moved on, so the card may be decided again."""
        ...


class MemoryClaims:
    """Claims of this process only."""

    #: A consumed card id is never pending again: per thread only the most recent ones are kept.
    KEEP = 16

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._claimed: dict[str, list[str]] = {}

    def claim(self, thread_id: str, card_id: str) -> bool:
        with self._lock:
            claimed = self._claimed.setdefault(thread_id, [])
            if card_id in claimed:
                return False
            claimed.append(card_id)
            del claimed[:-self.KEEP]
            return True

    def release(self, thread_id: str, card_id: str) -> None:
        with self._lock:
            claimed = self._claimed.get(thread_id, [])
            if card_id in claimed:
                claimed.remove(card_id)

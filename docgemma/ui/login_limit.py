"""How many wrong passwords a client may try at ``/login``: the shared limiter (``docgemma/attempt_limit.py``)
counting failed sign-ins per client address and (normalised) user name, and what a refused sign-in is told."""

from __future__ import annotations

from docgemma.attempt_limit import MAX_KEYS, PER_CLIENT, PER_USER, WINDOW_S, AttemptLimiter

__all__ = ["MAX_KEYS", "PER_CLIENT", "PER_USER", "WINDOW_S", "LoginLimiter", "refusal"]

#: Failed sign-ins, counted per client address and user name.
LoginLimiter = AttemptLimiter


def refusal(wait_s: float) -> str:
    """What a refused sign-in is told."""
    return (f"Too many failed sign-ins from this address: sign-in is paused for {int(wait_s) + 1} s. "
            "Check the user name and password, then try again after the pause.")

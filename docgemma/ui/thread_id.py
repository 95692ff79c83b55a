"""The conversation id a browser keeps (in localStorage, ``gr.BrowserState``) so a reloaded page, or a page
served by another or a restarted app process, continues the same conversation.

The id comes back from the browser: untrusted input. Only the shape this module makes (``web-`` and 32 hex
digits, 128 random bits) is accepted; anything else starts a fresh conversation. The browser holds only this
id, never patient data; whoever holds the id can continue the conversation, so it must stay unguessable.
"""

from __future__ import annotations

import re
import uuid

PREFIX = "web-"
_SHAPE = re.compile(r"web-[0-9a-f]{32}")


def new_thread_id() -> str:
    """A fresh, unguessable conversation id."""
    return f"{PREFIX}{uuid.uuid4().hex}"


def is_thread_id(value: object) -> bool:
    """True when ``value`` has the shape of an id made by :func:`new_thread_id`."""
    return isinstance(value, str) and _SHAPE.fullmatch(value) is not None


def thread_from_browser(value: object) -> tuple[str, bool]:
    """The id the browser sent if it is well formed, else a fresh one; and whether it was restored."""
    if is_thread_id(value):
        return str(value), True
    return new_thread_id(), False

"""The reference to a patient that the conversation, the tools and the record's checks pass around."""

from __future__ import annotations

import re
from typing import TypedDict

#: What of an identifier a message gave may be shown back: printable, no markup or code-span characters.
_UNSHOWN_RE = re.compile(r"[^\w\-./:#@+=]")


class PatientRef(TypedDict):
    """The active patient of a conversation; carried across turns."""

    id: str
    name: str


def shown_id(value: object, limit: int = 64) -> str:
    """An identifier as it may be repeated to the clinician: characters that could be markup dropped, at most
    ``limit`` long (a malformed id such as ``../../etc/passwd`` is shown, never looked up)."""
    text = _UNSHOWN_RE.sub("", str(value))
    return (text[:limit] + "…") if len(text) > limit else (text or "(unreadable)")

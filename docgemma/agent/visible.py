"""The clinician's message as it reads on screen: characters that are not seen are not read either.

Zero-width and bidirectional-control characters (Unicode "format" characters), control characters other than
line breaks and tabs, and lone surrogates (invalid text a browser or API client can still send) are dropped
before anything else sees the message: "Am\u200bina Okafor" is the name the clinician sees, a message of only
invisible characters is empty, and an RTL override cannot make the record read text the screen shows reversed.
"""

from __future__ import annotations

import unicodedata

_KEPT_CONTROLS = frozenset("\n\t")


def visible_text(message: str) -> str:
    """``message`` without format characters, controls (other than newline and tab) and lone surrogates."""
    return "".join(ch for ch in message if ch in _KEPT_CONTROLS or unicodedata.category(ch) not in ("Cf", "Cc", "Cs"))

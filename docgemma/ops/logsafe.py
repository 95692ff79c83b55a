"""No patient data in the app's log, at any level, including the frameworks' tracebacks.

Gradio prints a validation error's traceback itself (``traceback.print_exc`` to stderr, not through
``logging``), and a patient dropdown's error lists every choice — each patient's record id and name. So two
nets, one :class:`Redactor`:

* :class:`RedactingFilter` on every logging handler (message, arguments, traceback and stack text);
* :class:`RedactingStream` in place of ``sys.stderr`` and ``sys.stdout``, for what is printed directly and for
  handlers created later that write to them (uvicorn's).

Redacted: record ids (UUIDs) and conversation ids, the names of patients the page has listed or shown
(:func:`remember`), and the value and choices of a dropdown's "not in the list of choices" error.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any, TextIO

#: What a redacted part becomes.
MASK = "[redacted]"
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
#: Conversation ids (``web-`` + 32 hex), pending-action ids and idempotency keys (32+ hex digits).
_HEX_ID = re.compile(r"\b(?:web-)?[0-9a-fA-F]{32,64}\b")
#: Gradio's dropdown error: "Value: <value> is not in the list of choices: [<every choice>]".
_CHOICES = re.compile(r"Value: .*? is not in the list of choices: [^\n]*")
#: Name parts shorter than this are not redacted on their own (they would hit ordinary words).
MIN_PART = 3


class Redactor:
    """Replaces patient identifiers in text. Thread-safe: names are added while requests are served."""

    def __init__(self) -> None:
        self._names: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def remember(self, names: Iterable[str]) -> None:
        """Redact these patient names from now on: each whole name, and each of its parts."""
        added = False
        with self._lock:
            for name in names:
                for part in [name, *re.split(r"[\s,|]+", name)]:
                    part = part.strip()
                    if len(part) >= MIN_PART and part not in self._names:
                        self._names.add(part)
                        added = True
            if added:
                ordered = sorted(self._names, key=len, reverse=True)  # the whole name before its parts
                self._pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, ordered)) + r")\b", re.IGNORECASE)

    def __call__(self, text: str) -> str:
        if not text:
            return text
        text = _CHOICES.sub(f"Value: {MASK} is not in the list of choices: [{MASK}]", text)
        text = _UUID.sub(MASK, text)
        text = _HEX_ID.sub(MASK, text)
        pattern = self._pattern
        return pattern.sub(MASK, text) if pattern is not None else text


#: The process's redactor: the page adds the names it lists (:func:`remember`).
REDACTOR = Redactor()


def remember(names: Iterable[str]) -> None:
    """Redact these patient names from every log line from now on."""
    REDACTOR.remember(names)


class RedactingFilter(logging.Filter):
    """A handler filter that redacts a record's message, traceback and stack text (the record is changed in
    place, so every handler after this one sees it redacted too)."""

    def __init__(self, redact: Callable[[str], str] = REDACTOR) -> None:
        super().__init__()
        self.redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # arguments that do not fit the format: keep the format only
            message = str(record.msg)
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


class RedactingStream:
    """A text stream that redacts each write before passing it on (everything else is the wrapped stream's)."""

    def __init__(self, stream: TextIO, redact: Callable[[str], str] = REDACTOR) -> None:
        self._stream = stream
        self._redact = redact

    def write(self, text: str) -> int:
        self._stream.write(self._redact(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


_FILTER = RedactingFilter()


def _handlers() -> Iterable[logging.Handler]:
    yield from logging.getLogger().handlers
    for logger in list(logging.Logger.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger):
            yield from logger.handlers


def install() -> Callable[[], None]:
    """Redact every log handler present now, and stderr/stdout (for tracebacks printed directly and handlers
    made later). Returns a function that undoes it. Called at app start, after logging is configured."""
    filtered = []
    for handler in _handlers():
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)
            filtered.append(handler)
    wrapped: list[tuple[str, TextIO]] = []
    for name in ("stderr", "stdout"):
        stream = getattr(sys, name)
        if not isinstance(stream, RedactingStream):
            wrapped.append((name, stream))
            setattr(sys, name, RedactingStream(stream))

    def uninstall() -> None:
        for handler in filtered:
            handler.removeFilter(_FILTER)
        for name, stream in wrapped:
            setattr(sys, name, stream)

    return uninstall

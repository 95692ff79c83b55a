"""No patient data in the app's log, at any level, including the frameworks' tracebacks.

Gradio prints a validation error's traceback itself (``traceback.print_exc`` to stderr, not through
``logging``), and a patient dropdown's error lists every choice — each patient's record id and name. So two
nets, one :class:`Redactor`:

* :class:`RedactingFilter` on every logging handler (message, arguments, traceback and stack text);
* :class:`RedactingStream` in place of ``sys.stderr`` and ``sys.stdout``, for what is printed directly and for
  handlers created later that write to them (uvicorn's).

Redacted: record ids (UUIDs) and conversation ids; the name and every identifier (MRN, …) of every patient the
record holds — the app remembers each Patient resource its FHIR client receives (:func:`watch`), and the whole
embedded record at start (:func:`remember_record`), not only the patients a page listed; the query values and the
resource ids of every URL (a search ``Patient?name=…&identifier=…`` names the patient before the record answers:
httpx logs each request at INFO); ``Patient/<id>`` references; and the value and choices of a dropdown's "not in
the list of choices" error.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from docgemma.workspace import Record

#: What a redacted part becomes.
MASK = "[redacted]"
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
#: Conversation ids (``web-`` + 32 hex), pending-action ids and idempotency keys (32+ hex digits).
_HEX_ID = re.compile(r"\b(?:web-)?[0-9a-fA-F]{32,64}\b")
#: Gradio's dropdown error: "Value: <value> is not in the list of choices: [<every choice>]".
_CHOICES = re.compile(r"Value: .*? is not in the list of choices: [^\n]*")
#: Name parts shorter than this are not redacted on their own (they would hit ordinary words).
MIN_PART = 3
#: Identifiers shorter than this are not redacted (a 2-digit one would hit every number).
MIN_IDENTIFIER = 4
#: A URL in a log line: its query values and resource ids are redacted (:func:`_url`).
_URL = re.compile(r"https?://[^\s\"'<>]+")
#: A FHIR resource type as a URL path segment: the segment after it is a resource id.
_TYPE_SEGMENT = re.compile(r"(/[A-Z][A-Za-z]{1,63}/)(?![$_])([^/?#\s]+)")
#: A reference to a person's resource outside a URL (``Patient/abc``).
_PERSON_REF = re.compile(r"\b((?:Patient|Person|RelatedPerson)/)[A-Za-z0-9\-.]{1,64}")


def _url(match: re.Match[str]) -> str:
    """A URL with its query values and the ids after resource types masked (names and keys kept)."""
    url, _, query = match.group(0).partition("?")
    url = _TYPE_SEGMENT.sub(lambda m: m.group(1) + MASK, url)
    return url + ("?" + re.sub(r"=[^&#]*", "=" + MASK, query) if query else "")


class Redactor:
    """Replaces patient identifiers in text. Thread-safe: names are added while requests are served."""

    def __init__(self) -> None:
        self._names: set[str] = set()
        self._identifiers: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._id_pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def remember(self, names: Iterable[str], identifiers: Iterable[str] = ()) -> None:
        """Redact these patient names from now on (each whole name, and each of its parts), and these
        identifiers (MRNs and the like, whole)."""
        with self._lock:
            parts = (part.strip() for name in names for part in [name, *re.split(r"[\s,|]+", name)])
            new_names = {part for part in parts if len(part) >= MIN_PART} - self._names
            new_ids = {i.strip() for i in identifiers if len(i.strip()) >= MIN_IDENTIFIER} - self._identifiers
            if new_names:
                self._names |= new_names
                ordered = sorted(self._names, key=len, reverse=True)  # the whole name before its parts
                self._pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, ordered)) + r")\b", re.IGNORECASE)
            if new_ids:
                self._identifiers |= new_ids
                ordered = sorted(self._identifiers, key=len, reverse=True)
                self._id_pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, ordered)) + r")(?!\w)",
                                              re.IGNORECASE)

    def __call__(self, text: str) -> str:
        if not text:
            return text
        text = _CHOICES.sub(f"Value: {MASK} is not in the list of choices: [{MASK}]", text)
        text = _URL.sub(_url, text)
        text = _PERSON_REF.sub(lambda m: m.group(1) + MASK, text)
        text = _UUID.sub(MASK, text)
        text = _HEX_ID.sub(MASK, text)
        for pattern in (self._id_pattern, self._pattern):
            if pattern is not None:
                text = pattern.sub(MASK, text)
        return text


#: The process's redactor: the page adds the names it lists (:func:`remember`).
REDACTOR = Redactor()


def remember(names: Iterable[str], identifiers: Iterable[str] = ()) -> None:
    """Redact these patient names (and identifiers) from every log line from now on."""
    REDACTOR.remember(names, identifiers)


def _patients(body: Any) -> Iterator[dict[str, Any]]:
    """The Patient resources of a FHIR response: the resource itself, or a Bundle's entries."""
    if not isinstance(body, dict):
        return
    if body.get("resourceType") == "Patient":
        yield body
    for entry in body.get("entry") or []:
        resource = entry.get("resource") if isinstance(entry, dict) else None
        if isinstance(resource, dict) and resource.get("resourceType") == "Patient":
            yield resource


def patient_terms(patient: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(names, identifier values) of a Patient resource: every name's text, given and family parts."""
    names: list[str] = []
    for name in patient.get("name") or []:
        if isinstance(name, dict):
            parts = [*(name.get("given") or []), name.get("family") or "", name.get("text") or ""]
            names += [str(p) for p in parts if p]
    identifiers = [str(i["value"]) for i in patient.get("identifier") or [] if isinstance(i, dict) and i.get("value")]
    return names, identifiers


def watch(body: Any, redactor: Redactor = REDACTOR) -> None:
    """A FHIR client observer: every patient a response carries is redacted from the log from now on."""
    for patient in _patients(body):
        redactor.remember(*patient_terms(patient))


def remember_record(ehr: Record, limit: int = 1_000_000) -> int:
    """Make the record's FHIR client report every patient it receives to :func:`watch`, and read every patient
    of the record now (the embedded record; a FHIR server's patients as the app reads them). Returns how many
    patients were read now."""
    if watch not in ehr.client.observers:
        ehr.client.observers.append(watch)
    if not ehr.embedded_record:
        return 0  # a hospital's server: its patients are remembered as they are read, not swept at start
    return len(ehr.client.search("Patient", [("_count", "100")], limit=limit))


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


def install(streams: tuple[str, ...] = ("stderr", "stdout")) -> Callable[[], None]:
    """Redact every log handler present now, and ``streams`` (for tracebacks printed directly and handlers made
    later; the MCP server over stdio leaves stdout alone: it is the protocol). Returns a function that undoes
    it. Called at start, after logging is configured."""
    filtered = []
    for handler in _handlers():
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)
            filtered.append(handler)
    wrapped: list[tuple[str, TextIO]] = []
    for name in streams:
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

"""FHIR R4 validation with the ``fhir.resources`` R4B models: what the record accepts, and what the summary
and the tools can read.

Every create, update and transaction entry is checked here before it reaches the store (a 400
OperationOutcome names the field; nothing is stored). Resources that are already stored and do not validate
(written before validation existed, by hand, or by a server that accepted them) are skipped by the readers
through :func:`tolerant`, which says how many it skipped, so one bad resource never breaks every later turn.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from docgemma.fhir import FhirError

T = TypeVar("T")
#: What reading a malformed resource raises in code written for valid FHIR (a string where a dict should be,
#: a missing key, a bad date). Anything else is a bug and propagates.
DATA_ERRORS = (AttributeError, TypeError, KeyError, ValueError, IndexError)


@lru_cache(maxsize=256)
def _model(resource_type: str) -> Any:
    try:
        from fhir.resources.R4B import get_fhir_model_class
    except ImportError as exc:
        raise ImportError("validating FHIR resources needs the FHIR models: pip install 'fhir.resources>=8'") from exc
    from fhir.resources.R4B.resource import Resource

    try:
        model = get_fhir_model_class(resource_type)
    except (KeyError, ValueError):
        return None
    return model if isinstance(model, type) and issubclass(model, Resource) else None  # not Coding, Element...


NOT_STORED = frozenset({"Bundle", "OperationOutcome", "CapabilityStatement", "Parameters"})


def known_type(resource_type: str) -> bool:
    """True for a FHIR R4 resource type the record stores (``Foo`` and ``Bundle`` are not)."""
    return resource_type not in NOT_STORED and _model(resource_type) is not None


def check_known_type(resource_type: str) -> None:
    """Raise a 400 :class:`FhirError` for a type outside FHIR R4 (an invented ``/Foo``)."""
    if not known_type(resource_type):
        raise FhirError(400, "not-supported", f"{resource_type!r} is not a FHIR R4 resource type this record stores")


def problem(resource: Any) -> str | None:
    """Why ``resource`` is not a valid FHIR R4 resource (field and message, never the value), or None."""
    from pydantic import ValidationError

    if not isinstance(resource, dict):
        return "a resource must be a JSON object"
    kind = resource.get("resourceType")
    if not isinstance(kind, str) or not kind:
        return "resourceType is missing"
    if not known_type(kind):
        return f"{kind!r} is not a FHIR R4 resource type this record stores"
    model = _model(kind)
    try:
        model.model_validate(resource)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error.get("loc", ())) or "resource"
        message = str(error.get("msg", "invalid"))
        if error.get("type") == "json_invalid":  # the models parse a string given for an object as JSON
            message = f"expected an object, got {type(error.get('input')).__name__}"
        return f"{kind}.{where}: {message}"
    return None


def check_resource(resource: Any) -> None:
    """Raise a 400 :class:`FhirError` (OperationOutcome ``invalid``) when ``resource`` is not valid R4."""
    reason = problem(resource)
    if reason is not None:
        raise FhirError(400, "invalid", f"not valid FHIR R4: {reason}")


def validate_resource(resource: dict[str, Any]) -> None:
    """Validate against the R4 model; raises ``ValueError`` naming the problem (the write service's contract)."""
    reason = problem(resource)
    if reason is not None:
        raise ValueError(f"not valid FHIR R4: {reason}")


def split_readable(resources: list[Any]) -> tuple[list[dict[str, Any]], int]:
    """(the valid resources, how many were left out)."""
    readable = [r for r in resources if problem(r) is None]
    return readable, len(resources) - len(readable)


def tolerant(read: Callable[[list[dict[str, Any]], int], T], resources: list[dict[str, Any]]) -> T:
    """``read(resources, 0)``; when a malformed resource makes it fail, ``read(valid resources, how many were
    left out)``. Validation runs only on that failure: the usual turn pays nothing for it."""
    try:
        return read(resources, 0)
    except DATA_ERRORS:
        readable, skipped = split_readable(resources)
        if not skipped:
            raise  # every resource is valid: the failure is a bug, not bad data
        return read(readable, skipped)


def unreadable_note(skipped: int) -> str:
    """The sentence readers show when they left resources out."""
    entries = "entry" if skipped == 1 else "entries"
    return f"{skipped} record {entries} could not be read (not valid FHIR R4) and {'was' if skipped == 1 else 'were'} left out."

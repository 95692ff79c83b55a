"""FHIR search over the store: the parameters the agent and its clients use.

Patient: ``name``, ``family``, ``given``, ``identifier``, ``birthdate``, ``_id``. Clinical resources:
``patient``/``subject``, ``status``, ``code`` (``system|code``, ``|code`` or ``code``), ``category``,
``date`` (with ``eq``/``ge``/``le``/``gt``/``lt``, repeatable for ranges), ``encounter``, ``_id``.
Results: ``_sort`` (``date``, ``-date``, ``_lastUpdated``, ``-_lastUpdated``), ``_count`` (0 to 1000; larger is
capped at 1000, negative is a 400), ``_offset`` (negative is a 400).
Unknown parameters are an error (a silently ignored filter would return the wrong patients' data).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from docgemma.fhir import FhirError, check_id, encounter_reference, reference_id


class Candidates(Protocol):
    """What a search needs of the store (:class:`~docgemma.ehr.store.FhirStore`, which calls this module):
    the rows that SQL narrowed down. A protocol, so the two modules do not import each other."""

    def candidates(self, resource_type: str | None, patient: str | None = None,
                   clauses: Iterable[tuple[str, list[Any]]] = ()) -> list[tuple[dict[str, Any], dict[str, Any]]]: ...

FILTER_PARAMS = frozenset({"_id", "name", "family", "given", "identifier", "birthdate", "date", "status", "code",
                           "category", "encounter"})
RESULT_PARAMS = frozenset({"_sort", "_count", "_offset", "_format", "_total"})
PREFIXES = ("eq", "ne", "ge", "le", "gt", "lt")
MAX_COUNT = 1000


__all__ = ["encounter_reference", "page", "search"]
#: Token conditions: across the record, the matching ids from the (param, value, type) index; within one
#: patient's compartment (already narrowed by the patient index), a per-row lookup by (type, id) instead, so
#: a common code ("vital-signs" in every patient) never materialises the whole record's matches.
TOKEN_SQL = "id IN (SELECT id FROM search_tokens WHERE param = ? AND type = ? AND ({}))"
SCOPED_TOKEN_SQL = ("EXISTS (SELECT 1 FROM search_tokens t WHERE t.type = resources.type AND t.id = resources.id "
                    "AND t.param = ? AND t.type = ? AND ({}))")


def _date_matches(value: str | None, expr: str) -> bool:
    if not value:
        return False
    prefix, target = ("eq", expr)
    if expr[:2] in PREFIXES and not expr[:2].isdigit():
        prefix, target = expr[:2], expr[2:]
    value_cut = value[: len(target)]
    return {"eq": value_cut == target, "ne": value_cut != target, "ge": value_cut >= target,
            "le": value_cut <= target, "gt": value_cut > target, "lt": value_cut < target}[prefix]


def _token_matches(tokens: list[str], expr: str) -> bool:
    for alt in expr.split(","):
        if "|" in alt:
            system, code = alt.split("|", 1)
            if any(t == f"{system}|{code}" or (not system and t.endswith(f"|{code}")) for t in tokens):
                return True
        elif any(t.split("|", 1)[-1] == alt for t in tokens):
            return True
    return False


def _patient_name_matches(resource: dict[str, Any], part: str, expr: str) -> bool:
    needle = expr.lower()
    for name in resource.get("name", []):
        values = {"family": [name.get("family", "")], "given": name.get("given", []),
                  "name": [name.get("family", ""), *name.get("given", []), name.get("text", ""),
                           " ".join([*name.get("given", []), name.get("family", "")])]}[part]
        if any(needle in str(v).lower() for v in values):
            return True
    return False


def _matches(resource: dict[str, Any], index: dict[str, Any], key: str, value: str) -> bool:
    resource_type = resource["resourceType"]
    if key == "_id":
        return resource.get("id") in value.split(",")
    if resource_type == "Patient" and key in ("name", "family", "given"):
        return _patient_name_matches(resource, key, value)
    if key == "identifier":
        return _token_matches(index["identifiers"], value)
    if key in ("birthdate", "date"):
        return _date_matches(resource.get("birthDate") if key == "birthdate" else index["date"], value)
    if key == "status":
        return str(index["status"]) in value.split(",")
    if key == "code":
        return _token_matches(index["codes"], value)
    if key == "category":
        return any(c in value.split(",") for c in index["categories"]) or _token_matches(
            [f"|{c}" for c in index["categories"]], value)
    if key == "encounter":
        return reference_id(encounter_reference(resource), "Encounter") == value.split("/")[-1]
    raise FhirError(400, "not-supported", f"search parameter {key!r} is not supported")


def _sql(resource_type: str, key: str, value: str, scoped: bool = False) -> tuple[str, list[Any]] | None:
    """An SQL condition selecting a superset of what ``_matches(key, value)`` accepts, answered from the
    indexes (None: no narrowing for this parameter). ``_matches`` still decides every row, so the search's
    meaning is the one defined there; this only spares parsing the resources that cannot match. (One
    difference is accepted: a ``|code`` token also matches, in ``_matches``, a stored value that itself
    contains a ``|``; no code or identifier system in use has one.)"""
    alts = value.split(",")
    token_sql = SCOPED_TOKEN_SQL if scoped else TOKEN_SQL
    if key == "_id":
        return f"id IN ({', '.join('?' * len(alts))})", alts
    if key in ("identifier", "code"):
        conditions, values = [], [key, resource_type]
        for alt in alts:
            system = alt.split("|", 1)[0] if "|" in alt else ""
            code = alt.split("|", 1)[1] if "|" in alt else alt
            conditions.append("(system = ? AND value = ?)" if system else "value = ?")
            values += [system, code] if system else [code]
        return token_sql.format(" OR ".join(conditions)), values
    if key == "category":
        codes = [alt.split("|", 1)[-1] for alt in alts]
        return token_sql.format(" OR ".join("value = ?" for _ in codes)), ["category", resource_type, *codes]
    if key == "encounter":
        return token_sql.format("value = ?"), ["encounter", resource_type, value.split("/")[-1]]
    if key == "status" and "None" not in alts:
        return f"status IN ({', '.join('?' * len(alts))})", alts
    if key == "date":
        prefix, target = ("eq", value)
        if value[:2] in PREFIXES and not value[:2].isdigit():
            prefix, target = value[:2], value[2:]
        operator = {"eq": "=", "ge": ">=", "le": "<=", "gt": ">", "lt": "<"}.get(prefix)
        return (f"substr(date, 1, ?) {operator} ?", [len(target), target]) if operator else None
    if key in ("name", "family", "given") and resource_type == "Patient":
        return token_sql.format("instr(value, ?) > 0"), ["name", resource_type, value.lower()]
    return None


def search(store: Candidates, resource_type: str, params: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """All matches (sorted; ``_count``/``_offset`` are applied by the caller that pages)."""
    params = list(params)
    patient = None
    filters: list[tuple[str, str]] = []
    for key, value in params:
        base = key.split(":", 1)[0]
        if base in RESULT_PARAMS:
            continue
        if base in ("patient", "subject"):
            patient = value.split("/")[-1]
            check_id(patient)
            continue
        if base not in FILTER_PARAMS:
            raise FhirError(400, "not-supported", f"search parameter {base!r} is not supported")
        filters.append((base, value))
    clauses = [clause for key, value in filters if (clause := _sql(resource_type, key, value, patient is not None))]
    rows = store.candidates(resource_type, patient, clauses)
    found = [(r, i) for r, i in rows if all(_matches(r, i, k, v) for k, v in filters)]
    sort = dict(params).get("_sort", "")
    for field in reversed([f for f in sort.split(",") if f]):
        descending = field.startswith("-")
        name = field.lstrip("-")
        if name not in ("date", "_lastUpdated", "birthdate"):
            raise FhirError(400, "not-supported", f"_sort by {name!r} is not supported")
        column = {"date": "date", "_lastUpdated": "last_updated", "birthdate": "date"}[name]
        found.sort(key=lambda pair: pair[1][column] or "", reverse=descending)
    return [r for r, _ in found]


def page(results: list[dict[str, Any]], params: Iterable[tuple[str, str]]) -> tuple[list[dict[str, Any]], int, int]:
    """(page, offset, count) from ``_count`` and ``_offset``."""
    values = dict(params)
    try:
        count = min(int(values.get("_count", 50)), MAX_COUNT)
        offset = int(values.get("_offset", 0))
    except ValueError as exc:
        raise FhirError(400, "invalid", "_count and _offset must be whole numbers") from exc
    if count < 0 or offset < 0:
        # An error, not a clamp: a client sending -5 has a bug, and a silently different page hides it.
        raise FhirError(400, "invalid", "_count and _offset must not be negative")
    return results[offset : offset + count], offset, count

"""FHIR R4 resources in SQLite: the embedded record of a clinic with no FHIR server.

Each resource is stored whole (JSON) with a few extracted columns that searches use (patient, date,
status, codes, categories, search text), and its search tokens (identifiers, codes, categories, encounter,
patient names) in an indexed side table kept in the same transaction as the resource. A search narrows the
candidates in SQL with them and parses only those: a patient's data is found in milliseconds whatever the
size of the record (``bench/bench_ehr.py``). WAL mode and a busy timeout let several writers share the file;
every write is one SQLite transaction, so a crash never leaves half a bundle.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from docgemma.fhir import (
    CODE_FIELDS,
    ID_RE,
    FhirError,
    check_id,
    check_type,
    codings,
    display_text,
    encounter_reference,
    now,
    patient_of,
    reference_id,
)
from docgemma.private_files import private_database

# Re-exported: the record layer's modules and tests import these from here too.
__all__ = ["FhirError", "FhirStore", "check_id", "check_type", "display_text", "encounter_reference", "now",
           "patient_of", "reference_id"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS resources (
    type TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, last_updated TEXT NOT NULL,
    patient TEXT, date TEXT, status TEXT, codes TEXT NOT NULL, categories TEXT NOT NULL,
    identifiers TEXT NOT NULL, text TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (type, id)
);
CREATE INDEX IF NOT EXISTS resources_patient ON resources (patient, type);
CREATE INDEX IF NOT EXISTS resources_patient_updated ON resources (patient, last_updated);
CREATE TABLE IF NOT EXISTS search_tokens (
    type TEXT NOT NULL, id TEXT NOT NULL, param TEXT NOT NULL, system TEXT NOT NULL, value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS search_tokens_value ON search_tokens (param, value, type);
CREATE INDEX IF NOT EXISTS search_tokens_resource ON search_tokens (type, id);
"""
#: ``PRAGMA user_version`` once every resource has its search tokens (files from before are backfilled).
SCHEMA_VERSION = 2
DATE_FIELDS = (
    "effectiveDateTime",
    "effectivePeriod.start",
    "issued",
    "onsetDateTime",
    "recordedDate",
    "authoredOn",
    "period.start",
    "performedDateTime",
    "performedPeriod.start",
    "occurrenceDateTime",
    "date",
    "context.period.start",
    "createdDateTime",
    "recorded",
    "birthDate",
)


def _instant(value: str) -> str:
    """A FHIR instant in the stored form (UTC, milliseconds, ``Z``), so stamps compare as strings."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise FhirError(400, "invalid", "_since must be a FHIR instant") from exc
    if parsed.tzinfo is None:
        raise FhirError(400, "invalid", "_since needs a time zone")
    return parsed.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _get(data: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _tokens(resource: dict[str, Any], index: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(param, system, value) rows of the search side table: what ``identifier``, ``code``, ``category``,
    ``encounter`` and the Patient name parameters look up."""
    rows = [("identifier", *token.split("|", 1)) for token in json.loads(index["identifiers"])]
    rows += [("code", *token.split("|", 1)) for token in json.loads(index["codes"])]
    rows += [("category", "", category) for category in json.loads(index["categories"])]
    encounter = reference_id(encounter_reference(resource), "Encounter")
    if encounter:
        rows.append(("encounter", "", encounter))
    if resource.get("resourceType") == "Patient":
        for name in resource.get("name", []):
            given = [str(g) for g in name.get("given", [])]
            family, text = str(name.get("family", "")), str(name.get("text", ""))
            rows += [("name", "", v.lower()) for v in {*given, family, text, " ".join([*given, family])} if v]
    return [(param, system, value) for param, system, value in dict.fromkeys(rows)]


def _index(resource: dict[str, Any]) -> dict[str, Any]:
    status = _get(resource, "clinicalStatus.coding")
    status_code = status[0].get("code") if isinstance(status, list) and status else resource.get("status")
    date = next((str(v) for f in DATE_FIELDS if (v := _get(resource, f))), None)
    codes = sorted({f"{c.get('system', '')}|{c.get('code', '')}" for c in codings(resource, CODE_FIELDS)})
    categories = sorted({str(c.get("code")) for c in codings(resource, ("category", "class")) if c.get("code")})
    if isinstance(resource.get("class"), dict) and resource["class"].get("code"):
        categories.append(str(resource["class"]["code"]))
    idents = sorted(
        {f"{i.get('system', '')}|{i.get('value', '')}" for i in resource.get("identifier", []) if isinstance(i, dict)}
    )
    words = [display_text(resource)]
    words += [str(c.get("display", "")) for c in codings(resource, CODE_FIELDS)]
    if resource.get("resourceType") == "Patient":
        for name in resource.get("name", []):
            words += [*name.get("given", []), name.get("family", ""), name.get("text", "")]
    return {
        "patient": patient_of(resource),
        "date": date,
        "status": status_code,
        "codes": json.dumps(codes),
        "categories": json.dumps(sorted(set(categories))),
        "identifiers": json.dumps(idents),
        "text": " ".join(w for w in words if w).lower(),
    }


class FhirStore:
    """Resources in one SQLite file (or ``":memory:"`` for tests)."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._memory: sqlite3.Connection | None = None
        if self.path == ":memory:":
            self._memory = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            self._memory_lock = threading.RLock()
        else:
            private_database(Path(self.path))  # the record: owner-only (0600, its folder 0700)
            self._retry_busy(lambda: self._connection().execute("PRAGMA journal_mode=WAL"))  # persistent in the file
        self._retry_busy(lambda: self._connection().executescript(SCHEMA))  # commits by itself: not inside _tx
        if self._rows("PRAGMA user_version", ())[0][0] < SCHEMA_VERSION:
            self._backfill_tokens()

    def _backfill_tokens(self) -> None:
        """Give every stored resource its search tokens (a file written before the side table existed)."""
        with self._tx() as db:
            if db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
                return  # another process did it while this one waited for the lock
            db.execute("DELETE FROM search_tokens")
            for resource_type, resource_id, data in db.execute("SELECT type, id, data FROM resources").fetchall():
                resource = json.loads(data)
                db.executemany("INSERT INTO search_tokens (type, id, param, system, value) VALUES (?, ?, ?, ?, ?)",
                               [(resource_type, resource_id, *row) for row in _tokens(resource, _index(resource))])
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @staticmethod
    def _retry_busy(action: Callable[[], Any], seconds: float = 30.0) -> None:
        """Run ``action``, retrying while another process holds the file: switching the journal mode and
        creating tables can report "database is locked" without waiting on SQLite's busy timeout."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                action()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _connection(self) -> sqlite3.Connection:
        if self._memory is not None:
            return self._memory
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE: writers queue on the file lock, not fail)."""
        conn = self._connection()
        lock = self._memory_lock if self._memory is not None else None
        if lock:
            lock.acquire()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            if lock:
                lock.release()

    def _rows(self, sql: str, params: Iterable[Any]) -> list[sqlite3.Row]:
        conn = self._connection()
        lock = self._memory_lock if self._memory is not None else None
        if lock:
            lock.acquire()
        try:
            return list(conn.execute(sql, tuple(params)).fetchall())
        finally:
            if lock:
                lock.release()

    # ── reads ──────────────────────────────────────────────────────────────────────────────────────

    def read(self, resource_type: str, resource_id: str) -> dict[str, Any]:
        """One resource; 404 FhirError if absent."""
        check_type(resource_type)
        check_id(resource_id)
        rows = self._rows("SELECT data FROM resources WHERE type = ? AND id = ?", (resource_type, resource_id))
        if not rows:
            raise FhirError(404, "not-found", f"{resource_type}/{resource_id} not found")
        return dict(json.loads(rows[0][0]))

    def candidates(self, resource_type: str | None, patient: str | None = None,
                   clauses: Iterable[tuple[str, list[Any]]] = ()) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(resource, index columns) pairs of a type, optionally within one patient's compartment and narrowed
        by SQL ``clauses`` (conditions on the ``resources`` columns or the ``search_tokens`` side table, built by
        :mod:`.search`, with their parameters)."""
        where: list[str] = []
        params: list[Any] = []
        if resource_type:
            check_type(resource_type)
            where.append("type = ?")
            params.append(resource_type)
        if patient is not None:
            where.append("patient = ?")
            params.append(patient)
        for clause, values in clauses:
            where.append(f"({clause})")
            params += values
        sql = "SELECT data, date, status, codes, categories, identifiers, text, last_updated FROM resources"
        if where:
            sql += " WHERE " + " AND ".join(where)
        out = []
        for row in self._rows(sql, params):
            index = {
                "date": row[1],
                "status": row[2],
                "codes": json.loads(row[3]),
                "categories": json.loads(row[4]),
                "identifiers": json.loads(row[5]),
                "text": row[6],
                "last_updated": row[7],
            }
            out.append((json.loads(row[0]), index))
        return out

    def compartment(self, patient_id: str, since: str | None = None) -> list[dict[str, Any]]:
        """The patient and every resource in their compartment (``$everything``); with ``since`` (a FHIR
        instant), only those updated at or after it (``_since``: the cheap "did the record change" check)."""
        check_id(patient_id)
        self.read("Patient", patient_id)
        if since is None:
            rows = self._rows("SELECT data FROM resources WHERE patient = ? ORDER BY type, date", (patient_id,))
        else:
            rows = self._rows("SELECT data FROM resources WHERE patient = ? AND last_updated >= ? ORDER BY type, date",
                              (patient_id, _instant(since)))
        return [json.loads(r[0]) for r in rows]

    def count(self) -> dict[str, int]:
        """Resources per type."""
        return {str(t): int(n) for t, n in self._rows("SELECT type, COUNT(*) FROM resources GROUP BY type", ())}

    # ── writes ─────────────────────────────────────────────────────────────────────────────────────

    @staticmethod
    def _put(db: sqlite3.Connection, resource: dict[str, Any]) -> dict[str, Any]:
        resource_type = str(resource.get("resourceType", ""))
        check_type(resource_type)
        resource_id = str(resource.get("id") or uuid.uuid4())
        check_id(resource_id)
        row = db.execute("SELECT version FROM resources WHERE type = ? AND id = ?", (resource_type, resource_id)).fetchone()
        version = (row[0] + 1) if row else 1
        stamp = now()
        resource = {
            **resource,
            "id": resource_id,
            "meta": {**resource.get("meta", {}), "versionId": str(version), "lastUpdated": stamp},
        }
        index = _index(resource)
        db.execute("DELETE FROM search_tokens WHERE type = ? AND id = ?", (resource_type, resource_id))
        db.executemany("INSERT INTO search_tokens (type, id, param, system, value) VALUES (?, ?, ?, ?, ?)",
                       [(resource_type, resource_id, *row) for row in _tokens(resource, index)])
        db.execute(
            "INSERT OR REPLACE INTO resources (type, id, version, last_updated, patient, date, status, codes, "
            "categories, identifiers, text, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                resource_type,
                resource_id,
                version,
                stamp,
                index["patient"],
                index["date"],
                index["status"],
                index["codes"],
                index["categories"],
                index["identifiers"],
                index["text"],
                json.dumps(resource),
            ),
        )
        return resource

    def upsert(self, resources: Iterable[dict[str, Any]]) -> int:
        """Create or replace resources by id, all in one transaction; returns how many."""
        n = 0
        with self._tx() as db:
            for resource in resources:
                self._put(db, resource)
                n += 1
        return n

    def transaction(self, entries: list[dict[str, Any]]) -> list[tuple[dict[str, Any], bool]]:
        """Apply Bundle entries atomically; returns (resource, created) per entry.

        ``urn:uuid:`` full URLs become ``Type/id`` (the uuid is kept as the id, so a bundle reloads to the
        same ids) and every reference to them is rewritten. ``request.ifNoneExist`` makes a POST
        conditional: an existing match is returned instead, and references point to it.
        """
        from docgemma.ehr.search import search

        with self._tx() as db:
            mapping: dict[str, str] = {}
            plan: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
            for entry in entries:
                resource = entry.get("resource")
                if not isinstance(resource, dict):
                    raise FhirError(400, "invalid", "a bundle entry has no resource")
                resource_type = str(resource.get("resourceType", ""))
                check_type(resource_type)
                request = entry.get("request") or {}
                method = str(request.get("method", "PUT" if resource.get("id") else "POST")).upper()
                full_url = str(entry.get("fullUrl", ""))
                existing = None
                if method == "POST" and request.get("ifNoneExist"):
                    matches = search(self, resource_type, _parse_query(str(request["ifNoneExist"])))
                    if len(matches) > 1:
                        raise FhirError(412, "duplicate", "ifNoneExist matched more than one resource")
                    existing = matches[0] if matches else None
                if existing is not None:
                    resource_id = str(existing["id"])
                elif method == "PUT":
                    resource_id = str(request.get("url", "")).split("/")[-1] or str(resource.get("id", ""))
                    _check_version(db, resource_type, resource_id, request.get("ifMatch"))
                elif full_url.startswith("urn:uuid:") and ID_RE.match(full_url[9:]):
                    resource_id = full_url[9:]
                else:
                    resource_id = str(uuid.uuid4())
                check_id(resource_id)
                if full_url:
                    mapping[full_url] = f"{resource_type}/{resource_id}"
                plan.append(({**resource, "id": resource_id}, existing))
            results: list[tuple[dict[str, Any], bool]] = []
            for resource, existing in plan:
                if existing is not None:
                    results.append((existing, False))
                else:
                    results.append((self._put(db, _rewrite(resource, mapping)), True))
            return results


def _check_version(db: sqlite3.Connection, resource_type: str, resource_id: str, if_match: Any) -> None:
    """A version-checked update (``If-Match: W/"<versionId>"``): refused (412) when the resource is gone or another
    version is current, so an update made on what the writer read never overwrites a change it did not see."""
    if not if_match:
        return
    wanted = str(if_match).removeprefix("W/").strip('"')
    row = db.execute("SELECT version FROM resources WHERE type = ? AND id = ?", (resource_type, resource_id)).fetchone()
    if row is None:
        raise FhirError(404, "not-found", f"{resource_type}/{resource_id} is not on record")
    if str(row[0]) != wanted:
        raise FhirError(412, "conflict", f"{resource_type}/{resource_id} is at version {row[0]}, not {wanted}: "
                        "it changed since it was read")


def _rewrite(value: Any, mapping: dict[str, str]) -> Any:
    """Replace ``urn:uuid:`` references by their new ``Type/id``."""
    if isinstance(value, dict):
        return {
            k: (mapping.get(v, v) if k == "reference" and isinstance(v, str) else _rewrite(v, mapping)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_rewrite(v, mapping) for v in value]
    return value


def _parse_query(query: str) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl

    return parse_qsl(query.split("?", 1)[-1], keep_blank_values=True)

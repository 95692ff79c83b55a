"""Indexed search: a search reads only the rows that can match, finds the same resources as
the full scan it replaced, and a record file written before the index existed is indexed when opened."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from docgemma.ehr import search as search_module
from docgemma.ehr.api import ApiTransport, FhirApi
from docgemma.ehr.client import FhirClient
from docgemma.ehr.load import load
from docgemma.ehr.search import search
from docgemma.ehr.store import FhirStore

DATA = Path(__file__).parents[2] / "data"
LOINC = "http://loinc.org"


def observation(n: int, pid: str, code: str) -> dict[str, Any]:
    return {"resourceType": "Observation", "id": f"o{pid}-{n}", "status": "final", "subject": {"reference": f"Patient/{pid}"},
            "code": {"coding": [{"system": LOINC, "code": code}]}, "effectiveDateTime": f"2020-01-{n % 28 + 1:02d}",
            "identifier": [{"system": "urn:test", "value": f"v{pid}-{n}"}]}


@pytest.fixture
def rows_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many resource rows each search query returned from SQLite."""
    counts: list[int] = []
    original = FhirStore._rows

    def spy(self: FhirStore, sql: str, params: Any) -> list[sqlite3.Row]:
        rows = original(self, sql, params)
        if sql.startswith("SELECT data, date"):
            counts.append(len(rows))
        return rows

    monkeypatch.setattr(FhirStore, "_rows", spy)
    return counts


def test_a_search_reads_only_the_rows_that_can_match(rows_read: list[int]) -> None:
    store = FhirStore(":memory:")
    store.upsert([{"resourceType": "Patient", "id": pid} for pid in ("a", "b", "c")])
    store.upsert([observation(n, pid, "2160-0" if n % 10 == 0 else "8480-6") for pid in ("a", "b", "c") for n in range(100)])
    assert len(search(store, "Observation", [("code", f"{LOINC}|2160-0")])) == 30
    assert len(search(store, "Observation", [("identifier", "urn:test|vb-42")])) == 1
    assert len(search(store, "Observation", [("patient", "b"), ("code", "2160-0")])) == 10
    assert len(search(store, "Observation", [("patient", "b"), ("date", "ge2020-01-27")])) == 6
    assert rows_read == [30, 1, 10, 6]  # the full scan read 300, 300, 100 and 100


QUERIES = [
    ("Patient", [("name", "trantow")]), ("Patient", [("family", "Mensah")]), ("Patient", [("given", "gra")]),
    ("Patient", [("name", "grace mensah")]), ("Patient", [("birthdate", "ge1960")]), ("Patient", [("_id", "x,y")]),
    ("Condition", [("status", "active")]), ("Condition", [("status", "resolved,active")]),
    ("Observation", [("category", "vital-signs")]), ("Observation", [("category", "|laboratory")]),
    ("Observation", [("code", f"{LOINC}|8302-2")]), ("Observation", [("code", "|8302-2")]),
    ("Observation", [("code", "8302-2,2160-0")]),
    ("Observation", [("date", "2015")]), ("Observation", [("date", "ge2016-03")]), ("Observation", [("date", "gt2016-03")]),
    ("Observation", [("date", "le2014")]), ("Observation", [("date", "lt2014-06-01")]), ("Observation", [("date", "ne2015")]),
    ("Observation", [("date", "ge2014"), ("date", "le2016")]), ("Encounter", [("category", "AMB")]),
    ("MedicationRequest", [("status", "active"), ("code", "|314076")]), ("Immunization", [("code", "140")]),
]


def test_indexed_searches_find_exactly_what_the_full_scan_found(monkeypatch: pytest.MonkeyPatch) -> None:
    store = FhirStore(":memory:")
    client = FhirClient("http://t/fhir", transport=ApiTransport(FhirApi(store, "http://t/fhir")))
    load(client, DATA / "synthea" / "synthea-bundles")
    load(client, DATA / "demo" / "demo_patients.json")
    patients = [p["id"] for p in search(store, "Patient", [])]
    encounter = search(store, "Encounter", [("patient", patients[0])])[0]["id"]
    cases = [*QUERIES, *[(kind, [("patient", pid), *params]) for pid in patients[:3] for kind, params in QUERIES[6:]],
             ("Observation", [("encounter", f"Encounter/{encounter}")])]
    indexed = [[r["id"] for r in search(store, kind, params)] for kind, params in cases]
    monkeypatch.setattr(search_module, "_sql", lambda *args: None)  # the full scan, as before the index
    scanned = [[r["id"] for r in search(store, kind, params)] for kind, params in cases]
    assert indexed == scanned
    assert sum(map(bool, indexed)) > len(cases) * 0.6  # the comparison is about real matches, not empty lists


def test_a_record_file_from_before_the_index_is_indexed_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "record.sqlite"
    store = FhirStore(path)
    store.upsert([{"resourceType": "Patient", "id": "p1", "identifier": [{"system": "urn:mrn", "value": "42"}]}])
    with sqlite3.connect(path) as db:  # what an older version left: resources, no tokens
        db.execute("DELETE FROM search_tokens")
        db.execute("PRAGMA user_version = 0")
    reopened = FhirStore(path)
    assert [p["id"] for p in search(reopened, "Patient", [("identifier", "urn:mrn|42")])] == ["p1"]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] >= 2


def test_tokens_follow_updates() -> None:
    store = FhirStore(":memory:")
    store.upsert([observation(1, "a", "2160-0")])
    store.upsert([observation(1, "a", "8480-6")])  # the same id, recoded
    assert search(store, "Observation", [("code", "2160-0")]) == []
    assert [o["id"] for o in search(store, "Observation", [("code", "8480-6")])] == ["oa-1"]
    assert json.loads(json.dumps(store.count())) == {"Observation": 1}

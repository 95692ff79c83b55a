"""The record's edges: bad bodies are refused with an OperationOutcome and nothing is
stored; a bad resource already in the store does not break the summary or the tools; the summary follows
writes made by anyone else (another process on the same file, or another client of the same server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docgemma.ehr.api import ApiTransport, FhirApi
from docgemma.ehr.client import FhirClient
from docgemma.ehr.service import Ehr
from docgemma.ehr.store import FhirStore
from docgemma.tools.binding import ToolClients, bind_tools
from docgemma.tools.registry import ToolContext, default_registry

BASE = "http://embedded.test/fhir"
ACTIVE = {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical", "code": "active"}]}


def embedded(path: Path | str = ":memory:") -> tuple[FhirStore, FhirClient]:
    store = FhirStore(path)
    return store, FhirClient(BASE, transport=ApiTransport(FhirApi(store, BASE)))


def raw(body: Any) -> bytes:
    return body if isinstance(body, bytes) else json.dumps(body).encode()


def bundle(*entries: Any) -> dict[str, Any]:
    return {"resourceType": "Bundle", "type": "transaction", "entry": list(entries)}


R5_ENCOUNTER = {"resourceType": "Encounter", "status": "finished", "class": "AMB", "subject": {"reference": "Patient/p1"}}
BAD_BODIES = [
    ("POST", "Patient", b"{not json"),
    ("POST", "Patient", b"[1, 2]"),
    ("POST", "Patient", {"name": [{"family": "NoType"}]}),
    ("POST", "Patient", {"resourceType": "Observation", "status": "final", "code": {"text": "x"}}),
    ("PUT", "Patient/p1", {"resourceType": "Patient", "id": "p2"}),
    ("POST", "Patient", {"resourceType": "Patient", "name": "Ann Smith"}),
    ("POST", "Patient", {"resourceType": "Patient", "name": [5]}),
    ("POST", "Patient", {"resourceType": "Patient", "meta": "v1"}),
    ("POST", "Patient", {"resourceType": "Patient", "identifier": "MRN-1"}),
    ("POST", "Patient", {"resourceType": "Patient", "name": [{"given": "Ann"}]}),
    ("POST", "Patient", {"resourceType": "Patient", "birthDate": "not-a-date"}),
    ("POST", "Patient", {"resourceType": "Patient", "gender": 42}),
    ("POST", "Patient", {"resourceType": "Patient", "nickname": "extra field"}),
    ("POST", "Foo", {"resourceType": "Foo", "name": "invented"}),
    ("POST", "Encounter", R5_ENCOUNTER),
    ("PUT", "Encounter/e1", {**R5_ENCOUNTER, "id": "e1"}),
    ("POST", "Observation", {"resourceType": "Observation", "status": "final", "code": "glucose"}),
    ("POST", "Condition", {"resourceType": "Condition", "subject": "Patient/p1"}),
    ("POST", "", b"[]"),
    ("POST", "", {"resourceType": "Bundle", "type": "transaction", "entry": {"resource": {}}}),
    ("POST", "", bundle("not an entry")),
    ("POST", "", bundle({"resource": {"resourceType": "Patient"}, "request": "POST"})),
    ("POST", "", bundle({"resource": {"resourceType": "Patient"}, "request": {"method": "DELETE", "url": "Patient"}})),
    ("POST", "", bundle({"resource": {"resourceType": "Patient"}, "request": {"method": "POST", "url": "Observation"}})),
    ("POST", "", bundle({"resource": {"resourceType": "Patient"}, "fullUrl": 7})),
    ("POST", "", bundle({"resource": {"resourceType": "Patient", "id": "a"}, "request": {"method": "PUT", "url": "Patient/b"}})),
    # One valid entry and one bad one: the whole transaction is refused, the valid one is not stored either.
    ("POST", "", bundle({"resource": {"resourceType": "Patient", "name": [{"family": "Valid"}]}},
                        {"resource": R5_ENCOUNTER, "request": {"method": "POST", "url": "Encounter"}})),
]


@pytest.mark.parametrize(("method", "path", "body"), BAD_BODIES, ids=[f"{m} /{p} #{n}" for n, (m, p, _) in enumerate(BAD_BODIES)])
def test_bad_bodies_get_400_with_an_operation_outcome_and_nothing_is_stored(method: str, path: str, body: Any) -> None:
    store = FhirStore(":memory:")
    reply = FhirApi(store, BASE).handle(method, path, [], {}, raw(body))
    assert reply.status == 400, reply.body
    assert reply.body["resourceType"] == "OperationOutcome" and reply.body["issue"][0]["severity"] == "error"
    assert store.count() == {}


def test_the_outcome_names_the_field_and_not_the_value() -> None:
    reply = FhirApi(FhirStore(":memory:"), BASE).handle("POST", "Patient", [], {}, raw(
        {"resourceType": "Patient", "birthDate": "Secret-Name-1980"}))
    diagnostics = reply.body["issue"][0]["diagnostics"]
    assert "Patient.birthDate" in diagnostics and "Secret" not in diagnostics
    reply = FhirApi(FhirStore(":memory:"), BASE).handle("POST", "Encounter", [], {}, raw(R5_ENCOUNTER))
    assert "Encounter.class: expected an object" in reply.body["issue"][0]["diagnostics"]


@pytest.mark.parametrize("query", [[("_count", "-5")], [("_offset", "-1")], [("_count", "ten")]])
def test_negative_or_malformed_paging_is_a_400(query: list[tuple[str, str]]) -> None:
    store = FhirStore(":memory:")
    store.upsert([{"resourceType": "Patient", "id": f"p{n}"} for n in range(3)])
    reply = FhirApi(store, BASE).handle("GET", "Patient", query, {}, b"")
    assert reply.status == 400 and reply.body["resourceType"] == "OperationOutcome"


def test_count_zero_gives_the_total_and_no_next_page() -> None:
    store = FhirStore(":memory:")
    store.upsert([{"resourceType": "Patient", "id": f"p{n}"} for n in range(3)])
    reply = FhirApi(store, BASE).handle("GET", "Patient", [("_count", "0")], {}, b"")
    assert reply.status == 200 and reply.body["total"] == 3 and reply.body["entry"] == []
    assert [link["relation"] for link in reply.body["link"]] == ["self"]


def test_valid_bodies_are_still_accepted() -> None:
    store, client = embedded()
    patient = client.create({"resourceType": "Patient", "gender": "female", "birthDate": "1980-02-03"})
    encounter = {"resourceType": "Encounter", "status": "finished", "subject": {"reference": f"Patient/{patient['id']}"},
                 "class": {"system": "http://terminology.hl7.org/CodeSystem/v3-ActCode", "code": "AMB"}}
    assert client.create(encounter)["class"]["code"] == "AMB"
    assert store.count() == {"Patient": 1, "Encounter": 1}


# ── a bad resource already stored ─────────────────────────────────────────────────────────────────────


@pytest.fixture
def damaged(tmp_path: Path) -> tuple[Ehr, str]:
    """The demo record with an R5-style Encounter (``class`` a string) written straight into the file."""
    path = tmp_path / "record.sqlite"
    ehr = Ehr.embedded(path)
    pid = str(ehr.client.search("Patient", [("name", "Mensah")])[0]["id"])
    FhirStore(path).upsert([{**R5_ENCOUNTER, "id": "r5-encounter", "subject": {"reference": f"Patient/{pid}"},
                             "period": {"start": "2099-01-01"}}])
    return ehr, pid


def test_summary_survives_a_stored_resource_it_cannot_read_and_says_so(damaged: tuple[Ehr, str]) -> None:
    ehr, pid = damaged
    summary = ehr.summary(pid)
    assert "1 record entry could not be read" in summary.text
    assert summary.facts["unreadable_resources"] == 1
    assert any("penicillin" in s.lower() for s in summary.facts["safety"])  # the rest of the record is there
    assert ehr.patient_context({"id": pid, "name": "Grace Mensah"}) == summary.text  # type: ignore[typeddict-item]


def test_tools_survive_a_stored_resource_they_cannot_read(damaged: tuple[Ehr, str]) -> None:
    ehr, pid = damaged
    registry = bind_tools(default_registry(), ToolClients(record=ehr))
    for tool, args in (("get_patient_timeline", {"patient_id": pid}), ("get_patient_chart", {"patient_id": pid})):
        spec = registry[tool]
        outcome = spec.run(spec.args_model(**args), ToolContext())
        assert outcome["status"] == "success", (tool, outcome)
        assert "could not be read" in registry[tool].formatter(outcome["data"]), tool
    # A listing that does not need the broken field shows the entry as it is.
    spec = registry["query_patient_data"]
    outcome = spec.run(spec.args_model(patient_id=pid, resource_type="Encounter"), ToolContext())
    assert outcome["status"] == "success" and any("r5-encounter" in line for line in outcome["data"]["results"])


# ── a summary that is never stale ─────────────────────────────────────────────────────────────────────


def allergy(pid: str, substance: str) -> dict[str, Any]:
    return {"resourceType": "AllergyIntolerance", "patient": {"reference": f"Patient/{pid}"}, "clinicalStatus": ACTIVE,
            "code": {"text": substance}}


def test_summary_shows_an_allergy_written_by_another_process_on_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "record.sqlite"
    app = Ehr.embedded(path)
    pid = str(app.client.search("Patient", [("name", "Okafor")])[0]["id"])
    before = app.summary(pid)
    assert "latex" not in before.text.lower()
    assert "summary compiled at " in before.text.splitlines()[0] and " UTC" in before.text.splitlines()[0]
    other = Ehr.embedded(path)  # a second app or `ehr serve` on the same file
    other.client.create(allergy(pid, "Latex"))
    after = app.summary(pid)
    assert "ALLERGY: Latex" in after.text and "Latex" in after.facts["allergies"]
    assert app.summary(pid) is after  # unchanged record: the cached summary, no recompilation


def test_summary_shows_an_allergy_written_through_the_rest_api_by_another_client() -> None:
    store = FhirStore(":memory:")
    api = FhirApi(store, BASE)
    app, other = (FhirClient(BASE, transport=ApiTransport(api)) for _ in range(2))
    from docgemma.ehr.load import load

    load(app, Path(__file__).parents[2] / "data" / "demo" / "demo_patients.json")
    ehr = Ehr(app)
    pid = str(app.search("Patient", [("name", "Wilson")])[0]["id"])
    assert "sulfa" not in ehr.summary(pid).text.lower()
    other.create(allergy(pid, "Sulfa drugs"))
    assert "ALLERGY: Sulfa drugs" in ehr.summary(pid).text


def test_the_image_gallery_survives_a_malformed_document_and_reads_media(tmp_path: Path) -> None:
    path = tmp_path / "record.sqlite"
    ehr = Ehr.embedded(path)
    pid = str(ehr.client.search("Patient", [("name", "Kariuki")])[0]["id"])
    assert len(ehr.images(pid)) == 2
    png = "iVBORw0KGgo="  # the PNG signature is enough for the gallery's list
    FhirStore(path).upsert([
        {"resourceType": "DocumentReference", "id": "bad-doc", "status": "current", "content": "not a list",
         "subject": {"reference": f"Patient/{pid}"}},
        {"resourceType": "Media", "id": "wound-photo", "status": "completed", "subject": {"reference": f"Patient/{pid}"},
         "content": {"contentType": "image/png", "data": png, "title": "wound.png"}},
    ])
    images = ehr.images(pid)
    assert [name for _, name, _ in images].count("wound.png") == 1 and len(images) == 3
    assert "1 record entry could not be read" in ehr.summary(pid).text


def test_write_check_survives_an_unreadable_allergy_and_demands_an_override(tmp_path: Path) -> None:
    from docgemma.tools.ehr_tools import record_write_check

    path = tmp_path / "record.sqlite"
    ehr = Ehr.embedded(path)
    pid = str(ehr.client.search("Patient", [("name", "Okafor")])[0]["id"])
    bad = {"resourceType": "AllergyIntolerance", "id": "bad-allergy", "patient": {"reference": f"Patient/{pid}"},
           "clinicalStatus": "active", "code": ["penicillin"]}  # not R4: strings where objects belong
    FhirStore(path).upsert([bad])
    spec = default_registry()["prescribe_medication"]
    review = record_write_check(ehr)(spec, {"patient_id": pid, "medication_name": "amoxicillin", "dosage": "500 mg",
                                            "frequency": "three times daily"}, None)
    assert isinstance(review, dict) and review["severe"][0].startswith("INCOMPLETE CHECK")

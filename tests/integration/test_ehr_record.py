"""The embedded FHIR store and REST API through the FHIR client; loaders; durability and concurrency.

``exercise_client`` is the client test-suite: it runs against the embedded API in-process, over real HTTP,
and against the Medplum-router server (``test_medplum_interop.py``).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docgemma.ehr.api import ApiTransport, FhirApi
from docgemma.ehr.client import FhirClient, FhirClientError
from docgemma.ehr.load import load
from docgemma.ehr.store import FhirStore

DATA = Path(__file__).parents[2] / "data"
KERMIT = DATA / "synthea" / "synthea-bundles" / "synthea_r4_Kermit_Trantow_transaction_trimmed.json"
BASE = "http://embedded.test/fhir"


def embedded(path: Path | str = ":memory:") -> tuple[FhirStore, FhirClient]:
    store = FhirStore(path)
    return store, FhirClient(BASE, transport=ApiTransport(FhirApi(store, BASE)))


def exercise_client(client: FhirClient) -> None:
    """FHIR interactions the app relies on, against any R4 server."""
    entries = json.loads(KERMIT.read_text())["entry"]
    response = client.transaction(entries)
    assert len(response) == len(entries)
    patient = next(e["resource"] for e in response if e["resource"]["resourceType"] == "Patient")
    pid = patient["id"]
    # urn:uuid references were rewritten to the server's ids
    conditions = client.search("Condition", [("patient", pid)])
    assert len(conditions) == 6 and all(c["subject"]["reference"] == f"Patient/{pid}" for c in conditions)

    assert client.read("Patient", pid)["id"] == pid
    family = patient["name"][0]["family"]
    assert pid in [p["id"] for p in client.search("Patient", [("family", family)])]
    assert pid in [p["id"] for p in client.search("Patient", [("given", patient["name"][0]["given"][0])])]
    assert pid in [p["id"] for p in client.search("Patient", [("name", family.lower())])]
    assert pid in [p["id"] for p in client.search("Patient", [("birthdate", patient["birthDate"])])]
    ident = patient["identifier"][0]
    assert pid in [p["id"] for p in client.search("Patient", [("identifier", f"{ident['system']}|{ident['value']}")])]

    meds = client.search("MedicationRequest", [("patient", pid), ("status", "active")])
    assert meds and all(m["status"] == "active" for m in meds)
    allergies = client.search("AllergyIntolerance", [("patient", pid)])
    assert {a["code"]["coding"][0]["system"] for a in allergies} == {"http://snomed.info/sct"} and len(allergies) == 3
    code = conditions[0]["code"]["coding"][0]
    assert client.search("Condition", [("patient", pid), ("code", f"{code['system']}|{code['code']}")])

    observations = client.search("Observation", [("patient", pid), ("_sort", "-date")])
    dates = [o.get("effectiveDateTime", "") for o in observations]
    assert len(observations) == 44 and dates == sorted(dates, reverse=True)
    first = observations[-1]["effectiveDateTime"][:10]
    assert client.search("Observation", [("patient", pid), ("date", f"le{first}")])
    assert all(o["effectiveDateTime"][:10] >= first for o in
               client.search("Observation", [("patient", pid), ("date", f"ge{first}"), ("date", f"le{dates[0][:10]}")]))
    vitals = client.search("Observation", [("patient", pid), ("category", "vital-signs")])
    assert vitals and len(vitals) < len(observations)
    paged = client.search("Observation", [("patient", pid), ("_count", "5")], limit=12)
    assert len(paged) == 12  # followed next links

    everything = client.everything(pid)
    assert {r["resourceType"] for r in everything} >= {"Patient", "Condition", "Observation", "Encounter"}

    allergy = {"resourceType": "AllergyIntolerance", "patient": {"reference": f"Patient/{pid}"},
               "identifier": [{"system": "urn:test:idem", "value": f"k-{pid}"}], "code": {"text": "latex"},
               "clinicalStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical",
                                              "code": "active"}]}}
    one = client.create(allergy, if_none_exist=f"identifier=urn:test:idem|k-{pid}")
    two = client.create(allergy, if_none_exist=f"identifier=urn:test:idem|k-{pid}")
    assert one["id"] == two["id"]
    assert len(client.search("AllergyIntolerance", [("patient", pid)])) == 4

    with pytest.raises(FhirClientError) as missing:
        client.read("Patient", "no-such-patient-123")
    assert missing.value.status == 404


def test_client_against_the_embedded_api() -> None:
    _, client = embedded()
    exercise_client(client)


def test_operation_outcomes_and_bad_input() -> None:
    store, client = embedded()
    for resource_type, resource_id, status in (("Patient", "..%2F..%2Fetc", 400), ("Patient", "a b", 400),
                                               ("patient", "x1", 400), ("Patient", "missing-1", 404)):
        response = client.http.get(f"{BASE}/{resource_type}/{resource_id}")
        assert response.status_code == status
        assert response.json()["resourceType"] == "OperationOutcome"
    response = client.http.get(f"{BASE}/Patient", params={"nickname": "x"})
    assert response.status_code == 400 and "not supported" in response.json()["issue"][0]["diagnostics"]
    response = client.http.post(f"{BASE}/Patient", content=b"{not json")
    assert response.status_code == 400
    response = client.http.post(f"{BASE}/Patient", json={"resourceType": "Observation"})
    assert response.status_code == 400
    injection = client.search("Patient", [("name", "Robert'); DROP TABLE resources;--")])
    assert injection == [] and store.count() == {}


def test_synthea_bundles_and_bulk_ndjson_load_completely(tmp_path: Path) -> None:
    store, client = embedded(tmp_path / "r.sqlite")
    counts = load(client, DATA / "synthea")
    expected: Counter[str] = Counter()
    for bundle in (DATA / "synthea" / "synthea-bundles").glob("*.json"):
        expected.update(e["resource"]["resourceType"] for e in json.loads(bundle.read_text())["entry"])
    for ndjson in (DATA / "synthea" / "synthea-bulk-10-patients").glob("*.ndjson"):
        expected[ndjson.name.split(".")[0]] += sum(1 for line in ndjson.read_text().splitlines() if line.strip())
    assert counts == expected
    assert store.count() == dict(expected)  # nothing lost or duplicated (ids are unique across the sources)
    assert expected["DocumentReference"] == 1215 and expected["AllergyIntolerance"] == 14


def test_data_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "record.sqlite"
    _, client = embedded(path)
    created = client.create({"resourceType": "Patient", "name": [{"family": "Durable", "given": ["Dee"]}]})
    _, reopened = embedded(path)
    assert reopened.read("Patient", created["id"])["name"][0]["family"] == "Durable"


def test_two_concurrent_writers(tmp_path: Path) -> None:
    path = tmp_path / "record.sqlite"
    errors: list[BaseException] = []

    def writer(tag: str) -> None:
        try:
            _, client = embedded(path)
            for i in range(40):
                client.create({"resourceType": "Patient", "name": [{"family": f"{tag}{i}"}]})
        except BaseException as exc:  # noqa: BLE001 — collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(tag,)) for tag in ("A", "B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert FhirStore(path).count() == {"Patient": 80}


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    import uvicorn

    from docgemma.ehr.server import make_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}/fhir"
    server = uvicorn.Server(uvicorn.Config(make_app(FhirApi(FhirStore(tmp_path / "s.sqlite"), base)),
                                           host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield base
    server.should_exit = True
    thread.join(5)


@pytest.mark.slow
def test_client_over_http(http_server: str) -> None:
    exercise_client(FhirClient(http_server))
    metadata = httpx.get(f"{http_server}/metadata").json()
    assert metadata["resourceType"] == "CapabilityStatement" and metadata["fhirVersion"] == "4.0.1"


def test_oauth2_client_credentials_token_is_fetched_once_and_sent() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/oauth2/token":
            form = dict(x.split("=") for x in request.content.decode().split("&"))
            assert form == {"grant_type": "client_credentials", "client_id": "cid", "client_secret": "sec"}
            return httpx.Response(200, json={"access_token": "tok-1", "expires_in": 3600, "token_type": "Bearer"})
        if request.headers.get("Authorization") != "Bearer tok-1":
            return httpx.Response(401, json={"resourceType": "OperationOutcome", "issue": [{"code": "login"}]})
        return httpx.Response(200, json={"resourceType": "Patient", "id": "p1"})

    client = FhirClient("https://medplum.example/fhir/R4", transport=httpx.MockTransport(handler),
                        credentials=("https://medplum.example/oauth2/token", "cid", "sec"))
    assert client.read("Patient", "p1")["id"] == "p1"
    assert client.read("Patient", "p1")["id"] == "p1"
    assert [r.url.path for r in seen] == ["/oauth2/token", "/fhir/R4/Patient/p1", "/fhir/R4/Patient/p1"]

"""The FHIR client against a server we did not write: Medplum's own FHIR router (``tests/fixtures/medplum-fhir``,
its packages installed by ``npm install`` at the start).

Needs Node.js and npm (CI has them); otherwise it says why it skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from docgemma.ehr.client import FhirClient
from docgemma.ehr.service import Ehr
from docgemma.tools.binding import ToolClients, bind_tools
from docgemma.tools.ehr_tools import record_write_check
from docgemma.tools.registry import ToolContext, default_registry
from tests.conftest import free_port, wait_for_port
from tests.integration.test_ehr_record import exercise_client

pytestmark = pytest.mark.slow
SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "medplum-fhir"


@pytest.fixture(scope="module")
def medplum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("Node.js and npm are needed to run the Medplum test server")
    work = tmp_path_factory.mktemp("medplum") / "medplum-fhir"
    shutil.copytree(SOURCE, work)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=work, check=True,
                   capture_output=True, timeout=600)
    port = free_port()
    server = subprocess.Popen(["node", "server.mjs"], cwd=work, env={**os.environ, "PORT": str(port)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/fhir/R4"
    finally:
        server.terminate()
        server.wait(10)


def test_client_suite_against_medplum(medplum: str) -> None:
    exercise_client(FhirClient(medplum))


def test_record_tools_and_a_safe_write_against_medplum(medplum: str) -> None:
    ehr = Ehr(FhirClient(medplum))
    demo = Path(__file__).parents[2] / "data" / "demo" / "demo_patients.json"
    from docgemma.ehr.load import load

    load(ehr.client, demo)
    registry = bind_tools(default_registry(), ToolClients(record=ehr))
    search = registry["search_patient"]
    matches = search.run(search.args_model(name="Grace Mensah"), ToolContext())["data"]["matches"]
    assert len(matches) == 1
    pid = matches[0]["id"]
    summary = ehr.summary(pid)
    assert any("penicillin" in s for s in summary.facts["safety"])
    check = record_write_check(ehr)
    review = check(registry["prescribe_medication"], {"patient_id": pid, "medication_name": "amoxicillin"}, None)
    warnings = review["warnings"]
    assert any(w.startswith("ALLERGY CONFLICT") for w in warnings)
    allergy = registry["add_allergy"]
    args = allergy.args_model(patient_id=pid, substance="latex", reaction="urticaria")
    first = allergy.run(args, ToolContext(scope="medplum:1"))
    second = allergy.run(args, ToolContext(scope="medplum:1"))
    assert first["data"]["created"] is True and second["data"]["created"] is False
    assert len(ehr.client.search("AllergyIntolerance", [("patient", pid)])) == 2


def test_summary_follows_an_allergy_another_client_wrote_to_medplum(medplum: str) -> None:
    """Medplum's test router ignores ``$everything?_since`` and returns the whole compartment: the freshness
    check still sees the new resource (by version) and recompiles."""
    app, other = FhirClient(medplum), FhirClient(medplum)
    ehr = Ehr(app)
    pid = app.create({"resourceType": "Patient", "name": [{"family": "Freshness", "given": ["Fay"]}]})["id"]
    first = ehr.summary(pid)
    assert ehr.summary(pid) is first  # unchanged record: cached
    other.create({"resourceType": "AllergyIntolerance", "patient": {"reference": f"Patient/{pid}"},
                  "code": {"text": "Latex"}, "clinicalStatus": {"coding": [
                      {"system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical", "code": "active"}]}})
    assert "ALLERGY: Latex" in ehr.summary(pid).text


def test_the_app_pointed_at_medplum_by_url_searches_reads_and_writes_there(medplum: str, postgres_url: str,
                                                                           tmp_path: Path) -> None:
    """The deployed shape: the app built from ``DOCGEMMA_*`` (FHIR server by URL, conversations on PostgreSQL)
    finds a patient, reads the chart, and an approved write lands on Medplum, once."""
    from docgemma.agent.events import TurnResult
    from docgemma.config import Settings
    from docgemma.ops.health import fhir_check
    from docgemma.runtime import build_assistant, build_ehr

    dead = f"http://127.0.0.1:{free_port()}"  # the knowledge APIs: never the internet from a test
    settings = Settings.from_env({"DOCGEMMA_BACKEND": "fake", "DOCGEMMA_FHIR_BASE_URL": medplum,
                                  "DOCGEMMA_CHECKPOINT_URL": postgres_url, "DOCGEMMA_DATA_DIR": str(tmp_path),
                                  "DOCGEMMA_OPENFDA_URL": dead, "DOCGEMMA_EUTILS_URL": dead})
    server = FhirClient(medplum)  # what the test sees on the server, apart from the app's own client
    pid = server.create({"resourceType": "Patient", "name": [{"family": "Quill", "given": ["Zora"]}],
                         "birthDate": "1961-03-02"})["id"]
    server.create({"resourceType": "Condition", "subject": {"reference": f"Patient/{pid}"},
                   "code": {"text": "Type 2 diabetes mellitus"}, "clinicalStatus": {"coding": [
                       {"system": "http://terminology.hl7.org/CodeSystem/condition-clinical", "code": "active"}]}})
    ehr = build_ehr(settings)
    fhir_check(ehr)()  # the readiness check passes against this server
    assistant = build_assistant(settings, ehr)
    chart = assistant.run_turn("t", "Find patient Zora Quill and check her chart")
    assert isinstance(chart, TurnResult)
    assert {(t["tool"], t["status"]) for t in chart.tools} >= {("search_patient", "success"),
                                                              ("get_patient_chart", "success")}
    assert chart.active_patient is not None and chart.active_patient["id"] == pid
    card = assistant.run_turn("t", "Record a latex allergy (urticaria) for the active patient")
    assert isinstance(card, dict) and card["tool"] == "add_allergy"
    assert not server.search("AllergyIntolerance", [("patient", pid)])  # nothing before the approval
    done = assistant.resume("t", {"action": "approve", "card_id": card["card_id"]})
    assert isinstance(done, TurnResult) and len(done.writes) == 1
    again = assistant.resume("t", {"action": "approve", "card_id": card["card_id"]})
    assert isinstance(again, TurnResult) and not again.writes
    allergies = server.search("AllergyIntolerance", [("patient", pid)])
    assert len(allergies) == 1 and "latex" in str(allergies[0]).lower()

"""No patient data in the app's log at any level, including the frameworks' tracebacks: Gradio printed a patient
dropdown's validation error with every choice (each patient's record id and name) to the app log."""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from docgemma.ops import logsafe
from docgemma.ops.logsafe import MASK, RedactingFilter, RedactingStream, Redactor

PID = "3f2c1a9e-8b7d-4c6e-9a1b-2d3e4f5a6b7c"


def test_ids_names_and_dropdown_choices_are_redacted() -> None:
    redact = Redactor()
    redact.remember(["Amina Okafor", "Jo Li"])
    text = redact(f"chart of Amina Okafor ({PID}) in web-{'a' * 32}; okafor again; Jo stays, Li stays")
    assert PID not in text and "Okafor" not in text and "okafor" not in text and "aaaa" not in text
    assert "Jo stays" in text  # parts under three letters would hit ordinary words
    choices = f"gradio.exceptions.Error: \"Value: x|Nobody is not in the list of choices: ['{PID}|Zed Q', 'b|Yan']\""
    assert redact(choices) == f"gradio.exceptions.Error: \"Value: {MASK} is not in the list of choices: [{MASK}]"


def test_a_handler_filter_redacts_messages_arguments_and_tracebacks() -> None:
    redact = Redactor()
    redact.remember(["Amina Okafor"])
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RedactingFilter(redact))
    logger = logging.getLogger("test.logsafe")
    logger.addHandler(handler)
    try:
        try:
            raise ValueError(f"no record for Amina Okafor {PID}")
        except ValueError:
            logger.exception("tool failed for %s", PID)
        logger.debug("debug: %s", "Amina")  # every level: the filter is on the handler, not the logger
        stream = RedactingStream(out, redact)
        stream.write(f"Traceback ... Okafor {PID}\n")
    finally:
        logger.removeHandler(handler)
    text = out.getvalue()
    assert "tool failed for" in text and "ValueError" in text
    assert PID not in text and "Okafor" not in text and "Amina" not in text


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:

    from docgemma.agent.assistant import Assistant
    from docgemma.agent.demo_llm import demo_llm
    from docgemma.config import Settings
    from docgemma.ehr.service import Ehr
    from docgemma.ops.conversation_store import open_store
    from docgemma.ops.metrics import Metrics
    from docgemma.runtime import build_registry
    from docgemma.serve import readiness
    from docgemma.ui.page import build_demo
    from docgemma.ui.server import build_app
    from docgemma.workspace import Workspace
    from tests.conftest import serve_in_thread

    settings = Settings(data_dir=tmp_path, backend="fake")
    store = open_store(settings)
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    assistant = Assistant(demo_llm(), build_registry(settings, ehr, in_process=True), store.checkpointer, settings,
                          patient_context=ehr.patient_context)
    metrics = Metrics()
    demo = build_demo(Workspace(assistant, ehr, metrics), "Demo rules · CPU")
    url, stop = serve_in_thread(build_app(demo, readiness(settings, store, ehr), metrics))
    yield url
    stop()
    store.close()


@pytest.mark.slow
def test_gradios_validation_traceback_names_no_patient(served: str, capfd: pytest.CaptureFixture[str]) -> None:
    """A stale or forged patient choice made Gradio print its error with every patient's id and name."""
    from gradio_client import Client

    uninstall = logsafe.install()
    try:
        client = Client(served + "/", verbose=False)
        listed = client.predict("Okafor", api_name="/search_patients")
        assert "Okafor" in str(listed)  # the dropdown now holds the patient's id and name
        with pytest.raises(Exception, match="not in the list of choices"):
            client.predict("forged|Nobody", [], None, api_name="/select_patient")
        time.sleep(0.5)
    finally:
        uninstall()
    log = capfd.readouterr().err
    assert "not in the list of choices" in log  # the traceback is there …
    assert "Okafor" not in log and "Amina" not in log  # … without the patients
    assert not logsafe._UUID.search(log)


#: Turns naming patients by name and by MRN, none of them listed by a page first.
TURNS = ["Summarize the record of Grace Mensah", "Show the chart of patient DG-1005",
         "Find patient Samuel Kariuki and check his allergies", "What are the allergies of MRN DG-1007?"]
#: Every name part and MRN of the demo patients those turns touch.
SECRETS = ["Grace", "Mensah", "Kofi", "Asante", "DG-1005", "Samuel", "Kariuki", "DG-1007", "DG-1003"]


@pytest.mark.parametrize("level", [logging.DEBUG, logging.INFO])
def test_no_patient_name_or_mrn_reaches_the_log_at_any_level(level: int, tmp_path: Path) -> None:
    """At INFO, httpx logged 'GET …/Patient?name=Mensah' and '…/Patient/DG-1005': the redactor knew only the
    names a page had listed. Now every patient of the record, every URL's query values and resource ids."""
    from docgemma.config import Settings
    from docgemma.serve import assemble

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(level)
    uninstall = logsafe.install()
    app = assemble(Settings(data_dir=tmp_path, backend="fake"))
    try:
        for i, message in enumerate(TURNS):
            app.assistant.run_turn(f"log-{i}", message)
    finally:
        app.store.close()
        uninstall()
        root.removeHandler(handler)
        root.setLevel(old_level)
    log = out.getvalue()
    assert "HTTP Request: GET" in log  # the request lines are there …
    leaked = [s for s in SECRETS if s.lower() in log.lower()]
    assert leaked == [], log  # … without a name or an MRN


def test_urls_and_references_lose_their_patient_parts() -> None:
    redact = Redactor()
    line = ('HTTP Request: GET http://fhir.example/fhir/Patient?name=Nobody%20Known&identifier=X-99 "HTTP/1.1 200"; '
            'GET https://h/fhir/Patient/p-123/$everything?_count=1000; subject Patient/p-456; '
            'https://api.fda.gov/drug/label.json?search=warfarin')
    text = redact(line)
    for secret in ("Nobody", "X-99", "p-123", "p-456", "warfarin"):
        assert secret not in text, text
    assert "/fhir/Patient/[redacted]/$everything" in text and "api.fda.gov/drug/label.json" in text


def test_every_patient_a_fhir_server_sends_is_remembered() -> None:
    redact = Redactor()
    bundle = {"resourceType": "Bundle", "entry": [{"resource": {
        "resourceType": "Patient", "name": [{"given": ["Zanele"], "family": "Dlamini-Moyo"}],
        "identifier": [{"system": "urn:mrn", "value": "MRN-778812"}]}}]}
    logsafe.watch(bundle, redact)
    text = redact("chart of Zanele Dlamini-Moyo, mrn-778812, seen by zanele")
    assert "Zanele" not in text and "zanele" not in text and "Dlamini" not in text and "778812" not in text

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

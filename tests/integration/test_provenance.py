"""The record says who approved a write and where it came from: the Provenance names the signed-in user (with a
login) and the conversation; without a login it still says "Clinician"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.ehr.service import CONVERSATION_SYSTEM, USER_SYSTEM, Ehr, conversation_ref
from docgemma.ops.conversation_store import open_store
from docgemma.runtime import build_registry
from docgemma.tools.ehr_tools import record_write_check
from tests.conftest import serve_in_thread

ORDER = "Prescribe metformin 500 mg twice daily for Amina Okafor"


def _assistant(tmp_path: Path) -> tuple[Assistant, Ehr, Any]:
    settings = Settings(data_dir=tmp_path, backend="fake")
    store = open_store(settings)
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    assistant = Assistant(demo_llm(), build_registry(settings, ehr, in_process=True), store.checkpointer, settings,
                          patient_context=ehr.patient_context, write_check=record_write_check(ehr),
                          claims=store.claims)
    return assistant, ehr, store


def _provenance(ehr: Ehr) -> list[dict[str, Any]]:
    pid = ehr.client.search("Patient", [("name", "Okafor")])[0]["id"]
    return [p for p in ehr.compartment(pid) if p["resourceType"] == "Provenance"]


def _verifier(provenance: dict[str, Any]) -> dict[str, Any]:
    return next(a["who"] for a in provenance["agent"] if a["type"]["coding"][0]["code"] == "verifier")


def _conversation(provenance: dict[str, Any]) -> str:
    return str(next(e["what"]["identifier"]["value"] for e in provenance.get("entity", [])
                    if e["what"].get("identifier", {}).get("system") == CONVERSATION_SYSTEM))


@pytest.mark.parametrize("user", ["dr.ada", ""])
def test_the_provenance_names_the_approver_and_the_conversation(tmp_path: Path, user: str) -> None:
    assistant, ehr, store = _assistant(tmp_path)
    try:
        card = assistant.run_turn("conv-1", ORDER)
        assert isinstance(card, dict) and card.get("kind") == "approval"
        assistant.resume("conv-1", {"action": "approve", "card_id": card["card_id"],
                                    **({"approved_by": user} if user else {})})
        [provenance] = _provenance(ehr)
        who = _verifier(provenance)
        if user:
            assert who["identifier"] == {"system": USER_SYSTEM, "value": "dr.ada"}
            assert who["display"].startswith("dr.ada ")
        else:
            assert who["display"] == "Clinician (approved in DocGemma Connect)" and "identifier" not in who
        # The conversation is named by a digest: the id itself (which reopens it in a browser) is not in the record.
        assert _conversation(provenance) == conversation_ref("conv-1") and "conv-1" not in str(provenance)
    finally:
        store.close()


@pytest.fixture
def served_with_login(tmp_path: Path) -> Iterator[tuple[str, Ehr]]:

    from docgemma.ops.metrics import Metrics
    from docgemma.serve import readiness
    from docgemma.ui.page import build_demo
    from docgemma.ui.server import build_app
    from docgemma.workspace import Workspace

    assistant, ehr, store = _assistant(tmp_path)
    metrics = Metrics()
    demo = build_demo(Workspace(assistant, ehr, metrics), "Demo rules · CPU")
    app = build_app(demo, readiness(assistant.settings, store, ehr), metrics, auth=("dr.ada", "s3cret-pass"))
    url, stop = serve_in_thread(app)
    yield url, ehr
    stop()
    store.close()


@pytest.mark.slow
def test_a_signed_in_users_approval_is_theirs_in_the_record(served_with_login: tuple[str, Ehr]) -> None:
    """With a login the Provenance said only "Clinician (approved in DocGemma Connect)"."""
    from gradio_client import Client

    url, ehr = served_with_login
    client = Client(url + "/", auth=("dr.ada", "s3cret-pass"), verbose=False)
    out = client.predict({"text": ORDER, "files": []}, [], None, api_name="/respond")
    out = client.predict("{}", out[0], out[10], api_name="/approve")
    assert "Written to the record" in str(out[0])
    [provenance] = _provenance(ehr)
    assert _verifier(provenance)["identifier"]["value"] == "dr.ada"
    assert len(_conversation(provenance)) == 32

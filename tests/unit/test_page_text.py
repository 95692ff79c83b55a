"""Only true and clinical text on the page (issue 27): no sentence the failure makes untrue, no internal words
(record ids, FHIR references, snake_case names, raw timings) in the steps or the answer."""

from __future__ import annotations

from typing import Any

from docgemma.agent.nodes.synthesize import _all_failed
from docgemma.llm.fake import FakeLLM
from docgemma.tools.registry import default_registry


def _failed(error_type: str) -> dict[str, Any]:
    return {"tool_name": "analyze_image", "tool_label": "image analysis", "status": "error", "error_type": error_type,
            "error": "The image analysis needs a vision model; the current model cannot read images."}


def test_a_failure_retrying_cannot_mend_is_not_followed_by_try_again() -> None:
    """An image on a model without vision ended in "Please try again shortly." while the timeline said
    retrying cannot help."""
    state: Any = {"intent": "TOOL_NEEDED", "tool_results": [_failed("no_vision")], "error_messages": []}
    text, _ = _all_failed(state, FakeLLM(), default_registry()) or ("", "")
    assert "cannot read images" in text and "try again" not in text.lower()
    state["tool_results"] = [_failed("timeout")]
    text, _ = _all_failed(state, FakeLLM(), default_registry()) or ("", "")
    assert "Please try again shortly." in text  # a passing failure may mend


def test_steps_name_no_argument_field_and_say_what_a_query_reads() -> None:
    from docgemma.ui.wording import step_text

    assert step_text("model asked for drug_names; patient_id by rule") == "model asked for drugs; patient by rule"
    assert step_text("drug_mentions: warfarin, action_verbs: check") == "drugs: warfarin, asked to: check"
    assert step_text("arguments: {'resource_type': 'AllergyIntolerance'}") == "reading: allergies"


def test_a_turn_that_consulted_nothing_is_not_routed_as_a_direct_answer_and_headers_carry_no_raw_time() -> None:
    """"Routing: direct answer" stood over a medical question the demo model refused to answer; Gradio printed
    each step's raw "duration" in its header ("(10.0ms)")."""
    from docgemma.agent.assistant import TurnResult
    from docgemma.agent.events import NodeEnd, NodeStart
    from docgemma.ui.messages import apply_event, timeline_markdown

    step: Any = {"node": "synthesize", "label": "Writing the answer", "decision": "medical question not answered",
                 "detail": "", "duration_ms": 10.0, "llm_calls": 0, "prompt_tokens": 0}
    text = timeline_markdown(TurnResult(answer="not answered", timeline=[step]))
    assert "direct answer" not in text and "**Routing:** no look-up" in text
    history = apply_event(apply_event([], NodeStart(node="synthesize", label="Writing the answer")), NodeEnd(event=step))
    assert history[-1]["metadata"]["status"] == "done" and "duration" not in history[-1]["metadata"]

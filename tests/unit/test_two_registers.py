"""Two registers from one typed event stream (issue 46): the clinician's timeline tells what was looked up, for
whom, what was found, decided and written, in clinical words; the engineer's trace (probabilities, rule names,
token counts) stays behind one closed "Technical details" control; the chat keeps the answer, not the steps."""

from __future__ import annotations

import re
from typing import Any

from docgemma.agent.events import NodeEnd, NodeStart, Token, TurnDone, TurnResult
from docgemma.ui.messages import apply_event, final_markdown, timeline_markdown
from docgemma.ui.timeline import DETAILS_START, TECHNICAL, clinician_view
from tests.unit.test_page_text import CLINICIAN_VIEW


def _step(node: str, label: str, decision: str, detail: str, calls: int = 0) -> Any:
    return {"node": node, "label": label, "decision": decision, "detail": detail, "duration_ms": 2.0,
            "llm_calls": calls, "prompt_tokens": 40 * calls}


#: A turn as the demo rules record it (search, then the chart), in the agent's own words.
CHART = [
    _step("input_assembly", "Reading the request", "text only", "patient_names: Amina Okafor, action_verbs: find, check"),
    _step("intent_classify", "Understanding the question", "TOOL_NEEDED",
          "decided by rule and classifier (p=0.97): the request names what it needs (Patient Record, Patient Search); "
          "used: Amina Okafor (patient), her (pronoun) (no model call to decide); first resource: Patient Search"),
    _step("tool_select", "Choosing a resource", "search_patient",
          "decided by rule: the request still needs it; arguments by rule (no model call); "
          "arguments: {'name': 'Amina Okafor'}"),
    _step("tool_execute", "Consulting: Patient Search", "success", "arguments: {'name': 'Amina Okafor'}"),
    _step("result_classify", "Checking the result", "success_partial",
          "decided by rule: data returned; the demo model does not judge clinical data (no model call)"),
    _step("router", "Deciding the next step", "TOOL_SELECT", "task still needs: Patient Record"),
    _step("tool_execute", "Consulting: Patient Record", "error: timeout", "arguments: {'name': 'Amina Okafor'}"),
    _step("router", "Deciding the next step", "ERROR_HANDLER", "task pattern satisfied"),
    _step("error_handler", "Handling a problem", "SKIP", "rule: skip"),
    _step("synthesize", "Writing the answer", "what was found, shown as it was returned: this demo writes no medical "
          "text of its own (no model call: retrieved facts rendered by code; the demo model writes no medical text)",
          "317 words"),
]


def _internal(text: str) -> list[str]:
    return [m.group(0) for pattern in CLINICIAN_VIEW.values() for m in re.finditer(pattern, text)]


def test_the_clinicians_timeline_has_no_engineering_words_and_the_details_keep_them() -> None:
    result = TurnResult(answer="x", timeline=CHART, confidence="high", router_actions=[
        "TOOL_SELECT", "ERROR_HANDLER", "SKIP"], active_patient={"id": "p1", "name": "Amina Okafor"})
    shown = timeline_markdown(result)
    clinical = clinician_view(shown)
    assert not _internal(clinical), _internal(clinical)
    assert "**Patient Search** — looking for: Amina Okafor → found" in clinical
    assert "**Patient Record** — looking for: Amina Okafor → failed: timed out" in clinical
    assert "not tried again" in clinical and "**Written to the record:** nothing" in clinical
    # One control, closed by default (no "open" attribute), holding the whole trace.
    assert shown.count(DETAILS_START) == 1 and f"<summary>{TECHNICAL}</summary>" in shown and " open" not in shown
    trace = shown[shown.index(DETAILS_START):]
    for word in ("p=0.97", "task pattern satisfied", "model calls:", "prompt tokens", "Routing:"):
        assert word in trace, word


def test_the_chat_keeps_the_answer_and_no_step_headings() -> None:
    """Each answer carried 3-9 collapsed step headings; now one pending line says the step under way while the
    turn runs, and the answer replaces it."""
    history: list[Any] = [{"role": "user", "content": "Find Amina Okafor"}]
    for e in CHART:
        history = apply_event(history, NodeStart(node=e["node"], label=e["label"]))
        assert sum(1 for m in history if m.get("metadata")) == 1 and history[-1]["metadata"]["status"] == "pending"
        history = apply_event(history, NodeEnd(event=e))
    history = apply_event(history, Token(text="Patients found"))
    history = apply_event(history, TurnDone(result=TurnResult(answer="Patients found", timeline=CHART)))
    assert [m for m in history if m.get("metadata")] == [] and history[-1]["content"].startswith("Patients found")


def test_after_approving_the_answer_ends_with_the_write() -> None:
    """After approving, the end of the answer showed "Patients found" (the search's facts), not the write."""
    write = "Prescribed: amoxicillin 500 mg three times daily [MedicationRequest/abc] \nAs written: Drug: amoxicillin"
    text = final_markdown(TurnResult(answer="**Patients found**\n\n- Amina Okafor, born 1964-03-12", writes=[write]))
    assert text.index("Patients found") < text.index("Written to the record") and "amoxicillin 500 mg" in text


def test_a_greeting_turn_says_nothing_of_model_calls_to_the_clinician() -> None:
    """A closing turn's timeline said "a greeting (no model call)" and then "1 model call": the count is the
    node's ("to decide"), and the clinician's view says neither."""
    steps = [_step("intent_classify", "Understanding the question", "DIRECT",
                   "decided by rule and classifier (p=1.00): a greeting or thanks (no model call to decide)"),
             _step("synthesize", "Writing the answer", "a greeting and what this assistant can do (greeting line written "
                   "by the demo model, checked by code: nothing clinical; the list of what it can do written by code)",
                   "56 words", calls=1)]
    shown = timeline_markdown(TurnResult(answer="Hello.", timeline=steps))
    clinical = clinician_view(shown)
    assert "model call" not in clinical and "**Request** — no look-up needed (a greeting or thanks)" in clinical
    assert "no model call to decide" in shown and "**model calls:** 1" in shown


def test_on_a_phone_the_timeline_is_one_tap_from_the_answer() -> None:
    """On a phone the timeline sat about 3,400 px down, below the examples: a link under the chat jumps to it
    (shown on narrow screens only; the wide layout has it beside the chat)."""
    import gradio as gr

    from docgemma.ui.page import TIMELINE_LINK, layout
    from docgemma.ui.style import CSS

    with gr.Blocks() as blocks:
        page = layout()
    links = [c for c in blocks.blocks.values() if getattr(c, "elem_id", None) == "timeline-link"]
    assert len(links) == 1 and links[0].value == TIMELINE_LINK and "(#timeline)" in TIMELINE_LINK
    assert page.timeline.elem_id == "timeline"
    wide = CSS[CSS.index("@media (min-width: 701px)"):]
    assert "#timeline-link" in wide[:wide.index("}")]


def test_why_a_rule_stood_alone_stays_in_the_technical_details() -> None:
    """The fail-safe rule's "nothing is done or written on this request, or an id that is no patient's is said"
    stood in the clinician's view; the reason the rule gives is what the clinician reads."""
    head = ("decided by rule: nothing is done or written on this request, or an id that is no patient's is said: "
            "the write asked for is negated (no model call to decide)")
    steps = [_step("intent_classify", "Understanding the question", "DIRECT", head)]
    shown = timeline_markdown(TurnResult(answer="x", timeline=steps))
    clinical = clinician_view(shown)
    assert "**Request** — no look-up needed (the write asked for is negated)" in clinical
    assert not _internal(clinical) and "nothing is done or written on this request" in shown


def test_the_decisions_answer_is_a_message_of_its_own_after_the_cards_line_as_the_page_sends_it_back() -> None:
    """Found by the fresh-clone CI after merging: the page (and gradio_client) send the chat back with each message's
    content as Gradio's blocks, and after the card's line the decision's answer was appended to that line —
    'can only concatenate list (not "str") to list' on every approval through the Gradio API."""
    pointer = "**Approval needed before writing to the record:** Prescription for Grace Mensah"
    history = [{"role": "user", "content": [{"type": "text", "text": "Prescribe paracetamol 500 mg"}]},
               {"role": "assistant", "content": [{"type": "text", "text": pointer}]}]
    out = apply_event(history, Token("Written to the record."))
    assert len(out) == 3 and out[1]["content"] == history[1]["content"]
    assert out[2] == {"role": "assistant", "content": "Written to the record."}
    more = apply_event([*out[:2], {"role": "assistant", "content": [{"type": "text", "text": "Written"}]}],
                       Token(" to the record."))
    assert more[-1]["content"] == "Written to the record."


def _clinical(steps: list[Any]) -> str:
    return clinician_view(timeline_markdown(TurnResult(answer="x", timeline=steps)))


def test_who_wrote_the_answer_stays_in_the_technical_details_even_with_a_reason_in_brackets() -> None:
    """The answer's line is what was answered; who wrote it (code, the demo model) and why a line was not shown,
    which may quote a failure with its own brackets, is the trace's."""
    decision = "a greeting and what this assistant can do (written by code: the model failed: backend (port 8080) down)"
    shown = timeline_markdown(TurnResult(answer="x", timeline=[_step("synthesize", "Writing the answer", decision, "")]))
    assert "**Answer** — a greeting and what this assistant can do\n" in clinician_view(shown) + "\n"
    assert "the model failed: backend (port 8080) down" in shown and not _internal(clinician_view(shown))


def test_a_request_the_model_classified_is_not_told_as_one_the_clinician_is_offered_choices_for() -> None:
    """Every request no rule was sure of read "not certain what was asked: you are offered choices", also when a
    model fit to judge then classified it and the turn went on to its look-ups (no choice was offered)."""
    unsure = "unsure: no rule decided; classifier said Drug Safety Report (p=0.41)"
    read = _clinical([_step("intent_classify", "Understanding the question", "TOOL_NEEDED",
                            f"{unsure}; model asked. Boxed warnings for dofetilide (hint: Drug Safety Report)", 1)])
    assert "**Request** — read by the model: Boxed warnings for dofetilide (suggested: Drug Safety Report)" in read
    direct = _clinical([_step("intent_classify", "Understanding the question", "DIRECT",
                              f"{unsure}; model asked. What hypertension is", 1)])
    assert "**Request** — no look-up needed, as the model read it: What hypertension is" in direct
    failed = _clinical([_step("intent_classify", "Understanding the question", "TOOL_NEEDED",
                              f"{unsure}; model asked. model output unusable; intent decided from the extracted "
                              "entities. warfarin for Grace?", 1)])
    assert "**Request** — not certain what was asked; read from the drugs and patients it names" in failed
    # Not asked (a demo model): the answer's line says whether the closest actions are offered.
    demo = _clinical([_step("intent_classify", "Understanding the question", "not decided",
                            f"{unsure}; the current model is not fit to judge it: not asked (no model call), the "
                            "clinician is asked"),
                      _step("synthesize", "Writing the answer", "not certain what was asked: nothing was guessed (no "
                            "model call: no rule was sure and the demo model was not asked)", "40 words")])
    assert "**Request** — not certain what was asked\n" in demo and "offered" not in demo
    assert "**Answer** — not certain what was asked: nothing was guessed" in demo
    for clinical in (read, direct, failed, demo):
        assert not _internal(clinical), _internal(clinical)


def test_the_clinicians_timeline_speaks_to_the_clinician() -> None:
    """"the clinician picked a patient", "declined by the clinician", "the clinician asks for nothing" were read
    by the clinician."""
    steps = [_step("intent_classify", "Understanding the question", "TOOL_NEEDED",
                   "decided by rule: the clinician picked a patient from the list offered: the request names what it "
                   "needs (Patient Record) (no model call to decide)"),
             _step("tool_execute", "Consulting: Prescription", "error: declined",
                   "declined by the clinician; arguments: {'medication_name': 'amoxicillin'}"),
             _step("intent_classify", "Understanding the question", "DIRECT",
                   "decided by rule and classifier (p=0.99): the clinician asks for nothing to be done (no model call "
                   "to decide)")]
    clinical = _clinical(steps)
    assert "**Request** — you picked a patient from the list offered" in clinical
    assert "**Prescription** — declined by you; medication: amoxicillin → declined by you: nothing written" in clinical
    assert "no look-up needed (you ask for nothing to be done)" in clinical and "the clinician" not in clinical

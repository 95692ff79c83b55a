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
    # The entry a label removal changes is code's pin, not a value: it read "entry: allergy/_history/1" (issue 42 walk).
    pinned = "AllergyIntolerance/73738ca2-e1f0-5805-a778-51ac4f0cd7af/_history/1"
    assert step_text(f"arguments: {{'substance': 'penicillin', 'entry': '{pinned}'}}") == "substance: penicillin"
    assert step_text("arguments: {'unread': 'IV push'}") == "words no field took: IV push"


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
    # The step under way is one pending line without a raw "duration"; the timeline gives each step's time.
    assert history[-1]["metadata"]["status"] == "pending" and "duration" not in history[-1]["metadata"]


EMBEDDED = "SmolLM2-135M-Instruct (embedded CPU demo model — not clinically meaningful)"
_INTERNAL = {
    "record id": r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
    "FHIR reference": r"\b(?:MedicationRequest|AllergyIntolerance|Observation|Condition|Patient|Encounter|"
                      r"DocumentReference|Media|CarePlan|Immunization)/[\w-]",
    "code identifier": r"(?<![\w/.=-])[a-z][a-z0-9]*_[a-z0-9_]+\b",
    "raw timing": r"\(\d+(?:\.\d+)?\s?ms\)",
    "lab code name": r"\[(?:Mass|Moles|Enzymatic|Units|#|Entitic|Volume|Score)[^\]]*\]|sq M\.predicted|\.total\b",
    "(s) plural": r"\w\(s\)",
    "inferred link": r"\[inferred link\]",
    "unit code": r"\d (?:Cel|mm\[Hg\]|kg/m2\b|10\*\d|m?\[IU\]|\[degF\])|\{(?:score|INR|1\.73_m2)\}",
}
#: The engineer's register, kept out of the clinician's view and behind "Technical details" (issue 46; grow it from
#: what reviews find).
ENGINEERING = {
    "probability": r"\(p=\d|\bp=0\.\d",
    "rule's words": r"decided by rule|task pattern satisfied|task still needs|\bclassifier\b",
    "model calls": r"model calls?\b|prompt tokens|decoded tokens",
    "entity list": r"\basked to: ",
    "routing": r"Routing:|handle the failure|stop trying this resource|consult the next resource",
    "fail-safe wording": r"nothing is done or written on this request|code acts on requests",
    "intent": r"needs a look-up|answer directly",
    "step heading": r"Reading the request|Understanding the question|Choosing a resource|Deciding the next step",
    # Who wrote or decided, in the engineer's words ("answered by code", "arguments by rule", "no rule was sure"):
    # the clinician reads what was answered, the trace who did it. "by rule" alone: "decided by rule" is above.
    "who decided": r"\bby code\b|(?<!decided )\bby rule\b|\bno rule (?:was sure|decided)\b|\brule said\b",
    # The timeline's "demo model" clauses ("(demo model has no vision)", "the demo model was not asked"); the
    # answer's own "a small demo model that runs without a GPU", "this demo model does not guess" and the model's
    # name ("SmolLM2-135M-Instruct (embedded CPU demo model — …)") say what the clinician is talking to, and stay.
    "demo model": r"(?<!a small )(?<!this )(?<!CPU )\bdemo model\b",
    # The agent's resources ("every resource failed", "no resource chosen", "which resource to consult"), not a
    # clinical "resource-limited setting".
    "resource": r"\b(?:which|every|first|next|no|this) resources?\b(?![\w-])|\bresources? (?:chosen|failed)\b",
    # The result check's words, not a clinical "classified as stage 3".
    "result check": r"classified from the tool|\bthe tool's status\b|model classified the result|classified as "
                    r"partial",
    # The graph's words, not a lymph or AV node.
    "graph": r"\b(?:synthesize|router|graph|agent's|each) nodes?\b|\btool calls?\b",
    "accounting": r"nothing to account for|\bfirst resource:",
}
CLINICIAN_VIEW = {**_INTERNAL, **ENGINEERING}


def _embedded(monkeypatch: Any) -> None:
    """The page on the embedded default model's mode (no vision, no medical text), without loading it: the
    demo rules' answers under SmolLM2's name and flags."""
    import dataclasses

    import tests.unit.test_page_session as session
    from docgemma.agent import demo_llm as rules

    def embedded(tools: Any = None) -> FakeLLM:
        return dataclasses.replace(rules.demo_llm(tools), name=EMBEDDED, supports_images=False)

    monkeypatch.setattr(session, "demo_llm", embedded)


def _shown(app: Any, out: dict[Any, Any], before: int) -> str:
    """What a clinician reads of one turn: the chat's new messages (with any step header), the timeline without
    its closed technical details, the panel."""
    import re

    from docgemma.ui.timeline import clinician_view

    messages = out.get(app.page.chatbot) or []
    text = "\n".join(f"{(m.get('metadata') or {}).get('title', '')}\n{m['content']}" for m in messages[before:]
                     if isinstance(m.get("content"), str))
    text += "\n" + clinician_view(str(out.get(app.page.timeline, ""))) + "\n" + str(out.get(app.page.patient_md, ""))
    # A link's address is not page text; an escaped one (\[title\](https://…)) is shown raw, so it is.
    return re.sub(r"(?<!\\)\]\([^)]*\)", "]", text)


def scan(app: Any, prompts: list[str], image: str) -> list[tuple[str, str, str]]:
    """Every prompt in order in one conversation (a write card approved, a severe one rejected): each internal word
    and untrue sentence found in what the page shows, as (prompt, what, text)."""
    import re

    thread = "web-" + "7" * 32
    found: list[tuple[str, str, str]] = []
    technical = ""
    for prompt in prompts:
        history = app.on.restore(thread)[app.page.chatbot]
        files = [image] if "image" in prompt else []
        out = app.last(app.on.respond({"text": prompt, "files": files}, history, thread, None))
        shown = _shown(app, out, len(history))
        card = out.get(app.page.card_ref)
        if card:
            approvable = out[app.page.approve].get("interactive", True) if isinstance(out[app.page.approve], dict) else True
            decided = app.last(app.on.decide("approve" if approvable else "reject", "{}", out[app.page.chatbot], thread,
                                             card))
            shown += _shown(app, decided, len(out[app.page.chatbot]))
            technical += str(decided.get(app.page.timeline, ""))
        technical += str(out.get(app.page.timeline, ""))
        steps = [m for m in out[app.page.chatbot][len(history):] if m.get("metadata")]
        if steps:  # issue 46: each answer carried 3-9 collapsed step headings; the timeline tells the steps
            found.append((prompt, "step in the chat", str(steps[0]["metadata"].get("title"))))
        for what, pattern in CLINICIAN_VIEW.items():
            found += [(prompt, what, m.group(0)) for m in re.finditer(pattern, shown)]
        if "retrying cannot help" in shown and "try again shortly" in shown:
            found.append((prompt, "untrue", "try again shortly"))
        if "image not analysed" in shown and "from the image findings" in shown:
            found.append((prompt, "untrue", "answered from the image findings"))
        if "not answered" in shown and "Routing:** direct answer" in shown:
            found.append((prompt, "untrue", "Routing: direct answer"))
    # The engineer's register is not lost: the technical details still hold it.
    found += [("(all)", "not in the technical details", what) for what in ("probability", "rule's words", "model calls")
              if not re.search(ENGINEERING[what], technical)]
    return found


def uploads_with_image(tmp_path: Any, monkeypatch: Any) -> str:
    """Gradio's upload folder with a grey 64×64 PNG in it: the image the image prompt attaches."""
    from PIL import Image

    uploads = tmp_path / "gradio"
    uploads.mkdir()
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(uploads))
    image = uploads / "xray.png"
    Image.new("L", (64, 64), 128).save(image)
    return str(image)


def test_every_example_prompts_page_text_is_clinical_and_true(tmp_path: Any, monkeypatch: Any) -> None:
    """Every example prompt of the page, in order in one conversation (a write card approved, a severe one
    rejected), on the embedded model's mode: no record id, FHIR reference, code identifier, raw timing, LOINC
    long name, "(s)" or "[inferred link]" in what the page shows, none of the engineer's words (probabilities,
    rule names, token counts, routing: issue 46) outside the closed technical details, which still hold them, no
    step heading in the chat, and no sentence the turn makes untrue. The same
    scan on the real embedded model: tests/e2e/test_page_text_embedded.py."""
    from docgemma.ui.page import EXAMPLES
    from tests.unit.test_page_session import App

    _embedded(monkeypatch)
    image = uploads_with_image(tmp_path, monkeypatch)
    app = App.start(tmp_path)
    found = scan(app, list(EXAMPLES), image)
    app.store.close()
    assert not found, found


#: Turns the examples do not cover, each answered by code with its own timeline line (issue 46: "a thanks or
#: goodbye: answered by code", "no rule was sure and the demo model was not asked", "greeting (demo model: written by
#: code)", "(demo model has no vision)", "every resource failed" reached the clinician's view).
BY_CODE = ["hello", "what can you do?", "thanks, that's all", "don't prescribe anything yet",
           "He is NOT allergic to latex, please record that", "Bonjour, je voudrais voir le dossier",
           "Check ICD I10 coding guidance", "What is hypertension?", "Find patient Amina Okafor and check her chart",
           "What were her last kidney function results?", "Check FDA warnings for dofetilide", "What does this image show?"]


def test_the_answers_code_writes_are_told_in_clinical_words(tmp_path: Any, monkeypatch: Any) -> None:
    """Each answer code writes (a closing, an acknowledgement, a negated write, another language, an unsure request,
    a greeting, a medical question or an image the demo cannot answer, the retrieved facts, a failed look-up) is
    told in the clinician's words; who wrote it stays in the technical details."""
    from tests.unit.test_page_session import App

    _embedded(monkeypatch)
    image = uploads_with_image(tmp_path, monkeypatch)
    app = App.start(tmp_path)
    found = scan(app, BY_CODE, image)
    app.store.close()
    assert not found, found


def test_a_reload_shows_the_same_chat_and_timeline_with_its_time(tmp_path: Any, monkeypatch: Any) -> None:
    """After a reload the timeline's time read 0.0 s. The steps are the timeline's, not the chat's (issue 46):
    neither the live nor the reopened chat carries a step heading."""
    import itertools
    import types

    from docgemma.agent import assistant
    from tests.unit.test_page_session import App

    clock = itertools.count(0.0, 1.25)  # each reading of the turn's clock 1.25 s later: a turn takes 1.2 s
    monkeypatch.setattr(assistant, "time", types.SimpleNamespace(perf_counter=lambda: next(clock)))

    app = App.start(tmp_path)
    thread = "web-" + "8" * 32
    live: list[list[str]] = []
    for text in ("Find patient Amina Okafor and check her chart", "What were her last kidney function results?"):
        history = app.on.restore(thread)[app.page.chatbot]
        out = app.last(app.on.respond({"text": text, "files": []}, history, thread, None))
        live.append([str(m["metadata"]["title"]) for m in out[app.page.chatbot][len(history):] if m.get("metadata")])
    reopened = app.on.restore(thread)
    titles = [str(m["metadata"]["title"]) for m in reopened[app.page.chatbot] if m.get("metadata")]
    assert titles == live[0] + live[1] == []
    assert "Consulting: Patient Data Query** — success" in out[app.page.timeline]
    assert "**time:** 1.2 s" in out[app.page.timeline]
    assert reopened[app.page.timeline] == out[app.page.timeline]  # the same figures, the time included
    app.store.close()


def test_the_cards_reference_is_sent_with_a_click_but_not_shown() -> None:
    """The card's id stood in a visible "Card" field."""
    import gradio as gr

    from docgemma.ui.page import layout

    with gr.Blocks():
        page = layout()
    assert page.card_ref.visible is False and page.card_ref.elem_id == "card-ref"

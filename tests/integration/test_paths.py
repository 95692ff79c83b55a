"""Every path of the graph with the scripted fake model: calls, prompts, routing and output."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver
from PIL import Image

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.events import Token
from docgemma.config import Settings
from docgemma.llm.fake import FakeLLM
from docgemma.tools.outcome import failure, success
from tests.conftest import Tools, assess, intent, retry, select


def label_args(drug: str) -> dict[str, Any]:
    """What the safety tool receives for a general question about one drug (no topic, no other drug)."""
    return {"drug_name": drug, "topic": None, "other_drugs": None}


SAFETY = success({"boxed_warning": "Torsade de pointes; 3 days of ECG monitoring"}, [{"title": "Tikosyn label", "url": "https://example.org/l"}])


def done(outcome: object) -> TurnResult:
    assert isinstance(outcome, TurnResult), f"expected a finished turn, got {outcome!r}"
    return outcome


def test_general_question_is_direct_by_rule_with_one_model_call(fake: FakeLLM, assistant: Assistant) -> None:
    fake.enqueue("Hypertension is persistently raised arterial pressure.")
    r = done(assistant.run_turn("t", "What is hypertension?"))
    assert r.path == ["input_assembly", "intent_classify", "synthesize"]
    assert r.llm_calls == 1 and len(fake.calls) == 1
    assert "decided by rule" in r.timeline[1]["detail"] and r.timeline[1]["llm_calls"] == 0
    assert fake.calls[0].temperature == 0.5 and fake.calls[0].max_tokens == 256
    assert r.answer.startswith("Hypertension") and r.sources == []


def test_direct_path_asks_the_model_when_code_is_unsure(fake: FakeLLM, assistant: Assistant) -> None:
    fake.enqueue(intent("DIRECT", "hypertension in the elderly"), "Targets are individualised.")
    r = done(assistant.run_turn("t", "Hypertension targets in frail elderly people"))
    assert r.path == ["input_assembly", "intent_classify", "synthesize"]
    assert r.llm_calls == 2 and len(fake.calls) == 2
    assert fake.calls[0].temperature == 0.0 and fake.calls[0].max_tokens == 256
    assert "decided by rule" not in r.timeline[1]["detail"]


def test_single_tool_path_decided_by_rule(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    tools.queue("check_drug_safety", SAFETY)
    fake.enqueue(assess(), "Dofetilide [check_drug_safety] carries a boxed warning for torsade de pointes.")
    r = done(assistant.run_turn("t", "Check FDA warnings for dofetilide"))
    assert r.path == ["input_assembly", "intent_classify", "tool_select", "tool_execute",
                      "result_classify", "router", "synthesize"]
    assert r.llm_calls == 2 and tools.calls == [("check_drug_safety", label_args("dofetilide"))]
    select_event = r.timeline[2]
    assert select_event["llm_calls"] == 0 and "decided by rule" in select_event["detail"]
    assert "arguments by rule" in select_event["detail"]
    synth = fake.calls[-1].prompt
    assert "[Drug Safety Report]" in synth and "check_drug_safety" not in synth
    # Brief variant: said in the answer's own instructions, after the prefix every call of the turn shares.
    assert synth.split("---")[-1].lstrip().startswith("Include only the most critical findings")
    assert "check_drug_safety" not in r.answer and "Drug Safety Report" in r.answer
    assert r.confidence == "high" and r.sources[0]["title"] == "Tikosyn label" and r.router_actions == ["SYNTHESIZE"]


def test_single_tool_path_asks_the_model_when_code_is_unsure(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    tools.queue("check_drug_safety", SAFETY)
    fake.enqueue(intent(tool="check_drug_safety"), select("check_drug_safety"), {"drug_name": "zyxomab"},
                 assess(), "Answer.")
    r = done(assistant.run_turn("t", "Is zyxomab OK with long QT"))
    assert r.llm_calls == 5 and tools.calls == [("check_drug_safety", label_args("zyxomab"))]
    stage1, stage2 = fake.calls[1], fake.calls[2]
    assert "full clinical summary" in stage1.prompt and "What are the FDA boxed warnings for amiodarone?" in stage1.prompt
    assert "drug safety" in stage2.prompt and "search_patient" not in stage2.prompt
    assert stage2.schema is not None and list(stage2.schema.model_fields) == ["drug_name"]


def test_multi_tool_loop_selects_one_tool_at_a_time(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    tools.queue("search_patient", success({"matches": [{"id": "jsm-001", "name": "John Smith"}]}))
    tools.queue("get_patient_chart", success({"patient": {"id": "jsm-001", "name": "John Smith"}, "medications": ["metformin"]}))
    tools.queue("check_drug_safety", SAFETY)
    fake.enqueue(assess(), assess(), assess(), "Summary.")
    r = done(assistant.run_turn("t", "Find patient John Smith, check his chart, and verify metformin safety"))
    assert [c[0] for c in tools.calls] == ["search_patient", "get_patient_chart", "check_drug_safety"]
    assert tools.calls[0][1] == {"name": "John Smith", "birth_date": None}
    assert tools.calls[1][1] == {"patient_id": "jsm-001"}  # the patient the search found
    assert r.router_actions == ["TOOL_SELECT", "TOOL_SELECT", "SYNTHESIZE"] and r.llm_calls == 4  # budget 4+N = 7
    assert all("decided by rule" in e["detail"] for e in r.timeline if e["node"] == "tool_select")
    assert r.active_patient == {"id": "jsm-001", "name": "John Smith"}
    assert not any("plan" in (c.schema.__name__.lower() if c.schema else "") for c in fake.calls)


def test_retry_same_then_success(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    tools.queue("check_drug_safety", failure("timeout"), SAFETY)
    fake.enqueue(retry("retry_same"), assess(), "Amiodarone warnings.")
    r = done(assistant.run_turn("t", "Check FDA warnings for amiodarone"))
    assert r.router_actions == ["ERROR_HANDLER", "RETRY", "SYNTHESIZE"]
    assert r.path.count("tool_execute") == 2 and r.llm_calls == 3  # the error was classified in code
    timeout_classify = next(e for e in r.timeline if e["node"] == "result_classify")
    assert timeout_classify["llm_calls"] == 0 and timeout_classify["decision"] == "error_retryable"
    retry_prompt = fake.calls[0].prompt
    assert "temporarily unavailable" in retry_prompt and "Timeout" not in retry_prompt
    assert "temporarily unavailable" not in fake.calls[-1].prompt  # recovered: no stale error in the answer


def test_retry_different_args_reruns_stage_two_only(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    tools.queue("search_medical_literature", failure("not_found"), success({"results": [{"title": "A trial"}]}))
    fake.enqueue(retry("retry_different_args"), {"query": "zyxoplasty long-term outcomes"}, assess(), "Evidence summary.")
    r = done(assistant.run_turn("t", "Find studies on zyxoplasty outcomes"))
    assert [c[1]["query"] for c in tools.calls] == ["zyxoplasty outcomes", "zyxoplasty long-term outcomes"]
    assert "previous attempt" in fake.calls[1].prompt and r.router_actions[-1] == "SYNTHESIZE"


def test_retries_are_bounded_then_skipped_without_model_memory(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    tools.queue("check_drug_safety", failure("timeout"))
    fake.enqueue(retry(), retry())
    r = done(assistant.run_turn("t", "Check FDA warnings for amiodarone"))
    assert len(tools.calls) == 3 and r.router_actions[-1] == "SKIP"
    assert r.path[-1] == "synthesize" and r.timeline[-1]["llm_calls"] == 0
    assert "I have not answered from general knowledge" in r.answer and r.confidence == "low"
    assert fake.pending == 0


def test_multiple_matches_ask_the_user(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    matches = [{"id": f"jw-00{i}", "name": "James Wilson", "birth_date": f"19{60 + i}-01-01"} for i in range(1, 4)]
    tools.queue("search_patient", success({"matches": matches}))
    r = done(assistant.run_turn("t", "Search for patient James Wilson"))
    assert r.router_actions == ["ASK_USER"] and "RETRY" not in r.router_actions
    assert r.clarification and "I found 3 patients matching 'James Wilson'" in r.clarification and "jw-002" in r.answer
    assert r.timeline[-1]["llm_calls"] == 0 and r.active_patient is None


def test_missing_patient_id_asks_the_user(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    r = done(assistant.run_turn("t", "Pull up her chart"))
    assert tools.calls == [] and r.router_actions == ["ERROR_HANDLER", "ASK_USER"]
    assert "I need a patient ID" in r.answer


def test_max_steps_stops_the_loop(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    tools.queue("search_patient", success({"matches": [{"id": "mg-1", "name": "Maria Garcia"}]}))
    fake.enqueue(assess(), assess(), assess(), assess(), "Done.")
    r = done(assistant.run_turn("t", "Find patient Maria Garcia, review her chart, check metformin safety, "
                                     "check interactions between metformin and lisinopril, and find trials for diabetes"))
    assert len(tools.calls) == 4 and r.router_actions[-1] == "SYNTHESIZE"
    assert "step limit" in [e for e in r.timeline if e["node"] == "router"][-1]["detail"]


def test_duplicate_call_stops_the_loop(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    tools.queue("check_drug_safety", SAFETY)
    tools.queue("search_medical_literature", success({"results": [{"title": "A trial"}]}))
    fake.enqueue(intent(), select("search_medical_literature"), {"query": "dofetilide"}, assess(), "Answer.")
    # (Not "… and renal dosing": the label's renal dosing is a look-up the rules now ask for, a second tool.)
    r = done(assistant.run_turn("t", "Anything on dofetilide and torsades"))
    assert len(tools.calls) == 1
    # The router's duplicate check itself: the same successful call twice ends the loop.
    from docgemma.agent.nodes.router import is_duplicate_call

    call = {"tool_name": "check_drug_safety", "args": {"drug_name": "dofetilide"}, "status": "success"}
    assert is_duplicate_call({"tool_results": [call, call]}) and r.router_actions[-1] == "SYNTHESIZE"


def test_unconfigured_tool_flows_through_the_error_path(fake: FakeLLM) -> None:
    from docgemma.tools.registry import default_registry

    assistant = Assistant(fake, default_registry())
    r = done(assistant.run_turn("t", "Find recruiting trials for heart failure"))
    assert r.router_actions == ["ERROR_HANDLER", "SKIP"] and "not available in this installation" in r.answer
    assert len(fake.calls) == 0  # chosen by rule; no classification, retry or synthesis call


def test_write_waits_for_approval_then_writes_once(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    args = {"patient_id": "abc-123", "medication_name": "metformin", "dosage": "500 mg", "frequency": "twice daily"}
    fake.enqueue(assess(), "Order placed.")
    request = assistant.run_turn("t", "Prescribe metformin 500mg twice daily for abc-123")
    assert isinstance(request, dict) and request["tool"] == "prescribe_medication"
    assert "Medication name: metformin" in request["preview"] and tools.calls == []
    assert assistant.pending_approval("t") is not None
    blocked = done(assistant.run_turn("t", "something else"))
    assert "pending Prescription" in blocked.answer and tools.calls == []
    r = done(assistant.resume("t", {"action": "approve"}))
    assert tools.calls == [("prescribe_medication", {**args, "duration": None, "indication": None, "notes": None,
                                                     "unread": None})]
    assert "approved by the clinician" in r.timeline[3]["detail"]
    assert assistant.pending_approval("t") is None
    again = done(assistant.resume("t", {"action": "approve"}))
    assert "no pending action" in again.answer and len(tools.calls) == 1


def test_rejected_write_changes_nothing(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    assert isinstance(assistant.run_turn("t", "Record a penicillin allergy (hives) for abc-123"), dict)
    r = done(assistant.resume("t", {"action": "reject"}))
    assert tools.calls == [] and r.router_actions[-1] == "SKIP"
    assert r.answer == "Nothing was written to the record: you declined the Allergy Documentation."


def test_edited_write_uses_the_edited_arguments(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    fake.enqueue(assess(), "Allergy recorded.")
    assistant.run_turn("t", "Record a penicillin allergy (hives) for abc-123")
    card = assistant.resume("t", {"action": "edit", "args": {"severity": "severe"}})
    assert isinstance(card, dict) and card["args"]["severity"] == "severe" and not tools.calls  # a new card first
    done(assistant.resume("t", {"action": "approve"}))
    assert tools.calls[0][1]["severity"] == "severe"


def test_active_patient_and_history_survive_a_restart(tmp_path: Path, tools: Tools) -> None:
    def app(fake: FakeLLM) -> Assistant:
        saver = SqliteSaver(sqlite3.connect(tmp_path / "c.sqlite", check_same_thread=False))
        return Assistant(fake, tools.registry(), saver)

    tools.queue("search_patient", success({"matches": [{"id": "mg-101", "name": "Maria Garcia"}]}))
    first = FakeLLM([assess(), "Found Maria Garcia."])
    done(app(first).run_turn("conv", "Search for patient Maria Garcia"))
    second = FakeLLM([assess(), "Chart."])
    r = done(app(second).run_turn("conv", "Pull up her chart"))
    assert tools.calls[-1] == ("get_patient_chart", {"patient_id": "mg-101"})
    assert "Maria Garcia (ID mg-101)" in second.calls[-1].prompt and "Found Maria Garcia." in second.calls[-1].prompt
    assert r.active_patient == {"id": "mg-101", "name": "Maria Garcia"}
    other = FakeLLM(["Hi."])
    done(app(other).run_turn("another-conversation", "Hello"))
    assert "Maria" not in other.calls[0].prompt  # nothing crosses threads


def test_greeting_gets_capabilities_and_topic_suggestions(fake: FakeLLM, assistant: Assistant) -> None:
    fake.enqueue("Hello! How can I help?")
    r = done(assistant.run_turn("t", "Hello"))
    assert "I can help with" in r.answer and len(r.follow_ups) == 3 and fake.calls[0].max_tokens == 96


def test_bad_inputs_get_clear_messages_and_the_session_goes_on(fake: FakeLLM, tools: Tools) -> None:
    assistant = Assistant(fake, tools.registry(), settings=Settings(max_message_chars=40))
    empty = done(assistant.run_turn("t", "   "))
    assert "Please type a question" in empty.answer and fake.calls == []
    fake.enqueue("Answer.")
    long = done(assistant.run_turn("t", "What is hypertension? " * 10))
    assert "only the first 40 were read" in long.answer and len(fake.calls[0].prompt) < 2000
    fake.enqueue("Answer.")
    r = done(assistant.run_turn("t", "What does this show?", {"filename": "scan.png", "data": b"not an image at all"}))
    assert "not a supported image" in r.answer and r.answer.endswith("Answer.")
    calls = len(fake.calls)
    r = done(assistant.run_turn("t", "Thanks"))
    # A thanks is a closing, answered by code (tests/integration/test_closings.py).
    assert r.answer.startswith("You're welcome") and len(fake.calls) == calls


def test_image_goes_to_the_vision_call(fake: FakeLLM, assistant: Assistant) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16)).save(buffer, format="PNG")
    fake.enqueue({"modality": "chest_xray", "findings": ["No pneumothorax"], "confidence": "medium"},
                 "No pneumothorax is seen.")
    r = done(assistant.run_turn("t", "", {"filename": "cxr.png", "data": buffer.getvalue()}))
    assert fake.calls[0].images == 1 and fake.calls[0].temperature == 0.3
    assert "No pneumothorax" in fake.calls[1].prompt and r.intent == "DIRECT"
    assert r.entities["has_image"] is True


def test_model_without_vision_says_so(tools: Tools) -> None:
    fake = FakeLLM(["Answer."], supports_images=False, name="SmolLM2")
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16)).save(buffer, format="PNG")
    r = done(Assistant(fake, tools.registry()).run_turn("t", "What is this?", {"filename": "x.png", "data": buffer.getvalue()}))
    assert "needs a vision model" in r.answer and all(c.images == 0 for c in fake.calls)


def test_unusable_model_output_falls_back_deterministically(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    tools.queue("check_drug_safety", SAFETY)
    fake.enqueue('{"intent": "TOOL_', select("check_drug_safety"), '{"drug_name":', "not json", "Answer.")
    r = done(assistant.run_turn("t", "Is dofetilide OK with long QT"))
    assert r.intent == "TOOL_NEEDED" and tools.calls == [("check_drug_safety", label_args("dofetilide"))]
    assert "model output unusable" in r.timeline[1]["detail"]


def test_stream_emits_node_events_and_tokens(fake: FakeLLM, assistant: Assistant) -> None:
    fake.enqueue("one two three four five six seven")
    events = list(assistant.stream_turn("t", "What is a stroke?"))
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "NodeStart" and kinds[-1] == "TurnDone"
    tokens = "".join(e.text for e in events if isinstance(e, Token))
    assert tokens.strip() == "one two three four five six seven" and kinds.count("Token") >= 2


def test_picking_a_patient_from_the_list_resumes_the_request(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    matches = [{"id": "jw-001", "name": "James Wilson", "birth_date": "1961-01-01"},
               {"id": "jw-002", "name": "James Wilson", "birth_date": "1975-06-02"}]
    tools.queue("search_patient", success({"matches": matches}))
    first = done(assistant.run_turn("t", "Find patient James Wilson and check his chart"))
    assert first.router_actions == ["ASK_USER"]
    assert tools.calls == [("search_patient", {"name": "James Wilson", "birth_date": None})]
    tools.queue("get_patient_chart", success({"patient": {"id": "jw-002", "name": "James Wilson"}}))
    fake.enqueue(assess(), "Chart of the second James Wilson.")
    r = done(assistant.run_turn("t", "the second one"))
    assert tools.calls[-1] == ("get_patient_chart", {"patient_id": "jw-002"}) and len(tools.calls) == 2
    assert r.active_patient == {"id": "jw-002", "name": "James Wilson"}
    assert "Selected James Wilson (born 1975-06-02, ID jw-002)" in r.answer


def test_a_pick_by_name_and_birth_year_settles_a_search(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    matches = [{"id": "mg-1", "name": "Maria Elena Garcia", "birth_date": "1955-03-01"},
               {"id": "mg-2", "name": "Maria Garcia", "birth_date": "1970-09-09"}]
    tools.queue("search_patient", success({"matches": matches}))
    done(assistant.run_turn("t", "Search for patient Maria Garcia"))
    before = len(fake.calls)
    r = done(assistant.run_turn("t", "Maria Elena, born 1955"))
    assert len(tools.calls) == 1 and r.active_patient == {"id": "mg-1", "name": "Maria Elena Garcia"}
    assert r.intent == "DIRECT" and "Selected Maria Elena Garcia" in r.answer and len(fake.calls) == before


def test_demo_model_writes_no_medical_prose(tools: Tools) -> None:
    demo = FakeLLM(name="SmolLM2 demo")
    demo.clinically_meaningful = False  # type: ignore[attr-defined]
    assistant = Assistant(demo, tools.registry())
    tools.queue("check_drug_safety", SAFETY)
    r = done(assistant.run_turn("t", "Check FDA warnings for dofetilide"))
    assert "**Drug Safety Report**" in r.answer and "Torsade de pointes" in r.answer
    # The sources are listed under the answer by each front end (r.sources), not repeated inside it.
    assert "[Tikosyn label](" not in r.answer and any(s["title"] == "Tikosyn label" for s in r.sources)
    assert not [c for c in demo.calls if c.kind == "text"]  # the model wrote none of it
    r = done(assistant.run_turn("t", "What is warfarin?"))
    assert "cannot answer medical questions" in r.answer and "warfarin" not in r.answer.lower().split("cannot")[0]
    # Its one job (issue 27): the friendly line of a greeting, checked by code; the capabilities are code's.
    demo.enqueue("Hello, nice to meet you!")
    r = done(assistant.run_turn("t", "Hello"))
    assert r.answer.startswith("Hello, nice to meet you!") and "I can help with" in r.answer
    texts = [c for c in demo.calls if c.kind == "text"]
    assert len(texts) == 1 and "Give no medical information" in texts[0].prompt


def test_image_tool_without_an_image_asks_for_one(fake: FakeLLM, assistant: Assistant, tools: Tools) -> None:
    """The no_image ask_user rule is reachable: the tool is not run, the clinician is asked to attach the image."""
    fake.enqueue(intent(tool="analyze_medical_image"), select("analyze_medical_image"))
    r = done(assistant.run_turn("t", "Analyze the chest X-ray I uploaded"))
    assert tools.calls == [] and r.router_actions == ["ERROR_HANDLER", "ASK_USER"]
    assert r.tools[0]["error_type"] == "no_image" and r.answer.startswith("Please attach the image")


def test_demo_model_does_not_judge_clinical_data(tools: Tools) -> None:
    demo = FakeLLM(name="demo")
    demo.clinically_meaningful = False  # type: ignore[attr-defined]
    tools.queue("check_drug_safety", SAFETY)
    r = done(Assistant(demo, tools.registry()).run_turn("t", "Check FDA warnings for dofetilide"))
    assert r.llm_calls == 0 and demo.calls == []
    classify = next(e for e in r.timeline if e["node"] == "result_classify")
    assert classify["decision"] == "success_partial" and "decided by rule" in classify["detail"]


def test_demo_model_neither_picks_retries_nor_claims_to_read_images(tools: Tools) -> None:
    demo = FakeLLM(name="SmolLM2 (demo — not clinically meaningful)", supports_images=False)
    demo.clinically_meaningful = False  # type: ignore[attr-defined]
    assistant = Assistant(demo, tools.registry())
    tools.queue("check_drug_safety", failure("service_unavailable"))
    r = done(assistant.run_turn("t", "Check FDA warnings for dofetilide"))
    assert demo.calls == [] and "RETRY" in r.router_actions and "could not retrieve" in r.answer
    assert "Drug Safety Report: the service is currently unavailable." in r.answer
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16)).save(buffer, format="PNG")
    r = done(assistant.run_turn("t", "What does this image show?", {"filename": "x.png", "data": buffer.getvalue()}))
    assert "cannot read images" in r.answer and "((" not in r.answer and demo.calls == []


def test_demo_model_does_not_repeat_the_write_confirmation(tools: Tools) -> None:
    demo = FakeLLM(name="demo")
    demo.clinically_meaningful = False  # type: ignore[attr-defined]
    assistant = Assistant(demo, tools.registry())
    tools.queue("add_allergy", success({"id": "al-1", "status": "created"}))
    assert isinstance(assistant.run_turn("t", "Record a penicillin allergy (hives) for abc-123"), dict)
    r = done(assistant.resume("t", {"action": "approve"}))
    assert r.answer == "Done: written to the record with the values listed below." and demo.calls == []


def test_demo_model_reports_a_declined_write_as_a_decision_not_a_failure(tools: Tools) -> None:
    demo = FakeLLM(name="demo")
    demo.clinically_meaningful = False  # type: ignore[attr-defined]
    assistant = Assistant(demo, tools.registry())
    tools.queue("search_patient", success({"matches": [{"id": "gm-001", "name": "Grace Mensah", "birth_date": "1958-02-11"}]}))
    assert isinstance(assistant.run_turn("t", "Prescribe amoxicillin 500 mg three times daily for Grace Mensah"), dict)
    r = done(assistant.resume("t", {"action": "reject"}))
    assert "Not retrieved" not in r.answer and "Grace Mensah" in r.answer
    assert r.answer.endswith("Nothing was written to the record: you declined the Prescription.")

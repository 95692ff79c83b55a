"""Entities, patterns, router, error handler rules, validation and answer hygiene: pure code, no model."""

from __future__ import annotations

from typing import Any, cast

import pytest

from docgemma.agent.answer import Scrubber, confidence, scrub_stream
from docgemma.agent.nodes.error_handler import deterministic_action
from docgemma.agent.nodes.router import decide_route
from docgemma.agent.patterns import required_tools
from docgemma.agent.state import ToolResult
from docgemma.agent.validation import ground, valid_patient_id, validate
from docgemma.clinical.entities import extract_entities
from docgemma.tools.registry import default_registry

REG = default_registry()


def result(tool: str, status: str = "success", data: Any = None, error_type: str | None = None,
           args: dict[str, Any] | None = None) -> ToolResult:
    return ToolResult(tool_name=tool, tool_label=REG.label(tool), args=args or {}, status=status,  # type: ignore[typeddict-item]
                      data=data if data is not None else {"x": 1}, formatted_result="", error="err" if error_type else None,
                      error_type=error_type, sources=[])


def state(query: str, **extra: Any) -> dict[str, Any]:
    return {"user_query": query, "extracted_entities": extract_entities(query), **extra}


@pytest.mark.parametrize(("text", "key", "expected"), [
    ("Check interactions between Coumadin, aspirin, and ibuprofen", "drug_mentions", ["warfarin", "aspirin", "ibuprofen"]),
    ("Prescribe metformin 500mg for abc-123", "patient_ids", ["abc-123"]),
    ("Open chart 3F2504E0-4F89-11D3-9A0C-0305E82C3301", "patient_ids", ["3f2504e0-4f89-11d3-9a0c-0305e82c3301"]),
    ("Find patient John Smith and check his meds", "patient_names", ["John Smith"]),
    ("Please document and save a note", "action_verbs", ["document", "save", "note"]),
    ("What is hypertension?", "drug_mentions", []),
])
def test_entity_extraction(text: str, key: str, expected: list[str]) -> None:
    assert extract_entities(text)[key] == expected  # type: ignore[literal-required]


def test_task_patterns_union_and_write_guard() -> None:
    s = state("Find patient John Smith, check his chart, and verify metformin safety")
    assert required_tools(s, REG) == {"search_patient", "get_patient_chart", "check_drug_safety"}  # type: ignore[arg-type]
    # A question about an allergy is not a request to write one.
    assert "add_allergy" not in required_tools(state("Is a penicillin allergy a contraindication?"), REG)  # type: ignore[arg-type]
    assert "add_allergy" in required_tools(state("Record a penicillin allergy for abc-123"), REG)  # type: ignore[arg-type]
    assert "prescribe_medication" not in required_tools(state("Is it safe to start metformin?"), REG)  # type: ignore[arg-type]


def test_router_rules() -> None:
    three = {"matches": [{"id": "a-1", "name": "J W"}, {"id": "a-2", "name": "J W"}, {"id": "a-3", "name": "J W"}]}
    found = result("search_patient", data=three, args={"name": "James Wilson"})
    s = state("Search for patient James Wilson", tool_results=[found],
              last_result_classification="success_rich", step_count=1)
    action, _, question = decide_route(s, REG)  # type: ignore[arg-type]
    assert action == "ASK_USER" and question and question.startswith("I found 3 patients matching 'James Wilson'")

    s = state("Check FDA warnings for dofetilide", tool_results=[result("check_drug_safety", "error", error_type="timeout")],
              last_result_classification="error_retryable", step_count=1)
    assert decide_route(s, REG)[0] == "ERROR_HANDLER"  # type: ignore[arg-type]

    many = state("Find patient Maria Garcia, review her chart, check metformin safety and find trials",
                 tool_results=[result("search_patient", data={"matches": [{"id": "m-1"}]})] * 4,
                 last_result_classification="success_rich", step_count=4)
    action, reason, _ = decide_route(many, REG)  # type: ignore[arg-type]
    assert action == "SYNTHESIZE" and "step limit" in reason

    dup = state("Find trials for asthma and trials for copd",
                tool_results=[result("find_clinical_trials", args={"condition": "asthma"})] * 2,
                last_result_classification="success_rich", step_count=2)
    action, reason, _ = decide_route(dup, REG)  # type: ignore[arg-type]
    assert action == "SYNTHESIZE" and "same call" in reason

    more = state("Find patient John Smith and check his chart", step_count=1, last_result_classification="success_rich",
                 tool_results=[result("search_patient", data={"matches": [{"id": "j-1", "name": "John Smith"}]})])
    assert decide_route(more, REG)[0] == "TOOL_SELECT"  # type: ignore[arg-type]


@pytest.mark.parametrize(("error_type", "retries", "expected"), [
    ("invalid_args", 0, "ASK_USER"),
    ("no_image", 0, "ASK_USER"),
    ("drug_not_in_database", 0, "SKIP"),
    ("not_configured", 0, "SKIP"),
    ("timeout", 2, "SKIP"),
    ("service_unavailable", 1, "SKIP"),
    ("timeout", 0, None),
    ("not_found", 1, None),
])
def test_error_handler_rules(error_type: str, retries: int, expected: str | None) -> None:
    s = state("Check FDA warnings for amiodarone", retry_count=retries, total_retries=retries)
    fixed = deterministic_action(s, result("check_drug_safety", "error", error_type=error_type))  # type: ignore[arg-type]
    assert (fixed[0] if fixed else None) == expected


def test_total_retry_limit_skips() -> None:
    s = state("q", retry_count=0, total_retries=4)
    fixed = deterministic_action(s, result("check_drug_safety", "error", error_type="timeout"))  # type: ignore[arg-type]
    assert fixed is not None and fixed[0] == "SKIP"


@pytest.mark.parametrize("value", ["abc-123", "402", "3f2504e0-4f89-11d3-9a0c-0305e82c3301"])
def test_valid_patient_ids(value: str) -> None:
    assert valid_patient_id(value)


@pytest.mark.parametrize("value", ["her", "John Smith", "../etc/passwd", "1; DROP TABLE", "a/1", "", "x" * 65 + "1", "1..2"])
def test_invalid_patient_ids(value: str) -> None:
    assert not valid_patient_id(value)


def test_grounding_repairs_from_entities_and_active_patient() -> None:
    spec = REG["get_patient_chart"]
    args, repairs = ground(spec, {"patient_id": "her"}, extract_entities("pull up her chart"), {"id": "mgr-101", "name": "Maria"})
    assert args["patient_id"] == "mgr-101" and repairs
    spec = REG["check_drug_safety"]
    args, repairs = ground(spec, {"drug_name": "DUBLY"}, extract_entities("FDA warnings for Coumadin"), None)
    assert args == {"drug_name": "warfarin"} and repairs
    args, repairs = ground(spec, {"drug_name": "warfarin"}, extract_entities("FDA warnings for Coumadin"), None)
    assert repairs == []


def test_validation_reports_missing_and_semantic_errors() -> None:
    checked = validate(REG["prescribe_medication"], {"patient_id": "abc-123"}, has_image=False)
    assert checked.error and set(checked.error["details"]["missing_fields"]) == {"medication_name", "dosage", "frequency"}
    checked = validate(REG["check_drug_interactions"], {"drug_names": ["warfarin", "Warfarin"]}, has_image=False)
    assert checked.error and checked.error["error_type"] == "invalid_args"
    checked = validate(REG["get_patient_chart"], {"patient_id": "../../etc"}, has_image=False)
    assert checked.error and checked.error["details"]["missing_fields"] == ["patient_id"]
    checked = validate(REG["analyze_medical_image"], {"query": "pneumothorax?"}, has_image=False)
    assert checked.error and checked.error["error_type"] == "no_image"
    checked = validate(REG["search_patient"], {"name": "Robert'); DROP TABLE patients;--"}, has_image=False)
    assert checked.error is None  # text is data: the tool layer must parameterise it, never interpolate it


def test_scrubber_replaces_tool_names_across_chunks() -> None:
    chunks = ["The check_dr", "ug_safety result [search_patient] shows ", "success_rich data."]
    text = "".join(scrub_stream(chunks, Scrubber(REG)))
    assert "check_drug_safety" not in text and "search_patient" not in text and "success_rich" not in text
    assert "Drug Safety Report" in text and "Patient Search" in text


def test_confidence_levels() -> None:
    # The full rule (model standing, sources, retries, errors) is pinned in tests/unit/test_page.py.
    ok = [{"status": "success", "sources": [{"title": "t", "url": "https://e.org"}]}]
    assert confidence({"tool_results": ok, "qualities": ["success_rich"]}) == "high"  # type: ignore[typeddict-item]
    assert confidence({"tool_results": ok, "qualities": ["success_partial"]}) == "medium"  # type: ignore[typeddict-item]
    assert confidence({"qualities": [], "intent": "DIRECT"}) == "medium"  # type: ignore[typeddict-item]
    failed = [{"status": "error", "sources": []}]
    assert confidence({"tool_results": failed, "qualities": ["error_fatal"], "error_messages": ["x"]}) == "low"  # type: ignore[typeddict-item]
    assert confidence({"tool_results": ok, "qualities": ["no_results"]}) == "low"  # type: ignore[typeddict-item]


def test_every_error_type_has_a_template_and_a_rule() -> None:
    """The taxonomy is closed: each error a tool can return has a clinician-facing sentence, and ERROR_HANDLER's
    rules name only error types that exist (a typo there would be a rule that can never fire)."""
    from typing import get_args

    from docgemma.agent.nodes.error_handler import ASK_USER_ERRORS, SKIP_ERRORS
    from docgemma.tools.outcome import ERROR_TEMPLATES, RETRYABLE_ERRORS, ErrorType

    types = set(get_args(ErrorType))
    assert set(ERROR_TEMPLATES) == types | {"generic"}
    assert not (ASK_USER_ERRORS | SKIP_ERRORS | RETRYABLE_ERRORS) - types


def _http_error(answer: Any, host: str = "api.fda.gov") -> str:
    """The error type the tools' HTTP client raises for one answer of the service (a response or an exception)."""
    import httpx

    from docgemma.tools.http import HttpClient, HttpError, forget_offline

    def handler(request: httpx.Request) -> httpx.Response:
        if isinstance(answer, Exception):
            raise answer
        return cast(httpx.Response, answer)

    http = HttpClient(frozenset({"api.fda.gov"}), transport=httpx.MockTransport(handler), max_retries=0,
                      sleep=lambda _: None)
    try:
        http.get_json(f"https://{host}/drug/label.json", {"search": "x"}, cache=False)
    except HttpError as error:
        return error.error_type
    finally:
        forget_offline()
        http.close()
    raise AssertionError("no error raised")


def test_the_http_client_names_each_failure_of_a_service() -> None:
    """Each way a knowledge service can fail reaches the agent as its own error type (each with its own template
    and ERROR_HANDLER rule): transient ones are retried, an unreachable network is said as such."""
    import httpx

    request = httpx.Request("GET", "https://api.fda.gov/")
    assert _http_error(httpx.ReadTimeout("slow", request=request)) == "timeout"
    assert _http_error(httpx.ConnectTimeout("no answer", request=request)) == "service_unavailable"
    assert _http_error(httpx.ConnectError("no route", request=request)) == "offline"
    assert _http_error(httpx.Response(429)) == "rate_limit"
    assert _http_error(httpx.Response(503)) == "server_error"
    assert _http_error(httpx.Response(403)) == "service_unavailable"
    assert _http_error(httpx.Response(404)) == "not_found"
    assert _http_error(httpx.Response(400)) == "invalid_args"
    assert _http_error(httpx.Response(200, text="<html>")) == "invalid_response"
    assert _http_error(httpx.Response(200, json={}), host="evil.example") == "invalid_args"  # not a tool host


def test_a_tool_without_what_it_needs_says_which() -> None:
    """An unbound executor, a missing image and a model without vision are three different answers."""
    from dataclasses import replace

    from PIL import Image

    from docgemma.tools.imaging import analyze_medical_image
    from docgemma.tools.registry import ToolContext, default_registry

    spec = replace(next(s for s in default_registry() if s.needs_image), executor=analyze_medical_image)
    args = spec.args_model.model_validate({"query": "What does this show?"})
    image = Image.new("RGB", (8, 8))
    assert replace(spec, executor=None).run(args, ToolContext(image=image))["error_type"] == "not_configured"
    assert spec.run(args, ToolContext(image=None))["error_type"] == "no_image"
    assert spec.run(args, ToolContext(image=image, llm=None))["error_type"] == "no_vision"

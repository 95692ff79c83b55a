"""The knowledge tools against recorded (and built, marked) API answers, and under injected faults."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from PIL import Image

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.config import Settings
from docgemma.llm.fake import FakeLLM
from docgemma.tools.binding import ToolClients, bind_tools, knowledge_clients
from docgemma.tools.catalog.analyze_medical_image import ImageAnalysisArgs
from docgemma.tools.http import HttpClient, HttpError
from docgemma.tools.registry import ToolContext, default_registry
from tests.conftest import assess, intent, retry, select
from tests.fixture_api import handler

SETTINGS = Settings()
CTX = ToolContext()


def tools_with(handle: Callable[[httpx.Request], httpx.Response], log: list[httpx.Request] | None = None) -> ToolClients:
    def recording(request: httpx.Request) -> httpx.Response:
        if log is not None:
            log.append(request)
        return handle(request)

    kt = knowledge_clients(SETTINGS, transport=httpx.MockTransport(recording))
    kt.http.sleep = lambda seconds: kt.http.stats.__setitem__("last_sleep_ms", int(seconds * 1000))
    return kt


def run(kt: ToolClients, tool: str, **kwargs: Any) -> dict[str, Any]:
    spec = default_registry()[tool]
    return dict(bind_tools(default_registry(), kt)[tool].run(spec.args_model(**kwargs), CTX))


# ── recorded answers ──────────────────────────────────────────────────────────────────────────────

def test_drug_safety_resolves_brand_names_and_cites_the_label() -> None:
    log: list[httpx.Request] = []
    out = run(tools_with(handler, log), "check_drug_safety", drug_name="Coumadin")
    assert out["status"] == "success"
    search = log[0].url.params["search"]
    assert 'openfda.generic_name:"warfarin"' in search and 'openfda.brand_name:"Coumadin"' in search and " OR " in search
    assert log[0].url.params["sort"] == "effective_time:desc"
    data = out["data"]
    assert data["boxed_warning"].startswith("WARNING: BLEEDING RISK") and data["label_effective_date"] == "2022-08-15"
    assert "Malignant hypertension" in data["contraindications"] and "Hemorrhage" in data["warnings"]
    assert out["sources"][0]["url"].endswith("setid=d91934a0-902e-c26c-23ca-d5accc4151b6")


def test_reduced_real_label_without_sections_says_none_listed() -> None:
    out = run(tools_with(handler), "check_drug_safety", drug_name="Keytruda")
    assert out["status"] == "success" and out["data"]["boxed_warning"] == "None on the label"


def test_unknown_drug_is_not_in_database() -> None:
    out = run(tools_with(handler), "check_drug_safety", drug_name="zyxomab")
    assert out == {"status": "error", "error_type": "drug_not_in_database", "details": {"drug": "zyxomab"}}


def test_interactions_quote_label_passages_in_both_directions() -> None:
    kt = tools_with(handler)
    out = run(kt, "check_drug_interactions", drug_names=["warfarin", "aspirin"])
    data = out["data"]
    assert data["interactions"][0]["label_of"] == "warfarin sodium" and "aspirin" in data["interactions"][0]["passages"][0]
    # The aspirin label names warfarin's class ("a blood thinning (anticoagulant) ... drug"), not warfarin.
    assert data["not_mentioned"] == [] and data["pairs"][0]["directions"][1]["by"] == "class"
    text = bind_tools(default_registry(), kt)["check_drug_interactions"].formatter(data)
    assert "The aspirin label names the class of warfarin" in text and len(out["sources"]) == 2
    assert "not evidence that the combination is harmless" in text and " safe" not in text.lower()


def test_interactions_with_one_unknown_drug() -> None:
    out = run(tools_with(handler), "check_drug_interactions", drug_names=["warfarin", "zyxomab"])
    assert out["status"] == "error" and out["error_type"] == "drug_not_in_database"
    out = run(tools_with(handler), "check_drug_interactions", drug_names=["warfarin", "aspirin", "zyxomab"])
    assert out["status"] == "success" and out["data"]["labels_not_found"] == ["zyxomab"]


def test_literature_from_pubmed_with_ncbi_parameters() -> None:
    log: list[httpx.Request] = []
    out = run(tools_with(handler, log), "search_medical_literature", query="APOB variants and LDL")
    article = out["data"]["results"][0]
    assert article["pmid"] == "30939045" and article["year"] == "2019" and article["url"].endswith("/30939045/")
    assert article["journal"] and "APOB" in article["title"]
    assert log[0].url.params["tool"] == "docgemma-connect" and log[0].url.params["retmode"] == "json"


def test_zero_pubmed_hits_fall_back_to_europe_pmc() -> None:
    out = run(tools_with(handler), "search_medical_literature", query="nothing at all")
    assert out["data"]["database"] == "Europe PMC" and out["data"]["results"][0]["pmid"] == "20516115"


def test_trials_with_status_words_and_fields() -> None:
    log: list[httpx.Request] = []
    kt = tools_with(handler, log)
    out = run(kt, "find_clinical_trials", condition="melanoma", status="currently enrolling")
    assert log[0].url.params["query.cond"] == "melanoma"
    # "Enrolling" means enrolling now: a trial not yet recruiting cannot take a patient today.
    assert log[0].url.params["filter.overallStatus"] == "RECRUITING"
    data = out["data"]
    assert len(data["results"]) == 3 and data["total"] == 480 and data["results"][0]["nct_id"].startswith("NCT")
    assert data["results"][0]["url"] == f"https://clinicaltrials.gov/study/{data['results'][0]['nct_id']}"
    assert "phase" in bind_tools(default_registry(), kt)["find_clinical_trials"].formatter(data)


def test_image_analysis_uses_the_vision_model() -> None:
    fake = FakeLLM([{"image_type": "ct_scan", "findings": ["No acute abnormality"], "impression": "Normal slice",
                     "confidence": "medium", "requires_specialist_review": True}])
    image_tool = bind_tools(default_registry(), tools_with(handler))["analyze_medical_image"]
    context = ToolContext(image=Image.new("RGB", (8, 8)), llm=fake)
    out = image_tool.run(ImageAnalysisArgs(query="any mass?"), context)
    assert out["status"] == "success" and fake.calls[0].images == 1
    assert "Specialist review recommended" in image_tool.formatter(out["data"])
    blind = ToolContext(image=Image.new("RGB", (8, 8)), llm=FakeLLM(supports_images=False))
    assert image_tool.run(ImageAnalysisArgs(query="any mass?"), blind)["error_type"] == "no_vision"


# ── the HTTP layer ────────────────────────────────────────────────────────────────────────────────

def test_cache_answers_a_repeated_call() -> None:
    log: list[httpx.Request] = []
    kt = tools_with(handler, log)
    run(kt, "check_drug_safety", drug_name="warfarin")
    run(kt, "check_drug_safety", drug_name="warfarin")
    assert len(log) == 1 and kt.http.stats["cache_hits"] == 1


def test_cache_is_bounded_least_recently_used_first() -> None:
    """The cache grew for as long as the app ran; now it holds at most ``cache_max_entries`` responses."""
    log: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        log.append(request)
        return httpx.Response(200, json={"q": request.url.params["q"]})

    http = HttpClient(frozenset({"api.fda.gov"}), transport=httpx.MockTransport(answer), cache_max_entries=3)
    for q in ["a", "b", "c", "a", "d"]:  # "a" is used again, so "b" is the least recently used when "d" comes
        http.get_json("https://api.fda.gov/x", {"q": q})
    assert http.cache_size == 3 and len(log) == 4
    http.get_json("https://api.fda.gov/x", {"q": "a"})
    assert len(log) == 4  # still cached
    http.get_json("https://api.fda.gov/x", {"q": "b"})
    assert len(log) == 5  # evicted
    for i in range(1000):
        http.get_json("https://api.fda.gov/x", {"q": f"n{i}"})
    assert http.cache_size == 3


def test_only_the_tools_hosts_can_be_called() -> None:
    http = HttpClient(frozenset({"api.fda.gov"}), transport=httpx.MockTransport(handler))
    with pytest.raises(HttpError) as err:
        http.get_json("https://evil.example.com/x", {})
    assert err.value.error_type == "invalid_args"


def test_offline_fails_fast_without_retries() -> None:
    http = HttpClient(frozenset({"127.0.0.1"}), max_retries=2)
    with pytest.raises(HttpError) as err:
        http.get_json("http://127.0.0.1:9/closed", {})
    assert err.value.error_type == "offline" and http.stats["requests"] == 1


def _raise(exc: type[Exception]) -> Callable[[httpx.Request], httpx.Response]:
    def handle(request: httpx.Request) -> httpx.Response:
        raise exc("injected", request=request)
    return handle


def _status(code: int, body: bytes = b"", headers: dict[str, str] | None = None) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: httpx.Response(code, content=body, headers=headers or {})


FAULTS: dict[str, tuple[Callable[[httpx.Request], httpx.Response], str, int]] = {
    # fault: (handler, expected error type, expected requests per call: retries are bounded)
    "timeout": (_raise(httpx.ReadTimeout), "timeout", 3),
    "connection_refused": (_raise(httpx.ConnectError), "offline", 1),
    "rate_limited_429": (_status(429, b'{"error":"API rate limit exceeded"}', {"Retry-After": "1"}), "rate_limit", 3),
    "server_error_500": (_status(500, b'{"error":{"code":"SERVER_ERROR","message":"Check your request and try again"}}'),
                         "server_error", 3),
    "malformed_json": (_status(200, b'{"results": [ {"set_id": '), "invalid_response", 1),
    "empty_200": (_status(200, b""), "invalid_response", 1),
}
TOOL_ARGS: dict[str, dict[str, Any]] = {
    "check_drug_safety": {"drug_name": "warfarin"},
    "check_drug_interactions": {"drug_names": ["warfarin", "aspirin"]},
    "search_medical_literature": {"query": "APOB variants"},
    "find_clinical_trials": {"condition": "melanoma"},
}


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("tool", TOOL_ARGS)
def test_fault_injection(tool: str, fault: str) -> None:
    handle, error_type, per_call = FAULTS[fault]
    log: list[httpx.Request] = []
    kt = tools_with(handle, log)
    out = run(kt, tool, **TOOL_ARGS[tool])
    assert out["status"] == "error" and out["error_type"] == error_type
    calls = 2 if tool == "search_medical_literature" else 1  # PubMed, then Europe PMC
    assert len(log) == per_call * calls
    assert kt.http.stats["retries"] == (per_call - 1) * calls
    if fault == "rate_limited_429":
        assert kt.http.stats["last_sleep_ms"] == 1000  # Retry-After honoured


def test_ncbi_error_body_with_http_200_is_a_failure_not_zero_hits() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("esearch.fcgi"):
            return httpx.Response(200, json={"error": "API rate limit exceeded", "count": "11"})
        return httpx.Response(200, json={"version": "6.9"})  # Europe PMC without hitCount
    out = run(tools_with(handle), "search_medical_literature", query="APOB variants")
    assert out["error_type"] == "rate_limit"


def test_europe_pmc_body_without_hitcount_is_a_failure() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("esearch.fcgi"):
            return httpx.Response(500)
        return httpx.Response(200, json={"version": "6.9"})
    kt = tools_with(handle)
    with pytest.raises(HttpError) as err:
        from docgemma.tools.literature import Literature

        Literature(kt.http, SETTINGS.eutils_url, SETTINGS.europepmc_url).europe_pmc("x")
    assert err.value.error_type == "invalid_response"


def test_ctgov_plain_text_400_is_invalid_args() -> None:
    body = b"Error parsing query in Intervention / treatment: invalid expression"
    out = run(tools_with(_status(400, body, {"Content-Type": "text/plain"})), "find_clinical_trials", condition="x y")
    assert out == {"status": "error", "error_type": "invalid_args", "details": {}}


# ── through the graph: no raw error text in any prompt ────────────────────────────────────────────

RAW = ("API rate limit exceeded", "Error parsing query", "SERVER_ERROR", "injected", "ReadTimeout", "HTTP 500")


@pytest.mark.parametrize("fault", ["rate_limited_429", "server_error_500", "timeout"])
def test_no_raw_error_text_reaches_a_prompt_or_the_answer(fault: str) -> None:
    kt = tools_with(FAULTS[fault][0])
    fake = FakeLLM([intent(), select("check_drug_safety"), {"drug_name": "warfarin"}, retry(), retry()])
    result = Assistant(fake, bind_tools(default_registry(), kt)).run_turn("t", "Check FDA warnings for warfarin")
    assert isinstance(result, TurnResult)
    for call in fake.calls:
        assert not any(raw in call.prompt for raw in RAW)
    assert not any(raw in result.answer for raw in RAW) and "I have not answered from general knowledge" in result.answer


def test_a_real_tool_turn_end_to_end() -> None:
    kt = tools_with(handler)
    fake = FakeLLM([assess(), "Dofetilide must be started with 3 days of ECG monitoring."])
    result = Assistant(fake, bind_tools(default_registry(), kt)).run_turn("t", "Check FDA warnings for Tikosyn")
    assert isinstance(result, TurnResult)
    prompt = fake.calls[-1].prompt
    assert "[Drug Safety Report]" in prompt and "minimum of 3 days" in prompt and len(prompt) < 4000
    assert result.sources[0]["title"].startswith("FDA drug label: Tikosyn (dofetilide)")
    # Chosen by rule; the brand is looked up by its generic name (the dictionary's), and the label found is Tikosyn's.
    assert json.dumps(result.tools[0]["args"]) == '{"drug_name": "dofetilide"}' and "Drug: dofetilide" in prompt

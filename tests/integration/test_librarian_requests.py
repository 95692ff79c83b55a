"""What each knowledge tool sends for a clinician's message, and what the clinician reads back.

Each case goes message → the tool's argument extractor (the rules, as in oracle mode: no model fills an
argument) → the executor over a recording fake transport → the exact parameters of each request, checked
against what a medical librarian would send; then the rendered result is checked for what a clinician expects
to read first. Cases the routing rules send to the tool are also run through the whole graph with the golden
oracle, which must reach the same request. Answers come from recorded responses, or from responses built in
the documented shape (``tests/fixtures/apis/SOURCES.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import httpx
import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.clinical.entities import extract_entities
from docgemma.config import Settings
from docgemma.eval.oracle import Oracle, TurnContext
from docgemma.llm.fake import FakeLLM
from docgemma.tools.binding import ToolClients, bind_tools, knowledge_clients
from docgemma.tools.registry import ToolContext, default_registry
from docgemma.tools.routing import Request
from docgemma.tools.trials import FIELDS
from tests.fixture_api import FIXTURES, respond

YEAR = date.today().year
REGISTRY = default_registry()
CT_BASE = {"pageSize": "5", "countTotal": "true", "fields": FIELDS, "format": "json"}
NCBI = {"db": "pubmed", "retmax": "5", "tool": "docgemma-connect", "retmode": "json"}
EPMC = {"format": "json", "pageSize": "5", "resultType": "lite"}
LABEL_PARAMS = {"limit": "5", "sort": "effective_time:desc"}  # five read: the one of the drug asked is chosen
LABELS = {"valproic acid": "label_valproic_acid__built.json", "levofloxacin": "label_levofloxacin__built.json",
          "lisinopril": "label_lisinopril__built.json", "metformin": "label_metformin__built.json"}


def label_search(generic: str, given: str | None = None) -> dict[str, str]:
    """The openFDA search for a drug: its generic name as generic or brand, and the name as the clinician gave it."""
    terms = {f'openfda.generic_name:"{generic}"', f'openfda.brand_name:"{generic}"', f'openfda.brand_name:"{given or generic}"'}
    return {"search": " OR ".join(sorted(terms)), **LABEL_PARAMS}


def answer(request: httpx.Request) -> httpx.Response:
    """Recorded or built answers, chosen by what was asked."""
    params = dict(request.url.params)
    path = request.url.path
    body: bytes | None = None
    if path.endswith("/drug/label.json"):
        name = next((n for n in LABELS if f'"{n}"' in params.get("search", "").lower()), None)
        body = (FIXTURES / "openfda" / LABELS[name]).read_bytes() if name else None
    elif path.endswith("/esearch.fcgi"):
        zero = "B12" in params.get("term", "")
        body = (FIXTURES / "pubmed" / ("esearch_zero_hits_with_errorlist__Yeliztli.json" if zero
                                       else "esearch_filtered_hits__built.json")).read_bytes()
    elif path.endswith("/esummary.fcgi"):
        body = (FIXTURES / "pubmed" / "esummary_filtered_hits__built.json").read_bytes()
    elif path.endswith("/search"):
        body = (FIXTURES / "europepmc" / "search_filtered_hits__built.json").read_bytes()
    elif path.endswith("/studies"):
        cond = params.get("query.cond", "").lower()
        file = ("search_lupus_nephritis_interventions__built.json" if "lupus" in cond
                else "search_sickle_cell_sites__built.json" if "sickle" in cond else None)
        body = (FIXTURES / "ctgov" / file).read_bytes() if file else None
    if body is not None:
        return httpx.Response(200, content=body, headers={"Content-Type": "application/json"})
    status, kind, raw = respond(path, params)
    return httpx.Response(status, content=raw, headers={"Content-Type": kind})


def pubmed_down(request: httpx.Request) -> httpx.Response:
    if request.url.path.endswith(".fcgi"):
        return httpx.Response(500, content=b'{"error":"internal"}')
    return answer(request)


@dataclass(frozen=True)
class Case:
    message: str
    tool: str
    args: dict[str, Any]
    #: Parameters of each request sent, in order (for literature: PubMed's esearch, or Europe PMC's search).
    sent: list[dict[str, str]]
    #: What the clinician reads, in this order.
    shows: tuple[str, ...] = ()
    #: The routing rules (or the oracle, when they leave it to the model) choose this tool today.
    graph: bool = True
    handler: Callable[[httpx.Request], httpx.Response] = answer
    absent: tuple[str, ...] = field(default=())


def ct(**params: str) -> dict[str, str]:
    return {**params, **CT_BASE}


def esearch(term: str, *, newest: bool = False, since: int | None = None) -> dict[str, str]:
    out = {**NCBI, "term": term, "sort": "pub_date" if newest else "relevance"}
    if since:
        out.update({"datetype": "pdat", "mindate": str(since), "maxdate": str(YEAR)})
    return out


CASES: list[Case] = [
    # ── ClinicalTrials.gov ───────────────────────────────────────────────────────────────────────
    Case("Are there trials of novel toxoplasmosis treatments in immunocompromised patients?", "find_clinical_trials",
         {"condition": "toxoplasmosis", "other_terms": "immunocompromised"},
         [ct(**{"query.cond": "toxoplasmosis", "query.term": "immunocompromised"})],
         ("condition toxoplasmosis; also matching immunocompromised; status any",)),
    Case("Any trials of belimumab or voclosporin in lupus nephritis?", "find_clinical_trials",
         {"condition": "lupus nephritis", "intervention": "belimumab OR voclosporin"},
         [ct(**{"query.cond": "lupus nephritis", "query.intr": "belimumab OR voclosporin"})],
         ("condition lupus nephritis; intervention belimumab OR voclosporin", "3 found",
          "NCT90000021: Belimumab Added to Standard Therapy", "recruiting, phase 3", "Interventions: Belimumab",
          "NCT90000023", "not yet recruiting, phase 2/3", "Sites: none listed")),
    Case("Find trials of faricimab in diabetic retinopathy", "find_clinical_trials",
         {"condition": "diabetic retinopathy", "intervention": "faricimab"},
         [ct(**{"query.cond": "diabetic retinopathy", "query.intr": "faricimab"})]),
    Case("Trials of psilocybin-assisted therapy in treatment-resistant depression", "find_clinical_trials",
         {"condition": "treatment-resistant depression", "intervention": "psilocybin"},
         [ct(**{"query.cond": "treatment-resistant depression", "query.intr": "psilocybin"})]),
    Case("Is there a sickle cell trial in Nairobi I could refer someone to?", "find_clinical_trials",
         {"condition": "sickle cell", "location": "Nairobi", "status": "RECRUITING"},
         [ct(**{"query.cond": "sickle cell", "query.locn": "Nairobi", "filter.overallStatus": "RECRUITING"})],
         ("sites Nairobi; status recruiting", "NCT90000011", "Sites: Kenyatta National Hospital (Nairobi, Kenya; 2 km, "
          "recruiting); Jaramogi Oginga Odinga Teaching and Referral Hospital (Kisumu, Kenya; 264 km",
          "(+1 more)", "NCT90000012", "Sites: Aga Khan University Hospital (Nairobi, Kenya; 3 km, not yet recruiting)")),
    Case("Any enrolling studies for HIV cryptococcal meningitis?", "find_clinical_trials",
         {"condition": "HIV cryptococcal meningitis", "status": "RECRUITING"},
         [ct(**{"query.cond": "HIV cryptococcal meningitis", "filter.overallStatus": "RECRUITING"})]),
    Case("Phase 3 trials of semaglutide in NASH that are recruiting", "find_clinical_trials",
         {"condition": "NASH", "intervention": "semaglutide", "status": "RECRUITING", "phase": "3"},
         [ct(**{"query.cond": "NASH", "query.intr": "semaglutide", "filter.overallStatus": "RECRUITING",
                "filter.advanced": "AREA[Phase]PHASE3"})],
         ("intervention semaglutide; phase 3; status recruiting",)),
    Case("Recruiting trials for sickle cell disease in children within 100 km of Kampala", "find_clinical_trials",
         {"condition": "sickle cell disease", "location": "Kampala", "distance_km": 100, "status": "RECRUITING",
          "age_group": "child"},
         [ct(**{"query.cond": "sickle cell disease", "filter.geo": "distance(0.35,32.58,100km)",
                "filter.overallStatus": "RECRUITING", "filter.advanced": "AREA[StdAge]CHILD"})],
         ("sites within 100 km of Kampala; child participants; status recruiting",
          "Sites: Mulago National Referral Hospital (Kampala, Uganda; 1 km, recruiting)")),
    Case("phase II/III trials for tuberculosis in Kenya", "find_clinical_trials",
         {"condition": "tuberculosis", "location": "Kenya", "phase": "2/3"},
         [ct(**{"query.cond": "tuberculosis", "query.locn": "Kenya",
                "filter.advanced": "AREA[Phase]PHASE2 AND AREA[Phase]PHASE3"})]),
    Case("Are there recruiting trials for triple-negative breast cancer?", "find_clinical_trials",
         {"condition": "triple-negative breast cancer", "status": "RECRUITING"},
         [ct(**{"query.cond": "triple-negative breast cancer", "filter.overallStatus": "RECRUITING"})],
         ("480 found", "NCT06970236: Resistance Exercise in Patients With Ocular Melanoma — recruiting, phase n/a")),
    Case("Are there trials of catheter ablation in heart failure?", "find_clinical_trials",
         {"condition": "heart failure", "intervention": "catheter ablation"},
         [ct(**{"query.cond": "heart failure", "query.intr": "catheter ablation"})]),
    Case("Completed trials of dapagliflozin plus metformin in type 2 diabetes", "find_clinical_trials",
         {"condition": "type 2 diabetes", "intervention": "dapagliflozin AND metformin", "status": "COMPLETED"},
         [ct(**{"query.cond": "type 2 diabetes", "query.intr": "dapagliflozin AND metformin",
                "filter.overallStatus": "COMPLETED"})]),
    Case("Any experimental treatments being trialled for ALS?", "find_clinical_trials", {"condition": "ALS"},
         [ct(**{"query.cond": "ALS"})]),
    Case("Are there trials of HIV vaccines in South Africa?", "find_clinical_trials",
         {"condition": "HIV", "intervention": "vaccine", "location": "South Africa"},
         [ct(**{"query.cond": "HIV", "query.intr": "vaccine", "query.locn": "South Africa"})]),
    # ── PubMed, Europe PMC ───────────────────────────────────────────────────────────────────────
    Case("Find literature on optimal B12 replacement protocols and expected hematologic recovery timeline in severe "
         "deficiency", "search_medical_literature",
         {"query": "B12 replacement and hematologic recovery in severe deficiency"},
         [esearch("B12 replacement and hematologic recovery in severe deficiency"),
          {**EPMC, "query": "B12 replacement and hematologic recovery in severe deficiency"}],
         ("Europe PMC search: B12 replacement and hematologic recovery in severe deficiency — 2 found",
          "Oral versus intramuscular vitamin B12", "Cochrane Database Syst Rev, 2024 — meta-analysis. PMID 99000202",
          "Br J Haematol, 2022. PMID 99000201"),
         absent=("optimal", "protocols", "expected", "timeline")),
    Case("recent meta-analyses on SGLT2 inhibitors in heart failure", "search_medical_literature",
         {"query": "SGLT2 inhibitors in heart failure", "publication_types": ["meta-analysis"], "since_year": YEAR - 5,
          "newest_first": True},
         [esearch('(SGLT2 inhibitors in heart failure) AND ("Meta-Analysis"[pt])', newest=True, since=YEAR - 5)],
         (f"PubMed search: SGLT2 inhibitors in heart failure (types: meta-analysis; published {YEAR - 5}–{YEAR}; "
          "newest first) — 37 found", "European Heart Journal, 2025 — meta-analysis. PMID 99000103",
          "The Lancet, 2024 — randomised controlled trial", "Heart Failure Reviews, 2023 — review")),
    Case("Find recent studies on SGLT2 inhibitors in heart failure", "search_medical_literature",
         {"query": "SGLT2 inhibitors in heart failure", "since_year": YEAR - 5, "newest_first": True},
         [esearch("SGLT2 inhibitors in heart failure", newest=True, since=YEAR - 5)]),
    Case("latest RCTs on tranexamic acid in trauma", "search_medical_literature",
         {"query": "tranexamic acid in trauma", "publication_types": ["randomized controlled trial"],
          "since_year": YEAR - 5, "newest_first": True},
         [esearch('(tranexamic acid in trauma) AND ("Randomized Controlled Trial"[pt])', newest=True, since=YEAR - 5)]),
    Case("guidelines for management of severe malaria in children", "search_medical_literature",
         {"query": "management of severe malaria in children", "publication_types": ["guideline"]},
         [esearch('(management of severe malaria in children) AND ("Guideline"[pt] OR "Practice Guideline"[pt])')]),
    Case("systematic reviews and meta-analyses of vitamin A supplementation in children published in the last 3 years",
         "search_medical_literature",
         {"query": "vitamin A supplementation in children", "publication_types": ["meta-analysis", "systematic review"],
          "since_year": YEAR - 3, "newest_first": True},
         [esearch('(vitamin A supplementation in children) AND ("Meta-Analysis"[pt] OR "Systematic Review"[pt])',
                  newest=True, since=YEAR - 3)]),
    Case("Any reviews on the management of cryptococcal meningitis since 2018?", "search_medical_literature",
         {"query": "management of cryptococcal meningitis", "publication_types": ["review"], "since_year": 2018},
         [esearch('(management of cryptococcal meningitis) AND ("Review"[pt])', since=2018)]),
    Case("pubmed: artesunate vs quinine severe malaria children", "search_medical_literature",
         {"query": "artesunate quinine severe malaria children"},
         [esearch("artesunate quinine severe malaria children")]),
    Case("what's the evidence for tranexamic acid in postpartum haemorrhage", "search_medical_literature",
         {"query": "tranexamic acid in postpartum haemorrhage"}, [esearch("tranexamic acid in postpartum haemorrhage")]),
    Case("Check FDA warnings for dofetilide and find studies on its use in AF", "search_medical_literature",
         {"query": "dofetilide use in AF"}, [esearch("dofetilide use in AF")], graph=False),  # second tool of two
    Case("randomised controlled trials of early goal-directed therapy in sepsis this year", "search_medical_literature",
         {"query": "early goal-directed therapy in sepsis", "publication_types": ["randomized controlled trial"],
          "since_year": YEAR, "newest_first": True},
         [esearch('(early goal-directed therapy in sepsis) AND ("Randomized Controlled Trial"[pt])', newest=True,
                  since=YEAR)]),
    Case("recent meta-analyses on SGLT2 inhibitors in heart failure (PubMed down)", "search_medical_literature",
         {"query": "SGLT2 inhibitors in heart failure", "publication_types": ["meta-analysis"], "since_year": YEAR - 5,
          "newest_first": True},
         [esearch('(SGLT2 inhibitors in heart failure) AND ("Meta-Analysis"[pt])', newest=True, since=YEAR - 5)] * 3 + [
             {**EPMC, "query": f'(SGLT2 inhibitors in heart failure) AND (PUB_TYPE:"Meta-Analysis") AND '
                               f"FIRST_PDATE:[{YEAR - 5}-01-01 TO {YEAR}-12-31]", "sort": "P_PDATE_D desc"}],
         ("Europe PMC search: SGLT2 inhibitors in heart failure (types: meta-analysis",),
         graph=False, handler=pubmed_down),
    # ── FDA labels ───────────────────────────────────────────────────────────────────────────────
    Case("What does the label say about valproate in pregnancy?", "check_drug_safety",
         {"drug_name": "valproic acid", "topic": "pregnancy"}, [label_search("valproic acid")],
         ("Drug: valproic acid (label effective 2024-05-09)", "Pregnancy [pregnancy]: 8.1 Pregnancy",
          "contraindicated in women who are pregnant", "Boxed warning: WARNING: LIFE THREATENING ADVERSE REACTIONS",
          "Contraindications: Hepatic disease")),
    Case("Is there a boxed warning for fluoroquinolones like levofloxacin?", "check_drug_safety",
         {"drug_name": "levofloxacin"}, [label_search("levofloxacin")],
         ("Drug: levofloxacin", "Boxed warning: WARNING: SERIOUS ADVERSE REACTIONS INCLUDING TENDINITIS",
          "Contraindications: Known hypersensitivity", "Warnings: Tendinopathy")),
    Case("Can I use levofloxacin in renal impairment? check the FDA label", "check_drug_safety",
         {"drug_name": "levofloxacin", "topic": "renal impairment"}, [label_search("levofloxacin")],
         ("Drug: levofloxacin", "Renal impairment [use in specific populations 8.6]: 8.6 Renal Impairment: clearance",
          "Renal impairment [dosage and administration 2.3]: 2.3 Dosage Adjustment in Adults with Renal Impairment",
          "500 mg every 48 hours", "Boxed warning: WARNING: SERIOUS ADVERSE REACTIONS")),
    Case("Check the FDA label of metformin for dosing in CKD", "check_drug_safety",
         {"drug_name": "metformin", "topic": "renal impairment"}, [label_search("metformin")],
         ("Drug: metformin hydrochloride", "[use in specific populations 8.6]: 8.6 Renal Impairment",
          "[dosage and administration 2.3]: 2.3 Recommendations for Use in Renal Impairment", "Boxed warning: WARNING: "
          "LACTIC ACIDOSIS")),
    Case("Is lisinopril safe while breastfeeding? check the FDA label", "check_drug_safety",
         {"drug_name": "lisinopril", "topic": "lactation"}, [label_search("lisinopril")],
         ("Lactation [use in specific populations 8.2]: 8.2 Lactation", "breastfeeding is not recommended",
          "Boxed warning: WARNING: FETAL TOXICITY")),
    Case("FDA label: valproate in children", "check_drug_safety",
         {"drug_name": "valproic acid", "topic": "children"}, [label_search("valproic acid")],
         ("Pediatric use [pediatric use]: 8.4 Pediatric Use: children under the age of two", "Boxed warning:")),
    Case("What does the lisinopril label say about overdose?", "check_drug_safety",
         {"drug_name": "lisinopril", "topic": "overdose"}, [label_search("lisinopril")],
         ("Overdosage [overdosage]: The most likely manifestation of overdosage is hypotension", "Boxed warning:")),
    Case("Check the FDA warnings for lisinopril and metformin in pregnancy", "check_drug_safety",
         {"drug_name": "lisinopril", "other_drugs": ["metformin"], "topic": "pregnancy"},
         [label_search("lisinopril"), label_search("metformin")],
         ("Drug: lisinopril", "Pregnancy [pregnancy]: 8.1 Pregnancy Risk Summary: lisinopril can cause fetal harm",
          "Boxed warning: WARNING: FETAL TOXICITY", "Drug: metformin hydrochloride",
          "Pregnancy [pregnancy]: 8.1 Pregnancy Risk Summary: published studies", "Boxed warning: WARNING: LACTIC")),
    Case("What does the FDA label say about metformin in liver disease?", "check_drug_safety",
         {"drug_name": "metformin", "topic": "hepatic impairment"}, [label_search("metformin")],
         ("Hepatic impairment [use in specific populations 8.7]: 8.7 Hepatic Impairment", "Boxed warning:")),
    Case("valproate label: anything on renal impairment?", "check_drug_safety",
         {"drug_name": "valproic acid", "topic": "renal impairment"}, [label_search("valproic acid")],
         ("Drug: valproic acid", "Renal impairment: The label has no section on renal impairment.", "Boxed warning:")),
    Case("valproate label: anything on liver disease?", "check_drug_safety",
         {"drug_name": "valproic acid", "topic": "hepatic impairment"}, [label_search("valproic acid")],
         ("Hepatic impairment [warnings and precautions (sentences that mention it)]: Hepatic disease or significant "
          "hepatic dysfunction.", "Boxed warning:")),
    Case("Any FDA warnings for ACE inhibitors such as lisinopril in older adults?", "check_drug_safety",
         {"drug_name": "lisinopril", "topic": "older adults"}, [label_search("lisinopril")],
         ("Geriatric use [use in specific populations 8.5]: 8.5 Geriatric Use", "Boxed warning:")),
    Case("Check FDA warnings for Coumadin", "check_drug_safety", {"drug_name": "warfarin"}, [label_search("warfarin")],
         ("Drug: warfarin sodium", "Boxed warning: WARNING: BLEEDING RISK", "Contraindications:", "Warnings:")),
]


def tools_with(handle: Callable[[httpx.Request], httpx.Response], log: list[httpx.Request]) -> ToolClients:
    def recording(request: httpx.Request) -> httpx.Response:
        log.append(request)
        return handle(request)

    kt = knowledge_clients(Settings(), transport=httpx.MockTransport(recording))
    kt.http.sleep = lambda seconds: None
    return kt


def message_of(case: Case) -> str:
    return case.message.replace(" (PubMed down)", "")


def sent(log: list[httpx.Request], tool: str) -> list[dict[str, str]]:
    """Parameters of each request; for literature the searches only (not esummary's fetch of the ids found)."""
    return [dict(r.url.params) for r in log if not r.url.path.endswith("esummary.fcgi")]


def in_order(text: str, parts: tuple[str, ...]) -> None:
    at = 0
    for part in parts:
        found = text.find(part, at)
        assert found >= 0, f"{part!r} not found (in order) in:\n{text}"
        at = found + len(part)


def test_the_request_set_covers_every_tool_and_every_quoted_example() -> None:
    counts = {tool: sum(c.tool == tool for c in CASES) for tool in
              ("find_clinical_trials", "search_medical_literature", "check_drug_safety")}
    assert sum(counts.values()) >= 30 and min(counts.values()) >= 10, counts
    quoted = ["novel toxoplasmosis treatments in immunocompromised patients", "belimumab or voclosporin in lupus nephritis",
              "faricimab in diabetic retinopathy", "psilocybin-assisted therapy in treatment-resistant depression",
              "a trial in Nairobi I could refer someone to", "optimal B12 replacement protocols and expected hematologic "
              "recovery timeline in severe deficiency", "recent meta-analyses on SGLT2 inhibitors in heart failure",
              "What does the label say about valproate in pregnancy?", "fluoroquinolones like levofloxacin"]
    messages = " | ".join(c.message for c in CASES).replace("sickle cell trial in", "trial in")
    assert all(q in messages for q in quoted), [q for q in quoted if q not in messages]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.message[:60])
def test_a_message_becomes_the_request_a_librarian_would_send(case: Case) -> None:
    spec = REGISTRY[case.tool]
    message = message_of(case)
    args = spec.prefill(Request(message, extract_entities(message)))
    assert args == case.args
    log: list[httpx.Request] = []
    kt = tools_with(case.handler, log)
    outcome = bind_tools(default_registry(), kt)[case.tool].run(spec.args_model.model_validate(args), ToolContext())
    assert outcome["status"] == "success", outcome
    assert sent(log, case.tool) == case.sent
    text = bind_tools(default_registry(), kt)[case.tool].format_result(outcome["data"])
    assert "{" not in text and "None" not in text  # read as sentences, not as a data structure
    in_order(text, case.shows)
    assert not any(word in text.lower().split(":", 1)[1][:200] for word in case.absent)


@pytest.mark.parametrize("case", [c for c in CASES if c.graph], ids=lambda c: c.message[:60])
def test_through_the_graph_the_oracle_reaches_the_same_request(case: Case) -> None:
    """Routing by the rules (or the oracle where they leave it to the model), arguments by the extractor only."""
    log: list[httpx.Request] = []
    kt = tools_with(case.handler, log)
    registry = bind_tools(default_registry(), kt)
    ctx = TurnContext(turn={"user_input": case.message, "expected_intent": "TOOL_NEEDED", "expected_tool": case.tool})
    result = Assistant(FakeLLM(responder=Oracle(registry, ctx)), registry).run_turn("t", message_of(case))
    assert isinstance(result, TurnResult)
    assert [t["tool"] for t in result.tools] == [case.tool]
    assert {k: v for k, v in result.tools[0]["args"].items() if v is not None and v is not False} == case.args
    select = next(e for e in result.timeline if e["node"] == "tool_select")
    assert "no model call" in select["detail"] or "by rule" in select["detail"]
    assert sent(log, case.tool) == case.sent


@pytest.mark.parametrize(("message", "drugs"), [
    ("Is there a boxed warning for fluoroquinolones like cipro?", {"drug_name": "ciprofloxacin"}),
    ("Is there a boxed warning for fluoroquinolones like levofloxacin?", {"drug_name": "levofloxacin"}),
    ("FDA warnings for ACE inhibitors such as lisinopril", {"drug_name": "lisinopril"}),
    ("label warnings of statins (e.g. atorvastatin)", {"drug_name": "atorvastatin"}),
    ("Check FDA warnings for dofetilide and amiodarone", {"drug_name": "dofetilide", "other_drugs": ["amiodarone"]}),
    ("Check metformin safety, then find trials for diabetes and check interactions of warfarin and aspirin",
     {"drug_name": "metformin"}),
])
def test_a_class_named_with_an_example_is_looked_up_as_the_example(message: str, drugs: dict[str, Any]) -> None:
    assert REGISTRY["check_drug_safety"].prefill(Request(message, extract_entities(message))) == drugs


def test_the_model_is_asked_for_every_part_of_a_trials_request_it_must_split() -> None:
    """When code cannot read the condition, stage 2 asks the model for the condition and the other parts
    together, so the drug and the place do not end up inside the condition."""
    from docgemma.tools.catalog.find_clinical_trials import ClinicalTrialsArgs

    log: list[httpx.Request] = []
    kt = tools_with(answer, log)
    registry = bind_tools(default_registry(), kt)
    split = {"condition": "lupus nephritis", "intervention": "belimumab OR voclosporin", "location": "Nairobi"}
    fake = FakeLLM(responder=lambda call: (
        {"intent": "TOOL_NEEDED", "task_summary": "trials", "suggested_tool": "find_clinical_trials"}
        if call.schema and call.schema.__name__ == "IntentClassification"
        else {k: v for k, v in split.items() if k in call.schema.model_fields}
        if call.schema and call.schema.__name__ == ClinicalTrialsArgs.__name__
        else {"quality": "success_rich"} if call.schema else "Answer."))
    result = Assistant(fake, registry).run_turn("t", "any belimumab/voclosporin LN trial near Nairobi?")
    assert isinstance(result, TurnResult)
    stage2 = next(c for c in fake.calls if c.schema and c.schema.__name__ == ClinicalTrialsArgs.__name__)
    # Code read the intervention and the place; the model is asked for the condition and every part code did not
    # read, and what code read stays.
    assert list(stage2.schema.model_fields) == ["condition", "distance_km", "status", "phase", "age_group", "other_terms"]
    assert "location=Nairobi" in stage2.prompt and "intervention=belimumab OR voclosporin" in stage2.prompt
    assert dict(log[0].url.params) == ct(**{"query.cond": "lupus nephritis", "query.intr": "belimumab OR voclosporin",
                                            "query.locn": "Nairobi"})


def test_mcp_tool_schemas_carry_the_new_arguments() -> None:
    import asyncio

    from docgemma.tools.mcp_server import build_server

    tools = {t.name: t for t in asyncio.run(build_server(default_registry()).list_tools())}

    def properties(name: str) -> dict[str, Any]:
        schema = getattr(tools[name], "input_schema", None) or tools[name].inputSchema
        return dict(schema["properties"])

    trials = properties("find_clinical_trials")
    assert {"condition", "intervention", "location", "distance_km", "status", "phase", "age_group",
            "other_terms"} <= set(trials)
    assert "OR" in trials["intervention"]["description"]
    literature = properties("search_medical_literature")
    assert {"query", "publication_types", "since_year", "newest_first"} <= set(literature)
    kinds = literature["publication_types"]["anyOf"][0]["items"]["enum"]
    assert set(kinds) == {"meta-analysis", "systematic review", "randomized controlled trial", "guideline", "review"}
    safety = properties("check_drug_safety")
    assert {"drug_name", "topic", "other_drugs"} <= set(safety)
    assert "pregnancy" in safety["topic"]["anyOf"][0]["enum"]

"""Everyday phrasings (issue 26, item 5), in oracle mode (code's part only): each class of the issue's "did not
recognise" list, in new wording written before any change, is either decided right by code or left unsure (the
model shown the candidates, or the clinician asked) — never decided wrong, never answered about the wrong patient.

Classes: a prescription being thought about ("thinking co-amoxiclav 625 tds for five days"); a follow-up "what about
<drug + dose>"; a switch of patient with a question ("switch to Amina Okafor. how are her kidneys doing?"); a
question about the active patient's organ ("how are her kidneys doing?"); a drug with a result ("should I worry about
metformin with that eGFR?"); a reaction to record ("record that she gets a rash with sulfa drugs"); a drug with "her
other meds".

First pass (``decide`` + the extractors on main before this work, 30 variants): 7 right, 15 unsure, 8 WRONG — two
switches of patient read the active patient's record, three drug-with-result questions became record queries (the
drug dropped), two "her other meds" questions left the drug list to the model, one went to the drug's label alone.
After: 21 decided right by code, 9 unsure, 0 wrong (the test prints the figures)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docgemma.eval.golden import Session, run_session
from docgemma.eval.oracle import golden_assistant

ACTIVE = {"id": "go-101", "name": "Grace Okonkwo"}
FOUND = {"status": "success", "data": {"query": "Grace Okonkwo", "matches": [
    {"id": "go-101", "name": "Grace Okonkwo", "birth_date": "1949-07-21", "gender": "female"}]}}
OK = {"status": "success", "data": {"result": "synthetic"}}


@dataclass(frozen=True)
class Case:
    message: str
    #: The one action code may decide (None: it must stay unsure).
    tool: str | None
    #: Arguments the decided action must have.
    args: dict[str, Any] = field(default_factory=dict)


def found(name: str, pid: str) -> dict[str, Any]:
    return {"status": "success", "data": {"query": name, "matches": [{"id": pid, "name": name, "gender": "female"}]}}


CASES = [
    # a prescription being thought about: a card with these values, or unsure
    Case("chest infection again, was going to give doxy 100 od for a week", "prescribe_medication",
         {"medication_name": "doxycycline"}),
    Case("UTI - considering nitrofurantoin 100mg bd x3 days", "prescribe_medication", {"medication_name": "nitrofurantoin"}),
    Case("cellulitis on the shin, probably fluclox 500 qds for 7 days", "prescribe_medication",
         {"medication_name": "flucloxacillin"}),
    Case("thinking of starting her on amlodipine 5 once a day", "prescribe_medication", {"medication_name": "amlodipine"}),
    # a follow-up about a drug and its dose
    Case("and if we used clarithromycin 500 bd instead?", "check_drug_safety", {"drug_name": "clarithromycin"}),
    Case("what about cefalexin 500mg qds for a week?", "check_drug_safety", {"drug_name": "cephalexin"}),
    Case("how about nitrofurantoin 50 qds then", "check_drug_safety", {"drug_name": "nitrofurantoin"}),
    # a switch of patient with a question: the patient named is searched for, never the active one read
    Case("move to Joseph Mwangi - what's his latest potassium?", "search_patient", {"name": "Joseph Mwangi"}),
    Case("next patient Kofi Asante. any allergies?", "search_patient", {"name": "Kofi Asante"}),
    Case("ok now Samuel Kariuki, how's his blood pressure been?", "search_patient", {"name": "Samuel Kariuki"}),
    Case("switching to Fatima Bello now - any allergies on file?", "search_patient", {"name": "Fatima Bello"}),
    # a question about the active patient's organ or control
    Case("how's his liver function looking?", "query_patient_data", {"patient_id": "go-101"}),
    Case("what's her renal function like", "query_patient_data", {"patient_id": "go-101"}),
    Case("kidneys ok?", "query_patient_data", {"patient_id": "go-101"}),
    Case("how is her sugar control lately?", "query_patient_data", {"patient_id": "go-101"}),
    # a drug with a result: the drug's label for that organ (or unsure), never a record query that drops the drug
    Case("is ramipril a problem with her potassium?", "check_drug_safety", {"drug_name": "ramipril"}),
    Case("any concern giving ibuprofen with his kidneys?", "check_drug_safety", {"drug_name": "ibuprofen"}),
    Case("is nitrofurantoin ok with that creatinine?", "check_drug_safety", {"drug_name": "nitrofurantoin"}),
    Case("metformin ok with her eGFR?", "check_drug_safety", {"drug_name": "metformin"}),
    # a reaction to record: the substance is a substance
    Case("document that he gets hives with penicillins", "add_allergy", {"substance": "penicillins"}),
    Case("please record she reacts to sulfa with a rash", "add_allergy", {"substance": "sulfonamides"}),
    Case("record he gets lip swelling with ACE inhibitors", "add_allergy", {"substance": "ACE inhibitors"}),
    Case("log that she's intolerant of codeine - vomiting", "add_allergy", {"substance": "codeine"}),
    Case("add that he had a rash on his arms with sulfa drugs", "add_allergy", {"substance": "sulfonamides"}),
    # a drug with her own medicines: the interaction check (the record gives the list)
    Case("does clarithromycin interact with anything she's on?", "check_drug_interactions"),
    Case("any interactions between fluconazole and his current medications?", "check_drug_interactions"),
    Case("check citalopram against her other medicines", "check_drug_interactions"),
    Case("could tramadol interact with her regular meds?", "check_drug_interactions"),
    Case("is there any interaction between doxycycline and her other meds?", "check_drug_interactions"),
    Case("she's on amlodipine; does diltiazem interact with her other meds?", "check_drug_interactions"),
]


def _turns(case: Case) -> list[dict[str, Any]]:
    """The active patient first; then the case, with a mock for whatever tool runs. The oracle is told the turn is
    a direct answer, so a turn code leaves unsure runs no tool the oracle chose (only code's part is measured)."""
    mocks: list[dict[str, Any]] = [OK]
    if case.tool == "search_patient":
        mocks = [found(case.args["name"], "pt-777"), OK]
    turn = {"user_input": case.message, "expected_intent": "DIRECT", "mock_tool_results": mocks}
    return [{"user_input": "Find patient Grace Okonkwo", "mock_tool_result": FOUND}, turn]


def test_everyday_phrasings_are_decided_right_or_left_unsure() -> None:
    assert len(CASES) == 30
    wrong, decided = [], 0
    for i, case in enumerate(CASES):
        assistant, ctx, registry = golden_assistant()
        record = list(run_session(assistant, Session(f"e{i}", "", _turns(case)), ctx, registry, "everyday"))[1]
        if not record["decided_by_rule"]["intent_classify"]:
            continue
        decided += 1
        args = record["args"] or {}
        if case.tool == "check_drug_interactions" and record["tool"] is None:
            # The golden assistant reads no record: "her other meds" is then asked for, never guessed.
            assert "could NOT be read from the record" in record["answer"], record["answer"]
            continue
        if record["tool"] != case.tool or any(args.get(k) != v for k, v in case.args.items()):
            wrong.append((case.message, record["tool"], args))
        if record["tool"] in ("query_patient_data", "get_patient_chart") and args.get("patient_id") != "go-101":
            wrong.append((case.message, "another patient's record", args))
    assert not wrong
    print(f"\neveryday phrasings: {decided} of {len(CASES)} decided by code, all right; {len(CASES) - decided} unsure")

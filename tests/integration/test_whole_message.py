"""A decision reads the whole message (issue 26, oracle mode: code's part only, no model asked for anything).

Three classes, each from one case of the issue, with held-out variants written before the fix:

* every drug of a list is kept, when a context sentence names some of them first ("He's on clopidogrel and
  aspirin … Check interactions between clopidogrel, aspirin, and pantoprazole.");
* the request sentence's drug is the one looked up; a drug of a context sentence is set aside ("His B12 came back
  at 98. Folate is normal. Check safety profile of cyanocobalamin injection.");
* "once nightly" is once a day at night; a single dose is said with words that say so (stat, once only,
  single dose; since issue 42 also "once" as the whole frequency, ``tests/unit/test_dose_reading.py``).

First pass, before the fix (``decide`` + the tool's extractor on each message): lists 1 of 6 kept every drug (the
five whose context sentence named two drugs lost the rest of the list at the first comma); request-sentence drug 0
of 6 (the context drug was ``drug_name`` and the asked one ``other_drugs``: folic acid looked up for "Folate");
"once nightly" 7 of 7 right already on main (the frequency stays as written and is read as once a day).
"""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.clinical.dosing import parse_frequency
from docgemma.eval.golden import Session, run_session
from docgemma.eval.oracle import golden_assistant

FOUND = {"status": "success", "data": {"query": "Grace Okonkwo", "matches": [
    {"id": "go-101", "name": "Grace Okonkwo", "birth_date": "1949-07-21", "gender": "female"}]}}
OK = {"status": "success", "data": {"result": "synthetic"}}


def run(*messages: str) -> list[dict[str, Any]]:
    """Each message as a turn after "Find patient Grace Okonkwo" (an active patient), on the oracle; no turn gives the
    oracle argument values, so any argument code did not fill would be missing."""
    assistant, ctx, registry = golden_assistant()
    turns = [{"user_input": "Find patient Grace Okonkwo", "mock_tool_result": FOUND}]
    turns += [{"user_input": m, "mock_tool_result": OK} for m in messages]
    records = list(run_session(assistant, Session("s", "", turns), ctx, registry, "whole-message"))
    return records[1:]


LISTS = [
    ("He's on clopidogrel and aspirin after his stent. Check interactions between clopidogrel, aspirin, and "
     "pantoprazole.", ["clopidogrel", "aspirin", "pantoprazole"]),
    ("She takes warfarin and amiodarone at home. Any interactions between warfarin, amiodarone and fluconazole?",
     ["warfarin", "amiodarone", "fluconazole"]),
    ("Already on sertraline and tramadol. Check interactions between sertraline, tramadol, and linezolid.",
     ["sertraline", "tramadol", "linezolid"]),
    ("He's on metformin and lisinopril. Check interactions between metformin, lisinopril, ibuprofen and furosemide.",
     ["metformin", "lisinopril", "ibuprofen", "furosemide"]),
    ("Currently taking simvastatin. Check for interactions between simvastatin, amlodipine, and clarithromycin.",
     ["simvastatin", "amlodipine", "clarithromycin"]),
    ("on digoxin and verapamil. please check interactions between digoxin, verapamil and amiodarone",
     ["digoxin", "verapamil", "amiodarone"]),
]

REQUEST_SENTENCE = [
    ("His B12 came back at 98. Folate is normal. Check safety profile of cyanocobalamin injection.", "cyanocobalamin"),
    ("Her INR was 4.2 on warfarin last week. Check safety of fluconazole.", "fluconazole"),
    ("He has been on metformin for years. Check FDA warnings for empagliflozin.", "empagliflozin"),
    ("Potassium is 5.9 and she takes lisinopril. Check the safety profile of spironolactone.", "spironolactone"),
    ("TSH is high on levothyroxine. Check label warnings for amiodarone.", "amiodarone"),
    ("Iron is low, she had ferrous sulfate before. Look up the safety of iron sucrose infusion.", "iron sucrose"),
]

FREQUENCIES = [
    ("Start atorvastatin 40 mg once nightly", None), ("Start simvastatin 20 mg once nightly", None),
    ("Prescribe amitriptyline 10 mg once at night", None), ("Start melatonin 2 mg nightly", None),
    ("Give zopiclone 3.75 mg once only", 1), ("Give ceftriaxone 1 g stat", 1),
    ("Prescribe doxycycline 200 mg single dose", 1),
]


def test_every_drug_of_a_list_is_kept() -> None:
    records = run(*(m for m, _ in LISTS))
    for (message, drugs), record in zip(LISTS, records, strict=True):
        assert record["decided_by_rule"] == {"intent_classify": True, "tool_select": True}, message
        assert record["tool"] == "check_drug_interactions", message
        assert record["args"]["drug_names"] == drugs, message


def test_the_request_sentence_drug_is_looked_up_and_context_drugs_set_aside() -> None:
    records = run(*(m for m, _ in REQUEST_SENTENCE))
    for (message, drug), record in zip(REQUEST_SENTENCE, records, strict=True):
        assert record["decided_by_rule"]["tool_select"], message
        assert record["tool"] == "check_drug_safety", message
        assert record["args"]["drug_name"] == drug and not record["args"].get("other_drugs"), message


@pytest.mark.parametrize(("message", "count"), FREQUENCIES)
def test_once_nightly_is_once_daily_and_once_alone_needs_single_dose_words(message: str, count: int | None) -> None:
    record = run(message)[0]
    assert record["tool"] == "prescribe_medication" and record["decided_by_rule"]["tool_select"]
    frequency = parse_frequency(record["args"]["frequency"])
    assert frequency is not None and (frequency.frequency, frequency.period, frequency.period_unit) == (1, 1.0, "d")
    assert frequency.count == count, message

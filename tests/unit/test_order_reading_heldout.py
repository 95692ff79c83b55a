"""Held-out variants for issue 30 item 7 (reading an order right or refusing it), written BEFORE the fix and apart
from the phrasings the adversarial pass quoted: each is another member of a class of failure (a separator read as
the wrong one, a number in words or exponent guessed, a sign taken into the drug's name, a frequency dropped, a
negated write request turned into the positive write). The fix was not tuned on them; their first-pass and final
results are in the branch's report.

A dose is right when it is read as the number the text means, or refused (``parse_dose`` None and
``dose_refusal`` says why); it is wrong when any other number is read. The order keeps the dose as typed."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.agent.patterns import remaining_tools
from docgemma.agent.rules import decide
from docgemma.clinical.dosing import dose_refusal, parse_dose, parse_frequency
from docgemma.clinical.entities import extract_entities
from docgemma.tools.order_extract import prescription_args
from docgemma.tools.registry import default_registry

REFUSED = "refused"
REG = default_registry()
WRITES = {s.name for s in REG if s.writes}
ACTIVE = {"id": "gm-001", "name": "Grace Mensah"}

# (dose text, the value in its unit it means, or the values acceptable: the meaning or a refusal)
DOSES: list[tuple[str, tuple[Any, ...]]] = [
    ("metformin 2,500 mg", (2500.0, REFUSED)),
    ("heparin 25,000 units", (25000.0, REFUSED)),
    ("amoxicillin 1,250 mg", (1250.0, REFUSED)),
    ("paracetamol 1.000 mg", (REFUSED,)),
    ("12.500 mg", (REFUSED,)),
    ("2,5 mg", (2.5, REFUSED)),
    ("0,25 mg", (0.25, REFUSED)),
    ("1,5,00 mg", (REFUSED,)),
    ("5 000 mg", (5000.0, REFUSED)),
    ("5'000 mg", (5000.0, REFUSED)),
    (".5 mg", (0.5, REFUSED)),
    ("ten mg", (10.0, REFUSED)),
    ("twenty five mg", (25.0, REFUSED)),
    ("two hundred and fifty milligrams", (250.0, REFUSED)),
    ("one thousand two hundred mg", (1200.0, REFUSED)),
    ("half a tablet", (0.5, REFUSED)),
    ("2e3 mg", (2000.0, REFUSED)),
    ("1.5e2 mg", (150.0, REFUSED)),
    ("1x10^4 units", (10000.0, REFUSED)),
    ("-10 mg", (REFUSED, -10.0)),
    ("−5 mg", (REFUSED, -5.0)),
    ("minus 5 mg", (REFUSED, -5.0)),
    ("500 mg", (500.0,)),
    ("1,000.5 mg", (1000.5, REFUSED)),
]


def _read(text: str) -> Any:
    dose = parse_dose(text)
    if dose is None:
        assert dose_refusal(text), f"{text!r}: no dose read and no reason given"
        return REFUSED
    return dose.value


@pytest.mark.parametrize(("text", "allowed"), DOSES)
def test_a_dose_is_read_as_meant_or_refused(text: str, allowed: tuple[Any, ...]) -> None:
    assert _read(text) in allowed


# (message, drug, the dose text the order must keep)
ORDERS = [
    ("Prescribe lisinopril -10 mg daily", "lisinopril", "-10 mg"),
    ("Start metformin 2,500 mg daily", "metformin", "2,500 mg"),
    ("Give paracetamol 1.000 mg qds", "paracetamol", "1.000 mg"),
    # Written first as "forty mg"; the design that followed shows a number read from words in digits (the typed
    # words go to the order's note), so that the card shows the number read: the one expectation changed.
    ("Prescribe furosemide forty mg daily", "furosemide", "40 mg"),
    ("Start heparin 2e4 units bd", "heparin", "2e4 units"),
    ("Prescribe warfarin 3 kg daily", "warfarin", "3 kg"),
    ("Start amlodipine .5 mg daily", "amlodipine", ".5 mg"),
]


@pytest.mark.parametrize(("message", "drug", "dose"), ORDERS)
def test_the_order_keeps_the_drug_and_the_dose_as_typed(message: str, drug: str, dose: str) -> None:
    args = prescription_args(message, extract_entities(message), "gm-001")
    assert args["medication_name"].lower() == drug
    assert args["dosage"] == dose


# (message, the frequency words the order must keep, doses per day read — None: kept as text, not read)
FREQUENCIES: list[tuple[str, str, float | None]] = [
    ("Give morphine 2 mg IV every ten minutes", "every ten minutes", 144.0),
    ("Give morphine 2 mg IV q10min", "q10min", 144.0),
    ("Give adrenaline 1 mg every 3-5 minutes", "every 3-5 minutes", 480.0),
    ("Give salbutamol 5 mg nebulised every quarter hour", "every quarter hour", 96.0),
    ("Give glucagon 1 mg every half an hour", "every half an hour", 48.0),
    ("Give metoclopramide 10 mg/15min", "/15min", 96.0),
    ("Start heparin 1000 units/hour by continuous infusion", "continuous", None),
    ("Give paracetamol 500 mg ten times a day", "ten times a day", 10.0),
    ("Give codeine 30 mg eight times daily", "eight times daily", 8.0),
    ("Give ondansetron 4 mg every 45 mins", "every 45 mins", 32.0),
    ("Start simvastatin 20 mg once at bedtime", "once at bedtime", 1.0),
    ("Start mirtazapine 15 mg once in the evening", "once in the evening", 1.0),
    ("Start levothyroxine 50 mcg once every morning", "once every morning", 1.0),
    ("Give ceftriaxone 1 g IM once only", "once only", 1.0),
]


@pytest.mark.parametrize(("message", "words", "per_day"), FREQUENCIES)
def test_a_typed_frequency_is_kept_and_read_where_it_has_a_meaning(message: str, words: str,
                                                                   per_day: float | None) -> None:
    args = prescription_args(message, extract_entities(message), "gm-001")
    assert words.lower() in args["frequency"].lower()
    timing = parse_frequency(args["frequency"])
    if per_day is None:
        assert timing is None or not timing.scheduled or timing.count != 1
    else:
        assert timing is not None and timing.per_day == pytest.approx(per_day)


def _state(query: str) -> Any:
    return {"user_query": query, "extracted_entities": extract_entities(query), "active_patient": ACTIVE}


NEGATED = [
    "She is not allergic to penicillin, please document that",
    "Record that he has no allergy to sulfa drugs",
    "Patient denies any drug allergies, please record",
    "He never had a reaction to amoxicillin, document that",
    "Please record that a latex allergy was ruled out",
    "She's no longer on metformin, please record that",
    "Discontinue atorvastatin",
    "Cease the amlodipine please",
    "He doesn't take warfarin any more, please add that",
    "Stop her lisinopril",
]


@pytest.mark.parametrize("query", NEGATED)
def test_a_negated_write_request_never_becomes_the_write(query: str) -> None:
    state = _state(query)
    assert not set(remaining_tools(state, REG)) & WRITES
    decision = decide(state, REG)
    assert decision is None or decision.tool not in WRITES


POSITIVE = [
    ("She is allergic to latex, please record that", "add_allergy"),
    # Issue 42 item 6: "NKDA" asked to be written is the coded "no known drug allergy" entry (its own card, refused
    # while an active drug allergy is on record), no longer a negated write.
    ("NKDA - please document", "add_allergy"),
    ("No known allergies, add that to her chart", "add_allergy"),
    ("Prescribe amoxicillin 500 mg tds, she is not allergic to penicillin", "prescribe_medication"),
    ("Stop metformin and start sitagliptin 50 mg daily", "prescribe_medication"),
]


@pytest.mark.parametrize(("query", "tool"), POSITIVE)
def test_a_positive_write_beside_a_negation_is_still_proposed(query: str, tool: str) -> None:
    assert tool in remaining_tools(_state(query), REG)


def test_the_order_beside_a_stop_is_for_the_started_drug() -> None:
    query = "Stop metformin and start sitagliptin 50 mg daily"
    assert prescription_args(query, extract_entities(query), "gm-001")["medication_name"].lower() == "sitagliptin"

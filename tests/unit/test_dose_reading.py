"""Issue 30 item 7: a dose, a frequency and a negated write request are read right or refused, never guessed.

* numbers by locale-safe rules (``docgemma.clinical.numbers``): "5,000" thousands, "2,5" a decimal comma, "1.000",
  "5 000", ".5", "1e4" refused with the form to write; words read by a small parser or refused; the sign kept;
* the order's fields: the drug's name never takes a dose's sign or number; a dose that cannot be read reaches the
  order as typed; every typed frequency is kept ("once nightly" is once daily; "once" alone, issue 42, one dose);
* a negated write request ("NOT allergic to latex", "stop X", "no longer on X") never becomes the positive write.
"""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.agent.patterns import is_write_request, negated_write, remaining_tools
from docgemma.agent.rules import decide
from docgemma.clinical.dosing import (
    canonical_dose,
    dosage_instruction,
    dose_refusal,
    frequency_match,
    parse_dose,
    parse_frequency,
)
from docgemma.clinical.entities import extract_entities
from docgemma.clinical.numbers import Refused, read_number
from docgemma.tools.order_extract import allergy_args, prescription_args
from docgemma.tools.registry import default_registry

REG = default_registry()
WRITES = {s.name for s in REG if s.writes}


@pytest.mark.parametrize(("text", "value"), [
    ("500", 500.0), ("0.5", 0.5), ("5,000", 5000.0), ("12,500", 12500.0), ("1,000,000", 1e6), ("1,000.5", 1000.5),
    ("2,5", 2.5), ("0,25", 0.25), ("0,250", 0.25), ("0.125", 0.125), ("1000.5", 1000.5), ("-5", -5.0), ("−5", -5.0),
    ("minus 5", -5.0), ("five thousand", 5000.0), ("two hundred and fifty", 250.0), ("twenty-five", 25.0),
    ("one and a half", 1.5), ("half", 0.5), ("a thousand", 1000.0), ("one thousand two hundred", 1200.0),
])
def test_a_number_with_one_reading_is_read(text: str, value: float) -> None:
    assert read_number(text) == value


@pytest.mark.parametrize(("text", "why"), [
    ("1.000", "could be 1 or 1000"), ("5.000", "could be 5 or 5000"), ("12.500", "could be 12.5 or 12500"),
    ("5 000", "write 5000"), ("5'000", "write 5000"), (".5", "write 0.5"), ("1e4", "(10000)"), ("1.5e2", "(150)"),
    ("1x10^4", "(10000)"), ("10^3", "(1000)"), ("1,5,00", "no single reading"), ("1.000,5", "no single reading"),
    ("five five", "write it in digits"), ("thousand hundred", "write it in digits"),
])
def test_a_number_that_could_mean_two_is_refused_with_the_form_to_write(text: str, why: str) -> None:
    refused = read_number(text)
    assert isinstance(refused, Refused) and why in refused.reason


@pytest.mark.parametrize(("text", "mg"), [
    ("amlodipine 5,000 mg", 5000.0), ("five thousand mg", 5000.0), ("2,5 mg", 2.5), ("half a tablet", None),
    ("1 g", 1000.0), ("500-1000 mg", 1000.0), ("-5 mg", -5.0),
])
def test_parse_dose_reads_the_number_meant(text: str, mg: float | None) -> None:
    dose = parse_dose(text)
    assert dose is not None and dose.mg == mg and dose_refusal(text) is None
    if mg is None:
        assert dose.value == 0.5 and dose.display == "tablet"


@pytest.mark.parametrize(("text", "why"), [
    ("1.000 mg", "could be 1 or 1000"), ("1e4 mg", "plain digits (10000)"), ("5 000 mg", "write 5000"),
    (".5 mg", "write 0.5"), ("10 mg/kg", "per body weight"), ("lots", "no number with a unit"),
    ("five five mg", "write it in digits"),
])
def test_dose_refusal_says_why_a_dose_cannot_be_read(text: str, why: str) -> None:
    assert parse_dose(text) is None
    assert why in (dose_refusal(text) or "")


@pytest.mark.parametrize(("text", "why"), [
    # Found by probing after the fix: a strength read as the dose beside a count, a number read from its last part,
    # a range's low end read in its high end's unit.
    ("2 x 500 mg", "count beside the strength"), ("2x500mg", "count beside the strength"),
    ("two 500 mg tablets", "count beside the strength"), ("500 mg x 2", "count beside the strength"),
    ("1, 000 mg", "number in parts"), ("1 ,000 mg", "number in parts"), ("1 000,5 mg", "number in parts"),
    ("2 500 mg", "write 2500"), ("500mg-1g", "two units"), ("1,5000 mg", "no single reading"),
])
def test_a_dose_whose_strength_is_not_the_dose_given_is_refused(text: str, why: str) -> None:
    assert parse_dose(text) is None and why in (dose_refusal(text) or "")


@pytest.mark.parametrize(("text", "value", "unit"), [
    ("500 mg x7d", 500.0, "mg"), ("500 mg x 5 days", 500.0, "mg"), ("one 500 mg tablet", 500.0, "mg"),
    ("1 x 500 mg", 500.0, "mg"), ("500 mg tablets", 500.0, "mg"), ("5mg to 10mg", 10.0, "mg"), ("½ tablet", 0.5, "tablet"),
    ("2½ tablets", 2.5, "tablet"), ("5 mgs", 5.0, "mg"), ("10 mls", 10.0, "mL"),
])
def test_the_forms_beside_a_dose_that_do_not_change_it_are_read(text: str, value: float, unit: str) -> None:
    dose = parse_dose(text)
    assert dose is not None and (dose.value, dose.display) == (value, unit)


def test_a_count_beside_the_strength_reaches_the_order_as_typed() -> None:
    assert order("Prescribe amoxicillin 2 x 500 mg tds")["dosage"] == "2 x 500 mg"
    assert order("Prescribe amoxicillin 500 mg x 2 tds")["dosage"] == "500 mg x 2"


def test_a_body_mass_is_read_as_such_not_as_a_dose() -> None:
    dose = parse_dose("5 kg")
    assert dose is not None and dose.family == "body_mass"


def test_the_card_shows_the_number_read_when_it_was_typed_otherwise() -> None:
    assert canonical_dose("five thousand mg") == "5000 mg" and canonical_dose("2,5 mg") == "2.5 mg"
    assert canonical_dose("5,000 mg") is None and canonical_dose("500 mg") is None and canonical_dose("1.000 mg") is None


@pytest.mark.parametrize(("text", "per_day"), [
    ("every five minutes", 288.0), ("q15m", 96.0), ("q 15 min", 96.0), ("every half hour", 48.0),
    ("every 30 min", 48.0), ("/5min", 288.0), ("/hour", 24.0), ("twelve times daily", 12.0), ("hourly", 24.0),
    ("once nightly", 1.0), ("once at night", 1.0), ("once in the morning", 1.0), ("at bedtime", 1.0),
    ("twice daily", 2.0), ("every 4-6 hours", 6.0), ("q8h", 3.0), ("every other day", 0.5),
    # Found by probing after the fix: a number of doses per period misread as one per period, an ordinal read as
    # a unit ("every second day" as every second), a half hour dropped, two times of day read as one.
    ("two times per day", 2.0), ("2/day", 2.0), ("x3/day", 3.0), ("three times an hour", 72.0),
    ("twice a night", 2.0), ("every second day", 0.5), ("every 2nd day", 0.5), ("alternate days", 0.5),
    ("fortnightly", 1 / 14), ("every hour and a half", 16.0), ("every two and a half hours", 9.6),
    ("q1/2h", 48.0), ("q.i.d.", 4.0), ("b.i.d", 2.0), ("in the morning and at night", 2.0),
    ("morning and evening", 2.0), ("each morning", 1.0), ("one time in the day", 1.0), ("three times in the day", 3.0),
])
def test_frequencies_are_read(text: str, per_day: float) -> None:
    timing = parse_frequency(text)
    assert timing is not None and timing.count != 1 and timing.per_day == pytest.approx(per_day)


@pytest.mark.parametrize(("message", "words"), [
    ("Give X 5 mg every second day", "every second day"), ("Give X 5 mg two times per day", "two times per day"),
    ("Give X 5 mg x3/day", "x3/day"), ("Give X 5 mg every hour and a half", "every hour and a half"),
    ("Give X 5 mg every two and a half hours", "every two and a half hours"), ("Give X 5 mg q1/2h", "q1/2h"),
    ("Give X 5 mg in the morning and at night", "in the morning and at night"), ("Give X 5 mg twice", "twice"),
    ("Give X 5 mg every few hours", "every few hours"), ("Give X 5 mg on alternate days", "on alternate days"),
])
def test_the_frequency_words_are_found_whole(message: str, words: str) -> None:
    found = frequency_match(message)
    assert found is not None and found[0] == words


@pytest.mark.parametrize("text", ["stat", "once only", "single dose", "one dose", "as a one-off"])
def test_a_single_dose_needs_words_that_say_so(text: str) -> None:
    timing = parse_frequency(text)
    assert timing is not None and timing.count == 1


@pytest.mark.parametrize("text", ["continuously", "whenever", "once more", "once or twice", "once then review"])
def test_a_frequency_without_one_reading_is_not_read(text: str) -> None:
    assert parse_frequency(text) is None


@pytest.mark.parametrize("text", ["once", "Once", "ONCE", " once ", "once prn", "once as needed"])
def test_once_as_the_whole_frequency_is_one_dose_and_says_how_it_was_read(text: str) -> None:
    """Issue 42 (h081, h083): "once" in an order's frequency field is the one-off order of the order entry systems;
    it was refused as unreadable. It is written as one dose (Timing.repeat.count 1), and the card says so."""
    timing = parse_frequency(text)
    assert timing is not None and timing.count == 1 and timing.bare_once and timing.per_day == 1.0
    assert timing.described().startswith("a single dose")
    assert dosage_instruction("2 mg", text)["timing"] == {"repeat": {"count": 1}}


@pytest.mark.parametrize(("message", "words"), [
    ("Give vincristine 2 mg once", "once"), ("Give vincristine 2 mg once IV", "once"), ("Give X 5 mg once.", "once"),
    ("Give ceftriaxone 2 g once for Grace Mensah", "once"), ("Give KCl 10 mmol once, over 1 hour", "once"),
    # "once" as a conjunction is no frequency: it was taken as one, and the order's own ("qds") left unread.
    ("Prescribe paracetamol 1 g, once he is eating qds", "qds"), ("Prescribe X 500 mg, review once cultures back", None),
])
def test_once_is_the_orders_frequency_only_where_it_ends_the_order(message: str, words: str | None) -> None:
    found = frequency_match(message)
    assert (found[0] if found else None) == words


@pytest.mark.parametrize(("text", "per_day"), [
    ("once daily", 1.0), ("once a day", 1.0), ("once nightly", 1.0), ("once in the morning", 1.0),
    ("once weekly", 1 / 7), ("once a week", 1 / 7), ("once monthly", 1 / 30), ("once every 2 weeks", 1 / 14),
])
def test_once_with_a_period_keeps_its_meaning(text: str, per_day: float) -> None:
    timing = parse_frequency(text)
    assert timing is not None and timing.count is None and not timing.bare_once
    assert timing.per_day == pytest.approx(per_day)


@pytest.mark.parametrize(("text", "said"), [
    ("once", "a single dose"), ("stat", "a single dose"), ("tds", "3 doses a day"), ("once daily", "1 dose a day"),
    ("every 6 hours as needed", "4 doses a day as needed"), ("once weekly", "one dose every 7 days"),
    ("prn", "no schedule, as needed"),
])
def test_the_card_says_how_the_frequency_was_read(text: str, said: str) -> None:
    timing = parse_frequency(text)
    assert timing is not None and timing.described() == said


def order(message: str) -> dict[str, Any]:
    return prescription_args(message, extract_entities(message), "gm-001")


@pytest.mark.parametrize(("message", "drug", "dosage", "frequency"), [
    ("Prescribe amlodipine 5,000 mg once daily", "amlodipine", "5,000 mg", "once daily"),
    ("Prescribe amlodipine 1.000 mg once daily", "amlodipine", "1.000 mg", "once daily"),
    ("Prescribe amlodipine -5 mg once daily", "amlodipine", "-5 mg", "once daily"),
    ("Prescribe amlodipine five thousand mg daily", "amlodipine", "5000 mg", "daily"),
    ("Prescribe amlodipine 1e4 mg daily", "amlodipine", "1e4 mg", "daily"),
    ("Prescribe amlodipine 5 kg daily", "amlodipine", "5 kg", "daily"),
    ("Start atorvastatin 40 mg once nightly", "atorvastatin", "40 mg", "once nightly"),
    ("Give morphine 2 mg every five minutes", "morphine", "2 mg", "every five minutes"),
    ("Give oxycodone 80mg/5min", "oxycodone", "80 mg", "/5min"),
    ("Give adrenaline 1 mg every half hour", "adrenaline", "1 mg", "every half hour"),
    ("Give morphine 2 mg q15m", "morphine", "2 mg", "q15m"),
    ("Start heparin 1000 units continuously", "heparin", "1000 units", "continuously"),
    ("Give paracetamol 1 g twelve times daily", "paracetamol", "1 g", "twelve times daily"),
    ("Prescribe 500 mg amoxicillin tds", "amoxicillin", "500 mg", "tds"),
])
def test_the_order_keeps_the_drug_and_what_was_typed(message: str, drug: str, dosage: str, frequency: str) -> None:
    args = order(message)
    assert (args["medication_name"], args["dosage"], args["frequency"]) == (drug, dosage, frequency)
    assert "not understood" not in args.get("notes", "")


def test_a_dose_read_from_words_keeps_the_typed_words_in_the_note() -> None:
    assert order("Prescribe amlodipine five thousand mg daily")["notes"] == "dose typed as: five thousand mg"


def state(query: str) -> Any:
    return {"user_query": query, "extracted_entities": extract_entities(query),
            "active_patient": {"id": "gm-001", "name": "Grace Mensah"}}


@pytest.mark.parametrize(("query", "said"), [
    ("He is NOT allergic to latex, please record that", "'NOT allergic to latex' is not recorded as an allergy"),
    ("Patient denies allergies, please document", "'denies allergies' is not recorded as an allergy"),
    # "No known drug allergies - please record" is the coded NKDA entry's card since issue 42 item 6
    # (tests/integration/test_allergy_negation.py); a denial stays a negated write.
    ("Denies any drug allergies - please record", "'Denies any drug allergies' is not recorded as an allergy"),
    ("Record that she is not allergic to aspirin", "'not allergic to aspirin' is not recorded as an allergy"),
    ("She is no longer on amlodipine, please record that", "'no longer on amlodipine' is not a prescription"),
    ("stop amlodipine", "'stop amlodipine' is not a prescription"),
    ("she doesn't take amlodipine anymore, add that", "'doesn't take amlodipine anymore' is not a prescription"),
])
def test_a_negated_write_request_is_answered_and_never_written(query: str, said: str) -> None:
    s = state(query)
    sentence = negated_write(query, s["extracted_entities"]["drug_mentions"])
    assert sentence is not None and sentence.startswith(said) and sentence.endswith("nothing was written to the record.")
    assert not is_write_request(query)
    assert not set(remaining_tools(s, REG)) & WRITES
    decision = decide(s, REG)
    assert decision is not None and (decision.intent, decision.tool, decision.rule) == ("DIRECT", None, "negated_write")


@pytest.mark.parametrize("query", [
    # Found by probing after the fix: more ways of saying there is no allergy, or no order.
    "She has no penicillin allergy, please record", "add to her allergies: none", "Allergies: nil known, document that",
    "Latex allergy - negative, record that", "please record that she is not penicillin allergic",
    "She's not actually allergic to penicillin - remove and record", "The penicillin allergy is false, record that",
    "She doesn't have a latex allergy, add it", "Prescribe nothing, she's no longer on amlodipine",
    "Take her off amlodipine",
])
def test_more_negated_write_requests_are_never_written(query: str) -> None:
    s = state(query)
    assert negated_write(query, s["extracted_entities"]["drug_mentions"]) is not None
    assert not set(remaining_tools(s, REG)) & WRITES


@pytest.mark.parametrize(("query", "tool"), [
    ("She is not severely allergic to penicillin, just a rash, record it", "add_allergy"),
    ("She is allergic to penicillin and not to latex, record both", "add_allergy"),
    ("No allergy to latex, record allergy to penicillin", "add_allergy"),
    ("Document that he stopped smoking", None),
    ("Prescribe amoxicillin 500 mg tds, she is not allergic to penicillin", "prescribe_medication"),
    ("Stop metformin and start sitagliptin 50 mg daily", "prescribe_medication"),
    ("Record a penicillin allergy; she is not allergic to latex", "add_allergy"),
    ("She is allergic to latex, please record that", "add_allergy"),
    ("Note: denies drug allergies, stop metformin", "save_clinical_note"),
])
def test_a_positive_write_beside_a_negation_is_still_asked(query: str, tool: str | None) -> None:
    assert negated_write(query) is None and is_write_request(query)
    assert tool is None or tool in remaining_tools(state(query), REG)


@pytest.mark.parametrize("query", ["Record a penicillin allergy; she is not allergic to latex",
                                   "She is allergic to penicillin and not to latex, record both",
                                   "She is allergic to penicillin but not latex, please record",
                                   "No allergy to latex, record allergy to penicillin"])
def test_the_allergen_is_never_a_negated_substance(query: str) -> None:
    assert allergy_args(query, extract_entities(query), "gm-001")["substance"] == "penicillin"


@pytest.mark.parametrize("query", ["Is she not allergic to latex?", "Should I stop metformin before contrast?",
                                   "When to stop aspirin before surgery"])
def test_a_question_is_never_a_negated_write(query: str) -> None:
    assert negated_write(query) is None


@pytest.mark.parametrize(("text", "value"), [
    ("six point eight mg", 6.8), ("one point five mg", 1.5), ("zero point two five mg", 0.25),
    ("eleven thousand four hundred and thirteen point three units", 11413.3),
    ("twenty millimoles", 20.0), ("forty milliequivalents", 40.0),
])
def test_a_number_in_words_with_a_point_is_read_whole(text: str, value: float) -> None:
    """Found by the dose bench: "one point five mg" was read as 5 mg and "… thirteen point three units" as 3 units
    (the dose pattern caught only the words after "point"): a guess. Now read whole."""
    dose = parse_dose(text)
    assert dose is not None and dose.value == pytest.approx(value)


@pytest.mark.parametrize("text", ["take two, five mg", "five five mg", "six point mg", "one point twelve mg"])
def test_the_tail_of_a_number_in_words_is_never_read_as_the_dose(text: str) -> None:
    assert parse_dose(text) is None and dose_refusal(text)

"""Ward shortenings of drug names ("amox", "co-amox", "pip-taz", "vanc", "gent", "TMP-SMX") are the drug they
stand for, everywhere a drug is read: the entities, a multi-drug question's arguments (none dropped), and the named-
drug safety lines. Before: "co-amox" was amoxicillin alone, "co-trimox" amoxicillin (the dictionary reads "trimox"
as an amoxicillin brand), and "vanc", "gent", "pip-taz", "SMX-TMP", "metro", "doxy", "fluclox" were no drug at all."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.agent.prefill import prefill
from docgemma.agent.rules import decide
from docgemma.clinical.drug_shortenings import SHORTENINGS
from docgemma.clinical.entities import DrugDictionary, extract_entities
from docgemma.clinical.ingredients import resolve_local
from docgemma.tools.registry import default_registry

REG = default_registry()

CASES = [
    ("amox", "amoxicillin"), ("co-amox", "amoxicillin-clavulanate"), ("co-amoxiclav", "amoxicillin-clavulanate"),
    ("coamoxiclav", "amoxicillin-clavulanate"), ("pip-taz", "piperacillin-tazobactam"),
    ("pip-tazo", "piperacillin-tazobactam"), ("pip/taz", "piperacillin-tazobactam"),
    ("TMP-SMX", "trimethoprim-sulfamethoxazole"), ("SMX-TMP", "trimethoprim-sulfamethoxazole"),
    ("co-trimox", "trimethoprim-sulfamethoxazole"), ("vanc", "vancomycin"), ("vanco", "vancomycin"),
    ("gent", "gentamicin"), ("metro", "metronidazole"), ("cipro", "ciprofloxacin"), ("doxy", "doxycycline"),
    ("fluclox", "flucloxacillin"), ("flucl", "flucloxacillin"), ("ceftriax", "ceftriaxone"), ("cefalex", "cephalexin"),
    ("clari", "clarithromycin"), ("azithro", "azithromycin"), ("clinda", "clindamycin"), ("APAP", "acetaminophen"),
    ("HCTZ", "hydrochlorothiazide"), ("amio", "amiodarone"), ("MTX", "methotrexate"), ("TXA", "tranexamic acid"),
]


@pytest.mark.parametrize(("short", "canonical"), CASES)
def test_a_shortening_is_the_canonical_drug(short: str, canonical: str) -> None:
    assert DrugDictionary.find(f"is {short} ok for her?") == [canonical]


@pytest.mark.parametrize("short", sorted(SHORTENINGS))
def test_every_shortening_resolves_to_known_ingredients(short: str) -> None:
    """Each target is a name the ingredient resolver knows, so the safety checks read the shortened drug too."""
    assert resolve_local(SHORTENINGS[short]).identified, short


@pytest.mark.parametrize(("first", "second", "third"), [
    ("pip-taz", "vanc", "gent"), ("amox", "warfarin", "metro"), ("co-amox", "doxy", "cipro"),
    ("TMP-SMX", "methotrexate", "clari"), ("fluclox", "gent", "SMX-TMP"),
])
def test_no_shortening_is_dropped_from_a_multi_drug_question(first: str, second: str, third: str) -> None:
    query = f"Check interactions between {first}, {second} and {third}"
    state: Any = {"user_query": query, "extracted_entities": extract_entities(query), "active_patient": None}
    decision = decide(state, REG)
    assert decision is not None and decision.tool == "check_drug_interactions"
    names = prefill(REG[decision.tool], state)["drug_names"]
    assert names == [DrugDictionary.find(d)[0] for d in (first, second, third)]


@pytest.mark.parametrize("text", ["trials in Metro Manila", "a study from Gent", "Doxy is a nickname"])
def test_a_capitalised_word_that_is_also_a_place_or_name_is_no_drug(text: str) -> None:
    assert DrugDictionary.find(text) == []

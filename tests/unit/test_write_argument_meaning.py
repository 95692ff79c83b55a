"""A write's argument means what its field says (issue 26, item 1): a substance is a substance ("sulfa drugs" →
sulfonamides), never a pronoun or a preposition ("on her" was once recorded as an allergy's substance). Checked on
every golden file's write turn, on a generated set, and by TOOL_EXECUTE's validation, which refuses such a value
and asks for it.

First pass of the generated set (64 messages) before the fix: 15 failed — "sulfa", "sulfa drugs" and "sulpha" in
the five reaction-first templates ("record that she gets a rash with sulfa drugs") were not recognised at all (a
class is no drug mention); the allergy-first forms kept the written "sulfa drugs"; no generated value was a pronoun
or preposition, and none of the golden files' write turns gave one."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.patterns import remaining_tools
from docgemma.agent.prefill import prefill
from docgemma.agent.validation import validate
from docgemma.clinical.entities import extract_entities
from docgemma.clinical.function_words import only_function_words
from docgemma.tools.args import NOT_WRITTEN
from docgemma.tools.registry import default_registry

REG = default_registry()
GRACE = {"id": "gm-001", "name": "Grace Mensah"}
GOLDEN = sorted((Path(__file__).parents[2] / "golden_tests").glob("*.json"))


def state(query: str) -> Any:
    return {"user_query": query, "extracted_entities": extract_entities(query), "active_patient": GRACE}


def write_args(query: str) -> dict[str, dict[str, Any]]:
    """The arguments code gives each write tool the message needs."""
    s = state(query)
    return {name: prefill(REG[name], s) for name in remaining_tools(s, REG) if REG[name].writes}


def meaningless(args: dict[str, Any]) -> list[str]:
    # The unread words (``tools.args.NOT_WRITTEN``) are shown as a finding, never a value of the write.
    return [k for k, v in args.items() if k != "patient_id" and k not in NOT_WRITTEN
            and any(isinstance(x, str) and only_function_words(x) for x in (v if isinstance(v, list) else [v]))]


def golden_turns() -> list[str]:
    out = []
    for path in GOLDEN:
        doc = json.loads(path.read_text())
        turns = [t for s in doc.get("sessions", []) for t in s["user_inputs"]] + doc.get("single_turn", [])
        out += [t["user_input"] for t in turns if isinstance(t.get("user_input"), str)]
    return out


def test_no_write_argument_of_any_golden_turn_is_a_pronoun_or_preposition() -> None:
    turns = golden_turns()
    assert len(turns) > 300
    bad = [(q, tool, meaningless(args)) for q in turns for tool, args in write_args(q).items() if meaningless(args)]
    assert not bad


SUBSTANCES = [("sulfa drugs", "sulfonamides"), ("sulfa", "sulfonamides"), ("sulpha", "sulfonamides"),
              ("penicillin", "penicillin"), ("amoxicillin", "amoxicillin"), ("ACE inhibitors", "ACE inhibitors"),
              ("codeine", "codeine"), ("co-trimoxazole", "trimethoprim-sulfamethoxazole")]
TEMPLATES = ["record that she gets a rash with {s}", "please record he gets hives with {s}",
             "document that she had a rash on her arms with {s}", "log that he came out in hives on {s}",
             "record that she reacts to {s} with a rash", "add an allergy: {s}, rash",
             "she is allergic to {s} (rash), please record it", "record a {s} allergy for her, hives"]


@pytest.mark.parametrize(("template", "substance"), list(itertools.product(TEMPLATES, SUBSTANCES)))
def test_a_generated_allergy_entry_records_the_substance_never_a_pronoun(template: str,
                                                                        substance: tuple[str, str]) -> None:
    written, meant = substance
    args = write_args(template.format(s=written))
    assert set(args) == {"add_allergy"}, args
    assert not meaningless(args["add_allergy"])
    assert args["add_allergy"]["substance"].lower() in (meant.lower(), written.lower())


@pytest.mark.parametrize(("tool", "field", "value"), [
    ("add_allergy", "substance", "on her"), ("add_allergy", "substance", "him"), ("add_allergy", "reaction", "to the"),
    ("prescribe_medication", "medication_name", "her"), ("save_clinical_note", "note_text", "for him"),
])
def test_validation_refuses_a_write_value_that_is_only_a_pronoun_or_preposition(tool: str, field: str,
                                                                               value: str) -> None:
    base = {"add_allergy": {"patient_id": "gm-001", "substance": "penicillin", "reaction": "rash"},
            "prescribe_medication": {"patient_id": "gm-001", "medication_name": "amoxicillin", "dosage": "500 mg",
                                     "frequency": "three times daily"},
            "save_clinical_note": {"patient_id": "gm-001", "note_type": "progress",
                                   "note_text": "Reviewed on the ward, stable."}}[tool]
    assert validate(REG[tool], base, has_image=False).error is None
    checked = validate(REG[tool], {**base, field: value}, has_image=False)
    assert checked.error is not None and checked.error["error_type"] == "invalid_args"
    assert field in str(checked.error)


@pytest.mark.parametrize(("message", "substance"), [
    ("she told me sulfa antibiotics gave her hives years ago - add that to her allergies", "sulfonamides"),
    ("sulpha meds make him wheezy, please document it", "sulfonamides"),
    ("penicillin class antibiotics give him a rash, record it", "penicillins"),
])
def test_a_class_named_by_its_phrase_is_the_substance_not_the_word_antibiotics(message: str, substance: str) -> None:
    """Written last (issue 26 set): "sulfa antibiotics gave her hives" was recorded as an allergy to
    "anti-bacterial agents" — every antibiotic — because the drug dictionary read "antibiotics"."""
    from docgemma.clinical.entities import extract_entities
    from docgemma.tools.order_extract import allergy_args

    assert allergy_args(message, extract_entities(message), "p1")["substance"] == substance


@pytest.mark.parametrize(("message", "substance", "reaction"), [
    ("add allergy: aspirin - GI bleed", "aspirin", "GI bleed"),
    ("add allergy: aspirin \u2014 GI bleed", "aspirin", "GI bleed"),
    ("allergic to co-amoxiclav - rash", "co-amoxiclav", "rash"),
    ("add allergy: codeine (wheeze)", "codeine", "wheeze"),
    # found by review: a dash spaced on one side only, a reaction followed by "for this patient", a dash before the
    # substance (it introduces the allergy, not a reaction)
    ("add allergy: aspirin -GI bleed", "aspirin", "GI bleed"),
    ("Record an allergy to aspirin - GI bleed for this patient", "aspirin", "GI bleed"),
    ("Kofi Asante - allergic to sulfa, felt unwell", "sulfonamides", "not specified"),
])
def test_a_dash_separates_the_substance_from_its_reaction(message: str, substance: str, reaction: str) -> None:
    """Issue 26: "add allergy: aspirin - GI bleed" recorded the substance "aspirin - GI bleed" and no reaction
    (the substance ran to the end of the message; the dash was read as part of a name)."""
    from docgemma.clinical.entities import extract_entities
    from docgemma.tools.order_extract import allergy_args

    args = allergy_args(message, extract_entities(message), "p1")
    assert (args["substance"], args["reaction"]) == (substance, reaction)


@pytest.mark.parametrize(("message", "substance", "reaction"), [
    ("please document for Grace Mensah: latex -> facial swelling", "latex", "facial swelling"),
    ("Note for her: co-amoxiclav → rash", "co-amoxiclav", "rash"),
])
def test_a_dictated_allergy_reads_the_substance_before_the_arrow(message: str, substance: str, reaction: str) -> None:
    """The fifth set's "please document for X: latex -> facial swelling" became an allergy card whose substance was
    "not specified" (the clinician had written it)."""
    from docgemma.clinical.entities import extract_entities
    from docgemma.tools.order_extract import allergy_args

    args = allergy_args(message, extract_entities(message), "p1")
    assert args["substance"].lower() == substance and args["reaction"] == reaction


def test_no_write_argument_of_any_set_written_apart_is_a_pronoun_or_preposition() -> None:
    """Every write turn generated from the ten sets of template families written apart (3,960 turns when written):
    none gives a write field a value made only of pronouns or prepositions."""
    from docgemma.eval.router_corpus import generate, load_families

    sets = sorted((Path(__file__).parents[2] / "bench" / "data").glob("router_families_*.json"))
    assert len(sets) >= 10
    turns = [t.text for path in sets for t in generate(families=load_families(path))
             if t.label in REG and REG[t.label].writes]
    assert len(turns) > 3000
    bad = [(q, tool) for q in turns for tool, args in write_args(q).items() if meaningless(args)]
    assert not bad, bad[:10]

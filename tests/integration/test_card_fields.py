"""A card's fields hold only what the clinician or the record gave (issue 46): no internal or diagnostic text
("not understood: 'otitis media'", a rule's name, a probability) in any field Approve writes, on every card the
golden and held-out runs produce (oracle mode: the turns' own labels, the tools' mocks)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from docgemma.agent.approval import ApprovalCard
from docgemma.agent.events import ApprovalRequest, TurnDone
from docgemma.eval.golden import decision_for, load_cases, sample_image
from docgemma.eval.oracle import golden_assistant
from docgemma.ui.card import fields
from docgemma.workspace import Tools, tool_views

FILES = sorted((Path(__file__).parents[2] / "golden_tests").glob("*.json"))
#: Text of the code's, never the clinician's or the record's: grown from what reviews find (issue 46's examples).
INTERNAL = {
    "unread words": r"not understood",
    "rule's words": r"decided by rule|task pattern|\(no model call\)|classifier",
    "probability": r"\bp=\d",
    "code identifier": r"(?<![\w/.=-])[a-z][a-z0-9]*_[a-z0-9_]+\b",
    "FHIR reference": r"\b(?:MedicationRequest|AllergyIntolerance|Observation|DocumentReference)/",
    "placeholder": r"<[a-z_ ]+>|\bNone\b",
}
#: Fields the record gives, not typed: the patient's record id is the point of that field.
RECORD_FIELDS = frozenset({"patient_id"})


def cards(path: Path) -> Iterator[tuple[str, ApprovalCard]]:
    """Every approval card a file's turns produce, with its turn's message (each card decided as the file says)."""
    assistant, ctx, _registry = golden_assistant(None)
    for session in load_cases(path):
        thread = f"cards-{path.stem}-{session.session_id}"
        for turn in session.turns:
            ctx.turn, ctx.tool_index, ctx.mock_index, ctx.current_tool = turn, 0, 0, None
            attachment = sample_image() if turn.get("has_image") else None
            events = assistant.stream_turn(thread, turn["user_input"], attachment)
            for shown in range(6):
                waiting = None
                for event in events:
                    if isinstance(event, ApprovalRequest):
                        waiting = event.request
                        yield turn["user_input"], waiting
                    elif isinstance(event, TurnDone):
                        break
                if waiting is None:
                    break
                events = assistant.stream_resume(thread, decision_for(turn.get("approval", "approve"), shown))


@cache
def _tools() -> Tools:
    return tool_views(golden_assistant(None)[2])


def internal_text(card: ApprovalCard) -> list[tuple[str, str, str]]:
    """(field, what, text) for each internal word in a field Approve writes: the form's fields as the page shows
    them (``ui/card.fields``), each a value of the write."""
    shown, _checks = fields(card, _tools())
    assert {f.key for f in shown} <= set(_tools()[card["tool"]].fields), shown  # no form field that is no value
    return [(f.key, what, m.group(0)) for f in shown if f.key not in RECORD_FIELDS
            for what, pattern in INTERNAL.items() for m in re.finditer(pattern, f.value)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_no_writable_field_of_any_card_holds_internal_text(path: Path) -> None:
    found = [(message, *hit) for message, card in cards(path) for hit in internal_text(card)]
    assert not found, found


def test_the_golden_runs_produce_cards_to_check() -> None:
    """The scan above is not vacuous: a session file with writes yields cards of every write tool."""
    tools = {card["tool"] for path in FILES if path.stem == "clinical_sessions" for _m, card in cards(path)}
    assert {"prescribe_medication", "add_allergy", "save_clinical_note"} & tools, tools


def test_words_no_field_took_are_a_finding_never_a_field() -> None:
    """Issue 46: an order card's Notes field was pre-filled with "not understood: 'otitis media'", which Approve
    would have written to the MedicationRequest. The words are now a finding on the card, in no field."""
    from docgemma.agent.approval import approval_request, as_review
    from docgemma.clinical.entities import extract_entities
    from docgemma.tools.catalog.prescribe_medication import medication_request, prescription_check
    from docgemma.tools.order_extract import prescription_args
    from docgemma.tools.registry import default_registry
    from docgemma.tools.spec import ToolContext
    from docgemma.tools.write_checks import PatientFacts

    message = "Prescribe amoxicillin 500 mg three times daily for otitis media, alternate weekdays"
    args = prescription_args(message, extract_entities(message), "p-1")
    assert args["unread"] == "alternate weekdays" and "alternate" not in str(args.get("notes") or "")
    spec = default_registry()["prescribe_medication"]
    found = prescription_check(args, PatientFacts(allergies=[], medications=[]))
    card = approval_request(spec, args, as_review({"warnings": found.warnings, "severe": found.severe}))
    shown, checks = fields(card, tool_views(default_registry()))
    assert all("alternate" not in f.value for f in shown) and "unread" not in {f.key for f in shown}
    assert any("NOT UNDERSTOOD: 'alternate weekdays'" in c.text for f in shown for c in f.checks) or any(
        "NOT UNDERSTOOD: 'alternate weekdays'" in c.text for c in checks)
    assert "alternate" not in card["preview"]
    resource, _ = medication_request(spec.args_model.model_validate(args), ToolContext())
    assert "alternate" not in str(resource)

"""Issue 42 item 6: removing an allergy label is a status change of the entry on record, with the reason, on its
own card: inactive and refuted, the reason in a note, version-checked (a stale version is refused with a clear
sentence), with its Provenance, once per approval; an allergy not on record is said so and nothing is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from docgemma.ehr.client import FhirClientError
from docgemma.ehr.service import Ehr
from docgemma.fhir import concept_code
from docgemma.tools.catalog.remove_allergy_label import (
    SPEC,
    RemoveAllergyLabelArgs,
    label_check,
    remove_label,
)
from docgemma.tools.spec import ToolContext
from docgemma.tools.write_checks import PatientFacts, active_allergies


@pytest.fixture
def ehr(tmp_path: Path) -> Ehr:
    return Ehr.embedded(tmp_path / "record.sqlite")


def mensah(ehr: Ehr) -> tuple[str, dict[str, Any]]:
    """Grace Mensah and her penicillin allergy (anaphylaxis) on record."""
    pid = str(ehr.client.search("Patient", [("name", "Mensah")])[0]["id"])
    [entry] = [a for a in ehr.client.search("AllergyIntolerance", [("patient", pid)])
               if "penicillin" in str(a.get("code")).lower()]
    return pid, entry


def args(pid: str, substance: str = "penicillin", reason: str = "tolerated an amoxicillin oral challenge") -> Any:
    return RemoveAllergyLabelArgs(patient_id=pid, substance=substance, reason=reason)


def provenances(ehr: Ehr, target: str) -> list[dict[str, Any]]:
    return [p for p in ehr.client.search("Provenance", [("patient", target.split("/")[0])], limit=1000)
            if any(t.get("reference") == target for t in p.get("target", []))]


def test_the_card_names_the_entry_it_changes_and_refuses_an_allergy_not_on_record(ehr: Ehr) -> None:
    pid, entry = mensah(ehr)
    facts = PatientFacts(active_allergies(ehr.client.search("AllergyIntolerance", [("patient", pid)])), [])
    found = label_check(args(pid).model_dump(), facts)
    assert not found.blocked and not found.needs and f"AllergyIntolerance/{entry['id']}" in found.warnings[0]
    missing = label_check(args(pid, "latex").model_dump(), facts)
    assert "no active allergy to 'latex' is on record" in missing.blocked and "nothing was written" in missing.blocked
    # Not on record is said first, whatever the reason: no reason would make that removal possible.
    unreasoned = label_check({"patient_id": pid, "substance": "latex", "reason": "not specified"}, facts)
    assert "no active allergy to 'latex' is on record" in unreasoned.blocked
    unnamed = label_check({"patient_id": pid, "substance": "not specified", "reason": "entered in error"}, facts)
    assert "which allergy label to remove" in unnamed.blocked and "Allergy to penicillin" in unnamed.blocked


@pytest.mark.parametrize("reason", ["not specified", "n/a", "", "??"])
def test_the_entry_on_record_without_a_reason_is_a_card_that_still_needs_it(ehr: Ehr, reason: str) -> None:
    """No reason, the entry on record: the card is shown (its Reason field to fill), never blocked for it (a question
    in the chat was a dead end: the reply alone was read as a new statement, or not recognised)."""
    from docgemma.tools.catalog.remove_allergy_label import REASON_NEEDED, REASON_WANTED

    pid, entry = mensah(ehr)
    facts = PatientFacts(active_allergies(ehr.client.search("AllergyIntolerance", [("patient", pid)])), [])
    found = label_check({"patient_id": pid, "substance": "penicillin", "reason": reason}, facts)
    assert not found.blocked and found.needs == REASON_WANTED and REASON_NEEDED in found.warnings
    assert not found.severe  # not an override's to pass: only the reason itself can
    assert found.pins["entry"].startswith(f"AllergyIntolerance/{entry['id']}/_history/")


def test_a_reason_is_required() -> None:
    with pytest.raises(ValidationError):
        RemoveAllergyLabelArgs(patient_id="p", substance="penicillin")  # type: ignore[call-arg]
    assert "reason" in SPEC.args_model.model_json_schema()["required"]


def test_the_label_becomes_inactive_and_refuted_with_the_reason_once(ehr: Ehr) -> None:
    pid, entry = mensah(ehr)
    context = ToolContext(scope="card-1", approved_by="Dr Test", conversation="c1")
    first = remove_label(ehr, args(pid), context)
    assert first["status"] == "success" and first["data"]["created"], first
    saved = ehr.client.read("AllergyIntolerance", entry["id"])
    assert concept_code(saved, "clinicalStatus") == "inactive"
    assert concept_code(saved, "verificationStatus") == "refuted"
    assert saved["note"][-1]["text"] == "Allergy label removed: tolerated an amoxicillin oral challenge"
    assert saved["code"] == entry["code"] and saved["id"] == entry["id"]  # the same entry, changed: no new one
    assert int(saved["meta"]["versionId"]) == int(entry["meta"]["versionId"]) + 1
    assert active_allergies(ehr.client.search("AllergyIntolerance", [("patient", pid)])) == []
    [prov] = [p for p in ehr.client.search("Provenance", [("_count", "1000")], limit=5000)
              if any(t.get("reference") == f"AllergyIntolerance/{entry['id']}" for t in p.get("target", []))]
    assert prov["activity"]["coding"][0]["code"] == "UPDATE"
    from docgemma.tools.ehr_tools import write_lookup
    from docgemma.tools.registry import default_registry

    # An interrupted approval's recovery finds what the action changed (by the update's Provenance).
    assert write_lookup(ehr, default_registry())(SPEC.name, "card-1") == f"AllergyIntolerance/{entry['id']}"
    assert write_lookup(ehr, default_registry())(SPEC.name, "card-never") is None
    again = remove_label(ehr, args(pid), context)  # the same approval replayed: nothing more
    assert again["status"] == "success" and not again["data"]["created"]
    assert ehr.client.read("AllergyIntolerance", entry["id"])["meta"]["versionId"] == saved["meta"]["versionId"]
    assert len(ehr.client.read("AllergyIntolerance", entry["id"])["note"]) == len(saved["note"])


def test_a_stale_version_is_refused_and_nothing_is_written(ehr: Ehr, monkeypatch: pytest.MonkeyPatch) -> None:
    pid, entry = mensah(ehr)
    with pytest.raises(FhirClientError) as refused:
        ehr.update({**entry, "note": [{"text": "x"}]}, version="999", action="a-stale", step="test")
    assert refused.value.status == 412
    # Another writer changes the entry after the tool read it: the update on what it read is refused.
    changed = {**entry, "criticality": "low"}
    ehr.client.transaction([{"resource": changed, "request": {"method": "PUT", "url": f"AllergyIntolerance/{entry['id']}"}}])
    current = ehr.client.read("AllergyIntolerance", entry["id"])
    search = ehr.client.search
    monkeypatch.setattr(ehr.client, "search", lambda kind, params, limit=500: [entry] if kind == "AllergyIntolerance"
                        else search(kind, params, limit))
    outcome = remove_label(ehr, args(pid), ToolContext(scope="card-2"))
    assert outcome["status"] == "error" and "changed since it was read" in str(outcome["details"]), outcome
    assert ehr.client.read("AllergyIntolerance", entry["id"]) == current


def test_an_allergy_not_on_record_writes_nothing(ehr: Ehr) -> None:
    pid, entry = mensah(ehr)
    outcome = remove_label(ehr, args(pid, "latex"), ToolContext(scope="card-3"))
    assert outcome["status"] == "error" and "nothing was written" in str(outcome["details"])
    assert ehr.client.read("AllergyIntolerance", entry["id"]) == entry


# ── through the agent (demo model: the rules' path), on its own card ───────────────────────────────────────


def bot(ehr: Ehr, pid: str) -> Any:
    from docgemma.agent.assistant import Assistant
    from docgemma.agent.demo_llm import demo_llm
    from docgemma.tools.binding import ToolClients, bind_tools
    from docgemma.tools.ehr_tools import record_write_check
    from docgemma.tools.registry import default_registry

    assistant = Assistant(demo_llm(), bind_tools(default_registry(), ToolClients(record=ehr)),
                          patient_context=ehr.patient_context, write_check=record_write_check(ehr))
    assistant.set_active_patient("t", {"id": pid, "name": "Grace Mensah"})
    return assistant


@pytest.mark.parametrize("message", ["tolerated amoxicillin challenge, remove the penicillin allergy",
                                     "delabel penicillin: negative skin test",
                                     "Remove the penicillin allergy label, reason: entered in error"])
def test_a_delabel_request_gets_its_own_card_and_the_approval_changes_the_entry_once(ehr: Ehr, message: str) -> None:
    from docgemma.agent.assistant import TurnResult

    pid, entry = mensah(ehr)
    assistant = bot(ehr, pid)
    card = assistant.run_turn("t", message)
    assert isinstance(card, dict) and card["kind"] == "approval" and card["tool"] == SPEC.name, card
    assert card["args"]["substance"] == "penicillin" and card["args"]["reason"]
    assert any(f"AllergyIntolerance/{entry['id']}" in w for w in card["warnings"])
    before = len(ehr.client.search("AllergyIntolerance", [("patient", pid)]))
    done = assistant.resume("t", {"action": "approve", "card_id": card["card_id"]})
    assert isinstance(done, TurnResult)
    saved = ehr.client.read("AllergyIntolerance", entry["id"])
    assert (concept_code(saved, "clinicalStatus"), concept_code(saved, "verificationStatus")) == ("inactive", "refuted")
    assert saved["note"][-1]["text"] == f"Allergy label removed: {card['args']['reason']}"
    assert len(ehr.client.search("AllergyIntolerance", [("patient", pid)])) == before  # changed, never added
    assistant.resume("t", {"action": "approve", "card_id": card["card_id"]})  # a second click: nothing more
    assert ehr.client.read("AllergyIntolerance", entry["id"])["meta"] == saved["meta"]


@pytest.mark.parametrize("message", ["remove the latex allergy, reason: entered in error", "remove the latex allergy"])
def test_an_allergy_not_on_record_is_said_so_with_or_without_a_reason(ehr: Ehr, message: str) -> None:
    from docgemma.agent.assistant import TurnResult

    pid, entry = mensah(ehr)
    result = bot(ehr, pid).run_turn("t", message)
    assert isinstance(result, TurnResult), result
    assert "no active allergy to 'latex' is on record" in result.answer and "nothing was written" in result.answer
    assert ehr.client.read("AllergyIntolerance", entry["id"]) == entry


@pytest.mark.parametrize("message", ["delabel penicillin", "penicillin allergy label was removed (delabelled)",
                                     "Remove the penicillin allergy label for this patient"])
def test_no_reason_is_a_card_whose_reason_is_filled_in_before_anything_is_written(ehr: Ehr, message: str) -> None:
    """The button "Remove the penicillin allergy label for this patient" (offered after "penicillin: none known") and
    the requests that give no reason: the card, its Reason field to fill in. Approved as it is, it is refused and
    waits on with the reason asked for (nothing written); approved with the reason filled in, the changed values are
    shown on a new card first; that card approved changes the entry once, the reason in its note."""
    from docgemma.agent.assistant import TurnResult
    from docgemma.agent.nodes.tool_execute import NEEDS_VALUE, UNSEEN_CHANGES
    from docgemma.tools.catalog.remove_allergy_label import REASON_NEEDED, REASON_WANTED

    pid, entry = mensah(ehr)
    assistant = bot(ehr, pid)
    card = assistant.run_turn("t", message)
    assert isinstance(card, dict) and card["tool"] == SPEC.name and not card["override_required"], card
    assert REASON_NEEDED in card["warnings"] and card["args"]["reason"] == "not specified"
    for action in ("approve", "override"):  # an override cannot stand in for the reason either
        card = assistant.resume("t", {"action": action, "card_id": card["card_id"], "reason": "clinician sure"})
        assert isinstance(card, dict) and card["notice"] == NEEDS_VALUE.format(needs=REASON_WANTED), card
        assert ehr.client.read("AllergyIntolerance", entry["id"]) == entry
    reason = "tolerated an amoxicillin oral challenge"
    card = assistant.resume("t", {"action": "approve", "card_id": card["card_id"], "args": {"reason": reason}})
    assert isinstance(card, dict) and card["notice"] == UNSEEN_CHANGES and card["args"]["reason"] == reason, card
    assert REASON_NEEDED not in card["warnings"] and ehr.client.read("AllergyIntolerance", entry["id"]) == entry
    done = assistant.resume("t", {"action": "approve", "card_id": card["card_id"]})
    assert isinstance(done, TurnResult), done
    saved = ehr.client.read("AllergyIntolerance", entry["id"])
    assert (concept_code(saved, "clinicalStatus"), concept_code(saved, "verificationStatus")) == ("inactive", "refuted")
    assert saved["note"][-1]["text"] == f"Allergy label removed: {reason}"
    assert int(saved["meta"]["versionId"]) == int(entry["meta"]["versionId"]) + 1  # changed once


def test_the_removal_card_bears_no_safety_line_against_the_allergy_it_removes(ehr: Ehr) -> None:
    """With the record's facts bound (as the app binds them), the named-drug safety line "Safety: penicillin — Grace
    Mensah has a recorded penicillin allergy" stood on the card that removes that allergy, as a warning."""
    from docgemma.agent.assistant import Assistant
    from docgemma.agent.demo_llm import demo_llm
    from docgemma.tools.binding import ToolClients, bind_tools
    from docgemma.tools.ehr_tools import record_facts, record_write_check
    from docgemma.tools.registry import default_registry

    pid, _entry = mensah(ehr)
    assistant = Assistant(demo_llm(), bind_tools(default_registry(), ToolClients(record=ehr)),
                          patient_context=ehr.patient_context, record_facts=record_facts(ehr),
                          write_check=record_write_check(ehr))
    assistant.set_active_patient("t", {"id": pid, "name": "Grace Mensah"})
    card = assistant.run_turn("t", "Remove the penicillin allergy label for this patient")
    assert isinstance(card, dict) and card["tool"] == SPEC.name, card
    assert not any(w.startswith("Safety:") for w in card["warnings"]), card["warnings"]


def test_a_put_with_a_stale_if_match_header_is_refused_by_the_embedded_server(ehr: Ehr) -> None:
    _pid, entry = mensah(ehr)
    url = f"AllergyIntolerance/{entry['id']}"
    with pytest.raises(FhirClientError) as refused:
        ehr.client._request("PUT", url, json={**entry, "criticality": "low"}, headers={"If-Match": 'W/"99"'})
    assert refused.value.status == 412 and ehr.client.read("AllergyIntolerance", entry["id"]) == entry
    current = entry["meta"]["versionId"]
    saved = ehr.client._request("PUT", url, json={**entry, "criticality": "low"}, headers={"If-Match": f'W/"{current}"'})
    assert saved["criticality"] == "low" and saved["meta"]["versionId"] == str(int(current) + 1)


# ── the version the card showed is the one the approval writes on (issue 42 follow-up) ─────────────────────────


def bump(ehr: Ehr, entry_id: str) -> dict[str, Any]:
    """Another writer changes the entry (its criticality): a new version on record."""
    current = ehr.client.read("AllergyIntolerance", entry_id)
    ehr.client.transaction([{"resource": {**current, "criticality": "low"},
                             "request": {"method": "PUT", "url": f"AllergyIntolerance/{entry_id}"}}])
    changed = ehr.client.read("AllergyIntolerance", entry_id)
    assert changed["meta"]["versionId"] != current["meta"]["versionId"]
    return changed


def test_the_card_carries_the_version_it_was_built_on_and_shows_it(ehr: Ehr) -> None:
    from docgemma.ui.card import args_json, fields

    pid, entry = mensah(ehr)
    card = bot(ehr, pid).run_turn("t", "delabel penicillin: negative skin test")
    assert isinstance(card, dict) and card["kind"] == "approval"
    version = entry["meta"]["versionId"]
    assert card["args"]["entry"] == f"AllergyIntolerance/{entry['id']}/_history/{version}"
    assert any(f"[AllergyIntolerance/{entry['id']}, version {version}]" in w for w in card["warnings"])
    # Code's to fill: no field of the form, nothing an API edit is given to change.
    assert "entry" not in {f.key for f in fields(card)[0]} and '"entry"' not in args_json(card)
    assert "entry" not in SPEC.args_model.model_json_schema()["properties"]


def test_an_entry_changed_after_the_card_was_shown_is_not_written_on_approve(ehr: Ehr) -> None:
    """The approval is replayed against the record as it is now: the entry's version is part of the card, so the card
    approved is not the one the record gives any more; nothing is written and a new card shows the entry as it is."""
    from docgemma.agent.nodes.tool_execute import STALE

    pid, entry = mensah(ehr)
    assistant = bot(ehr, pid)
    card = assistant.run_turn("t", "delabel penicillin: negative skin test")
    assert isinstance(card, dict) and card["kind"] == "approval"
    changed = bump(ehr, entry["id"])
    again = assistant.resume("t", {"action": "approve", "card_id": card["card_id"]})
    assert ehr.client.read("AllergyIntolerance", entry["id"]) == changed  # nothing written
    assert isinstance(again, dict) and again["notice"] == STALE and "Nothing was written" in again["notice"]
    assert again["args"]["entry"].endswith(f"/_history/{changed['meta']['versionId']}")
    assistant.resume("t", {"action": "approve", "card_id": again["card_id"]})  # the new card, approved: written
    saved = ehr.client.read("AllergyIntolerance", entry["id"])
    assert concept_code(saved, "verificationStatus") == "refuted" and saved["criticality"] == "low"


def test_an_entry_changed_between_the_approvals_check_and_the_write_is_refused(ehr: Ehr) -> None:
    """The narrowest window: the entry changes after the approval's replay has checked it (the card still matches)
    and before the write. The write is made on the card's version (If-Match): refused, nothing written."""
    from docgemma.agent.assistant import Assistant, TurnResult
    from docgemma.agent.demo_llm import demo_llm
    from docgemma.tools.binding import ToolClients, bind_tools
    from docgemma.tools.ehr_tools import record_write_check
    from docgemma.tools.registry import default_registry

    pid, entry = mensah(ehr)
    check, calls = record_write_check(ehr), []

    def racing(spec: Any, args: dict[str, Any], active: Any) -> Any:
        review = check(spec, args, active)
        calls.append(1)
        if len(calls) == 2:  # the approval's replay: the card matches, then another writer changes the entry
            bump(ehr, entry["id"])
        return review

    assistant = Assistant(demo_llm(), bind_tools(default_registry(), ToolClients(record=ehr)),
                          patient_context=ehr.patient_context, write_check=racing)
    assistant.set_active_patient("t", {"id": pid, "name": "Grace Mensah"})
    card = assistant.run_turn("t", "delabel penicillin: negative skin test")
    assert isinstance(card, dict)
    before = ehr.client.read("AllergyIntolerance", entry["id"])
    done = assistant.resume("t", {"action": "approve", "card_id": card["card_id"]})
    assert isinstance(done, TurnResult), done
    assert "changed since it was read" in done.answer and "nothing was written" in done.answer, done.answer
    after = ehr.client.read("AllergyIntolerance", entry["id"])
    assert concept_code(after, "clinicalStatus") == "active" and int(after["meta"]["versionId"]) == \
        int(before["meta"]["versionId"]) + 1  # only the other writer's change


def test_the_write_refuses_an_entry_other_than_the_cards_or_another_version(ehr: Ehr) -> None:
    pid, entry = mensah(ehr)
    version = entry["meta"]["versionId"]
    for stale in (f"AllergyIntolerance/{entry['id']}/_history/{int(version) + 5}",
                  f"AllergyIntolerance/not-{entry['id']}/_history/{version}"):
        outcome = remove_label(ehr, args(pid).model_copy(update={"entry": stale}), ToolContext(scope=f"card-{stale}"))
        assert outcome["status"] == "error" and "changed since it was read" in str(outcome["details"]), outcome
        assert ehr.client.read("AllergyIntolerance", entry["id"]) == entry
    right = args(pid).model_copy(update={"entry": f"AllergyIntolerance/{entry['id']}/_history/{version}"})
    assert remove_label(ehr, right, ToolContext(scope="card-right"))["status"] == "success"


def test_an_mcp_call_carries_the_entry_without_publishing_it() -> None:
    """Over MCP the app signs the card's arguments: a field code fills must arrive (it was dropped, and the signature
    no longer matched), and is still left out of the schema a client sees."""
    from mcp.server.mcpserver.utilities.func_metadata import func_metadata

    from docgemma.tools.mcp_server import _tool_function
    from docgemma.tools.registry import default_registry

    registry = default_registry()
    for name in ("remove_allergy_label", "prescribe_medication"):
        meta = func_metadata(_tool_function(registry[name], None), skip_names=["ctx"])
        published = meta.arg_model.model_json_schema()["properties"]
        assert "entry" not in published and "unread" not in published
    meta = func_metadata(_tool_function(registry["remove_allergy_label"], None), skip_names=["ctx"])
    sent = {"patient_id": "p", "substance": "penicillin", "reason": "negative skin test",
            "entry": "AllergyIntolerance/a/_history/2"}
    assert meta.arg_model.model_validate(sent).model_dump_one_level()["entry"] == sent["entry"]

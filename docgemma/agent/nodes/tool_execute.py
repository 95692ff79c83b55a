"""Node ④ TOOL_EXECUTE (deterministic): ground and validate the arguments, pause for the clinician's
approval before any write, run the tool through the registry, label the result and pre-format errors.

Raw error text never leaves this node: an error becomes an ``error_type`` and a templated sentence.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from langchain_core.runnables import RunnableConfig

from docgemma.agent import named_drugs
from docgemma.agent.approval import (
    UNSENT,
    ApprovalCard,
    WriteReview,
    approval_request,
    as_review,
    decision_digest,
    parse_decision,
    pending_action_id,
    unsent_notice,
)
from docgemma.agent.memory import switched
from docgemma.agent.patterns import is_write_request
from docgemma.agent.record_check import RecordFacts
from docgemma.agent.state import AgentState, PatientChange, PatientRef, ToolResult
from docgemma.agent.trace import NodeTrace
from docgemma.agent.validation import Checked, ground, other_patient_named, valid_patient_id, validate
from docgemma.clinical.entities import malformed_patient_ids
from docgemma.image_store import decode_ref
from docgemma.images import DEFAULT_MAX_PIXELS, ImageError
from docgemma.llm.base import LLM, BackendUnavailable
from docgemma.tools.outcome import ToolOutcome, failure, format_error
from docgemma.tools.registry import ToolContext, ToolRegistry, ToolSpec
from docgemma.tools.review_types import CheckStatus, WriteCheck
from docgemma.tools.routing import Role

log = logging.getLogger(__name__)


REFUSED_PLAIN_APPROVAL = (
    "Plain approval refused: this order has a severe finding (listed first on the card). Nothing was written. "
    "Approve it only with an explicit override and a reason (Override & approve), edit it, or reject it."
)
EDITED = "Edited: every check was run again on the new values. Nothing is written until you approve this card."
STALE = "The record changed since the card was shown: the checks were run again. Nothing was written; review this card."
#: An approval whose form values the re-check found new findings for: nothing written, the values on a new card.
NEW_SEVERE = ("Your changes were checked again before anything was written, and they have a severe finding the card you "
              "approved did not show ({found}; listed on this card). Nothing was written. An approval, or an override, "
              "covers only the findings it was shown: override with a reason if you still mean it, change the values, "
              "or reject it.")
NEW_WARNING = ("Your changes were checked again before anything was written, and they have findings the card you "
               "approved did not show ({found}; listed on this card). Nothing was written: approve this card if the "
               "changes are what you want.")
#: An approval whose form values differ from the card's, and whose re-check found nothing new: still a new card, since
#: a finding's text need not name the value (a "no recent weight" finding covers no dose the clinician did not see).
UNSEEN_CHANGES = ("Your changes were checked again before anything was written. Nothing was written: an approval, or "
                  "an override, covers only the values its card showed. Approve this card (override with a reason if "
                  "it has a severe finding) if the changes are what you want.")
#: A decision that names the digest of other arguments than the card's (an API client's stale form).
OTHER_ARGUMENTS = ("The approval was made on other values than this card's. Nothing was written: review this card, "
                   "checked on the values it shows.")
#: An approval of a card that still lacks a value the write cannot be made without (``WriteReview.needs``).
NEEDS_VALUE = ("Approval refused: this card still needs {needs}. Fill it in on the card, then approve. Nothing was "
               "written.")
PATIENT_CHANGED = ("The approval named another patient than the card. Nothing was written: this card is for the "
                   "patient now named; review it.")


def _primary_entity(args: dict[str, Any]) -> str:
    for value in args.values():
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list) and value:
            return ", ".join(str(v) for v in value)
    return "the request"


def _unreadable_patient_id(spec: ToolSpec, query: str, found: list[str]) -> str | None:
    """The identifier the message offers for a patient that cannot be one ("patient ../../etc/passwd"), for a
    tool that reads or writes one patient's record; None when there is none."""
    if "patient_id" not in spec.args_model.model_fields:
        return None
    return next((token for token in malformed_patient_ids(query) if token not in found), None)


def _active_patient_after(spec: ToolSpec, args: dict[str, Any], outcome: ToolOutcome,
                          current: PatientRef | None) -> PatientRef | None:
    """The tool's own rule (``ToolSpec.active_patient_after``: a unique patient search match, a chart that was
    read) decides the conversation's active patient after a successful call."""
    if outcome.get("status") != "success" or spec.active_patient_after is None:
        return current
    return spec.active_patient_after(args, outcome.get("data") or {}, current)


def _approval(
    spec: ToolSpec, checked: Checked, active: PatientRef | None, write_check: WriteCheck | None, action_id: str,
    has_image: bool,
) -> tuple[Checked, ToolOutcome | None, str, str, list[str]]:
    """Show the card and wait for the clinician, card after card: (checked args, error or None, timeline note,
    override reason, the notices the cards showed). The notices ("Plain approval refused: …", a message not sent
    while the card waited) go on the turn's transcript entry: once the card is gone they are still what the
    clinician was told (issue 46). Every edit re-runs every check and is shown as a new card that needs its own
    approval; a severe conflict passes only with an override and a reason. Nothing here writes.

    LangGraph replays this node on each resume and ``interrupt`` returns the decisions already made in order,
    so the loop is deterministic: the same cards are rebuilt, and only the last one waits."""
    from langgraph.types import interrupt

    revision, notice, edited_once = 0, "", False
    notices: list[str] = []
    unsent: list[str] = []  # the messages sent while this card waited, since its last decision
    while True:
        checked, review = _reviewed(spec, checked, active, write_check, has_image)
        if review.get("blocked"):
            # Nothing to approve: no card, one clear error (ASK_USER, never a retry of the write).
            blocked = str(review["blocked"])
            return checked, failure("invalid_args", missing_fields=[blocked]), f"not proposed: {blocked}; ", "", notices
        _kept(notices, notice, extends=len(unsent) > 1)
        card = approval_request(spec, checked.args, review, action_id=action_id, revision=revision, notice=notice)
        decision = interrupt(card)
        action, edits, reason, card_id = parse_decision(decision)
        revision += 1
        unsent = _unsent(decision, unsent)
        if unsent:  # not a decision: the card waits on (a new card), saying the messages were not sent
            notice = unsent_notice(unsent, spec.label)
            continue
        if isinstance(decision, dict) and decision.get("recovered"):
            # The approved write reached the record before its process died: the run below finds it, writes nothing.
            return checked, None, "approved by the clinician; completed after an interruption; ", reason, notices
        if action in ("approve", "override") and card_id and card_id != card["card_id"]:
            notice = STALE
            continue
        if action == "edit":
            checked, notice, edited_once = _apply_edit(spec, checked, edits, has_image, edited_once)
            continue
        if action in ("approve", "override"):
            if card["override_required"] and not reason:
                notice = REFUSED_PLAIN_APPROVAL
                continue
            changed = _changed(checked.args, edits)
            if changed:  # the form's values, not the card's: checked again and shown, never written unseen
                checked, notice = _approved_changes(spec, card, checked, changed, active, write_check, has_image)
                notice, edited_once = notice or UNSEEN_CHANGES, True
                continue
            held = _unchanged_refused(card, review, decision)
            if held:
                notice = held
                continue
            with_changes = " after an edit" if edited_once else ""
            if card["override_required"]:
                return (checked, None, f"approved{with_changes} with an override by the clinician (reason: {reason}); ",
                        reason, notices)
            return checked, None, f"approved by the clinician{with_changes}; ", "", notices
        return checked, failure("declined"), "declined by the clinician; ", "", notices


def _unchanged_refused(card: Any, review: WriteReview, decision: Any) -> str:
    """Why an approval of the card as shown is refused, or "": the card still lacks a value (the write would be
    refused, so it waits on), or the approval declares other arguments than the card's."""
    if review.get("needs"):
        return NEEDS_VALUE.format(needs=review["needs"])
    declared = decision_digest(decision)
    return OTHER_ARGUMENTS if declared and declared != card["args_hash"] else ""


def _reviewed(spec: ToolSpec, checked: Checked, active: PatientRef | None, write_check: WriteCheck | None,
              has_image: bool) -> tuple[Checked, WriteReview]:
    """The write's safety review, and the arguments its card shows: with the values the check read off the record
    for the write to be made against (``WriteReview.pins``: the version of the entry a label removal changes), so the
    card's id and digest cover them, a replay after the record changed shows a new card, and the approved write
    refuses an entry changed since (a version the arguments cannot hold blocks the card: never dropped)."""
    review = as_review(write_check(spec, checked.args, active) if write_check else None)
    pins = review.get("pins") or {}
    if review.get("blocked") or all(checked.args.get(k) == v for k, v in pins.items()):
        return checked, review
    pinned = validate(spec, {**checked.args, **pins}, has_image=has_image)
    if pinned.error is not None:
        return checked, WriteReview(blocked=f"the record's entry as read for the card ({', '.join(pins.values())}), "
                                            "which this write's arguments cannot hold; nothing was written")
    return pinned, review


def _unsent(decision: Any, before: list[str]) -> list[str]:
    """The messages sent while the card waited since its last decision, with this resume's (the Assistant's
    ``approval.UNSENT``: a message the card refused); [] when this resume is a decision. A new card follows each
    (so that the claim the message took is not the next click's), and says them all."""
    if isinstance(decision, dict) and UNSENT in decision:
        return [*before, str(decision[UNSENT])]
    return []


def _kept(notices: list[str], notice: str, extends: bool) -> None:
    """The card's notice added to the turn's ``notices`` once. ``extends``: it names the unsent messages the last
    notice named and one more, and takes its place (said once, not once per message)."""
    if not notice or notice in notices[-1:]:
        return
    if extends and notices:
        notices[-1] = notice
    else:
        notices.append(notice)


def _apply_edit(spec: ToolSpec, checked: Checked, edits: dict[str, Any], has_image: bool,
                edited_once: bool) -> tuple[Checked, str, bool]:
    """The card's edit, validated: (the args to check next, the notice, whether an edit was applied)."""
    edited = validate(spec, {**checked.args, **edits}, has_image=has_image)
    if edited.error is not None:
        fields = ", ".join(str(f) for f in (edited.error.get("details") or {}).get("missing_fields", []))
        return checked, f"The edit was not applied: invalid {fields or 'values'}. Nothing was written.", edited_once
    return edited, EDITED, True


def _with_named_drugs(spec: ToolSpec, args: dict[str, Any], state: AgentState, write_check: WriteCheck | None,
                      record_facts: RecordFacts | None) -> WriteCheck | None:
    """The write check, with the named-drug safety lines (:mod:`docgemma.agent.named_drugs`) first on the card of a
    write whose own check does not review the drug (a note naming one): an order's and an allergy's checks do, and a
    label removal's check reads the allergy it removes."""
    active = state.get("active_patient")
    mentions = state["extracted_entities"]["drug_mentions"]
    if Role.MEDICATION_ORDER in spec.roles and mentions:
        return _with_message_drugs(write_check, state["user_query"], mentions)
    if (record_facts is None or active is None or not mentions or args.get("patient_id") != active["id"]
            # A label removal's card is about that very allergy: "Safety: penicillin — she has a recorded penicillin
            # allergy" stood on the card that removes it, as a warning against the removal itself.
            or spec.roles & {Role.MEDICATION_ORDER, Role.ALLERGY_ENTRY, Role.ALLERGY_REMOVAL}
            or other_patient_named(state["extracted_entities"], active)):
        return write_check
    lines = named_drugs.safety_lines(state["user_query"], mentions, active, record_facts(active))
    if not lines:
        return write_check

    def check(spec: ToolSpec, args: dict[str, Any], patient: PatientRef | None) -> WriteReview:
        review = as_review(write_check(spec, args, patient) if write_check else None)
        if not review.get("blocked"):
            review["warnings"] = [*lines, *review.get("warnings", [])]
        return review

    return check
def _with_message_drugs(write_check: WriteCheck | None, query: str, mentions: list[str]) -> WriteCheck:
    """An order's card also checks the ordered drug against the other drugs the message names (the record's active
    orders are the order's own check): an interrupting interaction is severe, and the check is listed."""
    def check(spec: ToolSpec, args: dict[str, Any], patient: PatientRef | None) -> WriteReview:
        review = as_review(write_check(spec, args, patient) if write_check else None)
        if review.get("blocked"):
            return review
        found = named_drugs.order_interactions(query, mentions, str(args.get("medication_name") or ""))
        review["warnings"] = [*(text for text, _severe in found), *review.get("warnings", [])]
        review["severe"] = [*(text for text, severe in found if severe), *review.get("severe", [])]
        review["checks"] = [*review.get("checks", []), CheckStatus(
            name=named_drugs.MESSAGE_CHECK, ran=True, detail="the other drugs your message names, local table of "
                                                             "interactions that must interrupt")]
        return review

    return check


def _changed(args: dict[str, Any], edits: dict[str, Any]) -> dict[str, Any]:
    """The values of a decision that differ from the card's (an empty field and no value are the same, and so are
    two texts that differ only in surrounding spaces: a form field sends its text stripped)."""
    def same(a: Any, b: Any) -> bool:
        a, b = (v.strip() if isinstance(v, str) else v for v in (a, b))
        return ((a in (None, "", [])) and (b in (None, "", []))) or a == b

    return {k: v for k, v in edits.items() if not same(args.get(k), v)}


def _headings(findings: list[str]) -> str:
    """Findings named by their headings ("ALLERGY CONFLICT (SEVERE): …" → "allergy conflict"): the card below
    the notice shows them whole."""
    return ", ".join(dict.fromkeys(re.sub(r"\s*\(.*?\)", "", f.split(":", 1)[0]).strip().lower() for f in findings))


def _approved_changes(spec: ToolSpec, card: ApprovalCard, checked: Checked, changed: dict[str, Any],
                      active: PatientRef | None, write_check: WriteCheck | None, has_image: bool) -> tuple[Checked, str]:
    """An approval that carries values the card did not show (the form, edited without a re-check): validated and
    every check run again; nothing is written. A notice naming what the re-check found that the approved card did
    not show ("" when nothing: the caller still shows a new card), and the values for the next card (the old ones
    when the new ones cannot be used): an approval, or an override, covers only what was shown."""
    edited = validate(spec, {**checked.args, **changed}, has_image=has_image)
    if edited.error is not None:
        fields = ", ".join(str(f) for f in (edited.error.get("details") or {}).get("missing_fields", []))
        return checked, f"Your changes were not applied: invalid {fields or 'values'}. Nothing was written."
    if edited.args.get("patient_id") != checked.args.get("patient_id"):
        return edited, PATIENT_CHANGED
    review = as_review(write_check(spec, edited.args, active) if write_check else None)
    if review.get("blocked"):
        return checked, f"Your changes were not applied: they need {review['blocked']}. Nothing was written."
    severe = [s for s in review.get("severe", []) if s not in card["severe"]]
    if severe:
        return edited, NEW_SEVERE.format(found=_headings(severe))
    warnings = [w for w in review.get("warnings", []) if w not in card["warnings"]]
    if warnings:
        return edited, NEW_WARNING.format(found=_headings(warnings))
    return edited, ""


def _refusal(spec: ToolSpec, checked: Checked, state: AgentState) -> tuple[ToolOutcome | None, str]:
    """Why the call may not run as chosen (the checks before any approval or call), with the timeline's note;
    (None, "") when it may."""
    active = state.get("active_patient")
    entities = state["extracted_entities"]
    outcome, note = checked.error, ""
    if spec.writes and not is_write_request(state["user_query"]):
        # Only the clinician's own message can ask for a write: never a model's choice prompted by record
        # text ("ignore previous instructions and prescribe ...") or a question that mentions a write word.
        outcome = failure("not_requested")
        note = "write refused: the clinician's message does not ask for one; "
    named = other_patient_named(entities, active) if active else None
    given = checked.args.get("patient_id")
    if named and active and "patient_id" in spec.args_model.model_fields and (
            not valid_patient_id(given) or given == active["id"]):
        # The message names someone who is not the active patient and no search settled who: ask, never read
        # or write the active patient's record in their place.
        outcome = failure("invalid_args", missing_fields=[
            f"which patient '{named}' is (not the active patient, {active['name']}, whose record "
            "was not used): search for them by name or give their patient ID"])
    unreadable = _unreadable_patient_id(spec, state["user_query"], entities["patient_ids"])
    if unreadable is not None:
        # The message named a patient by something no identifier can be: say so, never fall back on the
        # active patient (whose record would then be shown under the id the clinician typed).
        outcome = failure("unknown_patient", patient_id=unreadable)
        note = "the message's patient ID is not an identifier: nothing looked up; "
    return outcome, note


def _run(spec: ToolSpec, checked: Checked, state: AgentState, config: RunnableConfig, llm: LLM, scope: str,
         override: str, max_image_bytes: int, max_image_pixels: int) -> ToolOutcome:
    """Call the tool through the registry; the image tool is handed INPUT_ASSEMBLY's decode of the upload."""
    assert checked.model is not None
    image = None
    image_ref = state.get("image_ref")
    if spec.needs_image and image_ref is not None:
        try:
            image = decode_ref(image_ref, max_image_bytes, max_image_pixels)  # INPUT_ASSEMBLY's decode
        except ImageError:
            image = None
    configurable = config.get("configurable") or {}
    approver = str(configurable.get("approved_by") or "")  # the decision's signed-in user
    context = ToolContext(image=image, llm=llm, scope=scope, override_reason=override, approved_by=approver,
                          conversation=str(configurable.get("thread_id", "")))
    try:
        return spec.run(checked.model, context)
    except BackendUnavailable:
        raise  # no model at all (the image tool asks it): the turn ends with the one sentence (Assistant)
    except Exception:
        log.exception("tool %s raised", spec.name)
        return failure("server_error")


def _result(spec: ToolSpec, args: dict[str, Any], outcome: ToolOutcome) -> tuple[ToolResult, str]:
    """The call's result as the state keeps it (errors pre-formatted, never raw), and the timeline's decision."""
    if outcome.get("status") == "success":
        return ToolResult(
            tool_name=spec.name, tool_label=spec.label, args=args, status="success",
            data=outcome.get("data"), formatted_result=spec.format_result(outcome.get("data")),
            error=None, error_type=None, sources=list(outcome.get("sources", [])),
        ), "success"
    error_type = str(outcome.get("error_type", "generic"))
    message = format_error(error_type, spec.label, _primary_entity(args), outcome.get("details"))
    return ToolResult(
        tool_name=spec.name, tool_label=spec.label, args=args, status="error",
        data=outcome.get("details", {}), formatted_result=f"[{spec.label}]\n{message}",
        error=message, error_type=error_type, sources=[],
    ), f"error: {error_type}"


def tool_execute(
    state: AgentState, config: RunnableConfig, *, registry: ToolRegistry, llm: LLM,
    max_image_bytes: int, max_image_pixels: int = DEFAULT_MAX_PIXELS, write_check: WriteCheck | None = None,
    record_facts: RecordFacts | None = None,
) -> dict[str, Any]:
    """Run the selected tool call; see the module docstring. ``config`` (from LangGraph) names the thread. The
    image tool's decode has the same byte and pixel limits as the front door's (a decompression bomb is refused
    wherever it is opened). ``record_facts`` reads the active patient's record for the named-drug lines of a card."""
    tool = state["current_tool"]
    assert tool is not None, "TOOL_EXECUTE runs only after a tool was selected"
    spec = registry[tool]
    active = state.get("active_patient")
    entities = state["extracted_entities"]
    args, repairs = ground(spec, state.get("current_args") or {}, entities, active, state["user_query"])
    checked = validate(spec, args, has_image=entities["has_image"])
    outcome, decision_note = _refusal(spec, checked, state)
    override = ""
    notices: list[str] = []
    proposed: dict[str, Any] = dict(checked.args)
    thread = str((config.get("configurable") or {}).get("thread_id", ""))
    scope = f"{thread}:{len(state.get('conversation', []))}"
    if outcome is None and spec.writes:
        action_id = pending_action_id(thread, state.get("turn_id") or scope, state.get("step_count", 0))
        scope = action_id  # the write's key is this action's id with the exact arguments written (record_io.write)
        checking = _with_named_drugs(spec, checked.args, state, write_check, record_facts)
        checked, outcome, decision_note, override, notices = _approval(spec, checked, active, checking, action_id,
                                                                       entities["has_image"])

    trace = NodeTrace("tool_execute", label=f"Consulting: {spec.label}")
    if outcome is None:
        outcome = _run(spec, checked, state, config, llm, scope, override, max_image_bytes, max_image_pixels)
    result, decision = _result(spec, checked.args, outcome)
    if spec.writes and outcome.get("status") == "success":
        result["proposed_args"] = proposed  # the confirmation says what the clinician changed from the proposal
    if notices:
        result["notices"] = notices
    detail = decision_note + ("; ".join(repairs) + "; " if repairs else "") + f"arguments: {checked.args}"
    after = _active_patient_after(spec, checked.args, outcome, active)
    update: dict[str, Any] = {
        "tool_results": [result],
        "current_args": checked.args,
        "step_count": state.get("step_count", 0) + 1,
    }
    if after != active:  # proposed: COMMIT_PATIENT, the one writer of `active_patient`, makes it so
        update["patient_change"] = PatientChange(patient=after, by="tool")
    if switched(active, after):
        # Another patient: the previous one's conversation and summary leave this turn's prompts.
        update.update(history="", patient_context=None)
        detail += f"; active patient is now {after['name'] if after else 'none'}"
    update["timeline"] = [trace.event(decision, detail)]
    return update

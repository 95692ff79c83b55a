"""The approval card of a write and the clinician's decision on it (used by TOOL_EXECUTE and the Assistant).

A *pending action* is one proposed write. Its ``action_id`` is derived from the turn and the tool step, so it
is the same every time LangGraph replays the node. The write's idempotency key in the record is the action's id
AND the exact arguments written (``ehr/service.idempotency_key``), and the write names its action, so one
approval writes once and a replay finds only its own write. Each card shown for it (the first one, and one per
edit or refused click) has its own ``card_id`` and the digest of the arguments it was checked on (``args_hash``):
a decision is made on one card, covers only those arguments, and a card is consumed once (the Assistant's
per-thread claim).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal, TypedDict

from docgemma.ehr.service import canonical_args
from docgemma.tools.args import NOT_WRITTEN
from docgemma.tools.registry import ToolSpec
from docgemma.tools.review_types import CheckStatus, PatientCard, WriteReview

__all__ = ["ACTIONS", "ALREADY_HANDLED", "BEING_WRITTEN", "NO_PENDING", "RECORD_UNREACHABLE", "RECOVERED_RELEASED",
           "RECOVERED_UNKNOWN", "RECOVERED_WRITTEN", "Action", "ApprovalCard", "CardFinding", "PatientCard",
           "WriteReview", "approval_request", "args_digest", "as_review", "decision_digest", "parse_decision",
           "pending_action_id", "withdrawn_note"]

Action = Literal["approve", "edit", "reject", "override"]
ACTIONS: tuple[str, ...] = ("approve", "edit", "reject", "override")
ALREADY_HANDLED = (
    "This approval card was already handled (approved, edited or rejected by an earlier click or call); "
    "nothing more was written."
)
NO_PENDING = "There is no pending action to approve."
#: A live claim of another process: the decision on this card is being carried out there right now.
BEING_WRITTEN = ("This approval is being carried out right now (by another server of this app); nothing was "
                 "changed by this click. Try again in a moment.")
#: Recovery of a claim whose process died: the write had reached the record (``{label}``: the card's label in lower
#: case, ``{what}``: the write as its confirmation words it, ``{record}``: its resource id).
RECOVERED_WRITTEN = ("The {label} was written: {what}. The approval was interrupted, but the write had already "
                     "reached the record before the interruption: {record} (written once; nothing more was written).")
#: Recovery of a claim whose process died before anything was written.
RECOVERED_RELEASED = ("The approval was interrupted before anything was written; the card is waiting for your "
                      "decision again.")
#: Recovery without a way to look the write up (no record lookup configured).
RECOVERED_UNKNOWN = ("The approval was interrupted; the card is waiting for your decision again (approving it "
                     "cannot write twice: a write already made under this card is reused).")
RECORD_UNREACHABLE = ("The approval was interrupted and the record cannot be reached to check whether the write "
                      "was made; nothing was changed. Try again in a moment.")


class CardFinding(TypedDict):
    """One safety finding on the card; a ``severe`` one refuses a plain approval (override with a reason)."""

    text: str
    severe: bool


class ApprovalCard(TypedDict):
    """What the clinician is shown before a write (:func:`approval_request`); a decision names its ``card_id``.
    ``warnings`` lists every finding, severe ones first; ``findings`` is the same list with a ``severe`` flag."""

    kind: Literal["approval"]
    tool: str
    label: str
    args: dict[str, Any]
    preview: str
    warnings: list[str]
    severe: list[str]
    findings: list[CardFinding]
    #: Every safety check of the write and whether it ran (its source, or why it could not).
    checks: list[CheckStatus]
    #: How long the order runs, as the card shows it ("7 days", "until review"); "" when none was given.
    duration: str
    override_required: bool
    patient: PatientCard | None
    notice: str
    action_id: str
    revision: int
    card_id: str
    #: The digest of the arguments the checks ran on (:func:`args_digest`): an approval or override covers these
    #: arguments only; a decision whose arguments differ is checked again and shown as a new card.
    args_hash: str


def as_review(value: WriteReview | None) -> WriteReview:
    """The review with its lists present (none when no write check is configured)."""
    return WriteReview(**{"warnings": [], "severe": [], "checks": [], **(value or {})})


def pending_action_id(thread: str, turn: str, step: int) -> str:
    """Stable for one proposed write (same on every replay of the node), new for every other one."""
    return hashlib.sha256(f"{thread}|{turn}|{step}".encode()).hexdigest()[:32]


def args_digest(args: dict[str, Any]) -> str:
    """The canonical digest of a write's arguments (sorted keys, no empty values: a form's empty field and an
    absent value are the same argument), so a decision can be matched to exactly what was checked."""
    stripped = {k: (v.strip() if isinstance(v, str) else v) for k, v in args.items()}
    return hashlib.sha256(canonical_args(stripped).encode()).hexdigest()


def withdrawn_note(card: ApprovalCard) -> str:
    """What the chat says when a pending card is withdrawn because the clinician selected another patient."""
    who = (card.get("patient") or {}).get("name") or str(card["args"].get("patient_id", "the previous patient"))
    return (f"The pending {card['label'].lower()} for {who} was withdrawn when you selected another patient: "
            "nothing was written. Ask for it again if you still want it.")


def _card_id(action_id: str, revision: int, tool: str, args: dict[str, Any], review: WriteReview) -> str:
    # The card's content is part of its id: when the record changed between showing a card and its approval
    # (a replay recomputes the checks), the approval no longer matches and a fresh card is shown instead.
    raw = json.dumps([action_id, revision, tool, args, review.get("warnings"), review.get("severe"),
                      review.get("patient")], sort_keys=True, default=str)
    return f"{action_id[:12]}-{revision}-{hashlib.sha256(raw.encode()).hexdigest()[:8]}"


def approval_request(spec: ToolSpec, args: dict[str, Any], review: WriteReview, *,
                     action_id: str = "", revision: int = 0, notice: str = "") -> ApprovalCard:
    """What the clinician is shown before a write (``review`` as :func:`as_review` gives it): who it is for,
    a readable preview, the safety warnings, and whether only an override with a reason can approve it."""
    lines = [f"{field.replace('_', ' ').capitalize()}: {value}" for field, value in args.items()
             # The patient is shown once, in its header; the words no field took are a finding, not a value.
             if (field != "patient_id" or not review.get("patient")) and field not in NOT_WRITTEN]
    severe = list(review.get("severe", []))
    # Every severe finding is shown, and first: before duplicate orders, notes and parse warnings.
    warnings = list(dict.fromkeys([*severe, *review.get("warnings", [])]))
    return ApprovalCard(**{
        "kind": "approval",
        "tool": spec.name,
        "label": spec.label,
        "args": args,
        "preview": f"{spec.label}\n" + "\n".join(lines),
        "warnings": warnings,
        "severe": severe,
        "findings": [CardFinding(text=w, severe=w in severe) for w in warnings],
        "checks": list(review.get("checks", [])),
        "duration": str(args.get("duration") or ""),
        "override_required": bool(severe),
        "patient": review.get("patient"),
        "notice": notice,
        "action_id": action_id,
        "revision": revision,
        "card_id": _card_id(action_id, revision, spec.name, args, review),
        "args_hash": args_digest(args),
    })


#: The resume value's key for a message the clinician sent while the card waited (set only by the Assistant, never by
#: a caller's decision: ``assistant.DECISION_KEYS`` leaves it out). The card waits on, with :func:`unsent_notice`.
UNSENT = "unsent"
#: How much of each unsent message the notice quotes.
UNSENT_QUOTE = 200


def quote(message: str) -> str:
    """``message`` in quotation marks, cut at :data:`UNSENT_QUOTE` characters (a notice says which message)."""
    return f"“{message[:UNSENT_QUOTE]}{'…' if len(message) > UNSENT_QUOTE else ''}”"


def unsent_notice(messages: list[str], label: str) -> str:
    """The card's notice after messages sent while it waited: they were not sent, and what to do. It is kept like
    the card's other notices (on the card while it waits, then on the turn's transcript entry), so that a reload
    still shows the refusal (issue 46)."""
    quoted = "; ".join(quote(m) for m in messages)
    which = "Your message was" if len(messages) == 1 else "Your messages were"
    return (f"{which} not sent while this card waits: {quoted}. Approve, edit or reject the {label} first, then "
            "send it again.")


def decision_digest(decision: Any) -> str:
    """The argument digest a decision says it was made on ("" when it names none: the card as shown)."""
    return str(decision.get("args_hash") or "") if isinstance(decision, dict) else ""


def parse_decision(decision: Any) -> tuple[str, dict[str, Any], str, str]:
    """(action, edited args, reason, card id) of a resume value; anything unreadable is a rejection."""
    if not isinstance(decision, dict):
        return "reject", {}, "", ""
    action = str(decision.get("action", "reject"))
    args = decision.get("args") if isinstance(decision.get("args"), dict) else {}
    reason = " ".join(str(decision.get("reason") or "").split())[:300]
    return (action if action in ACTIONS else "reject"), dict(args or {}), reason, str(decision.get("card_id") or "")

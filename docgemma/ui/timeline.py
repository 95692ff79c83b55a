"""The reasoning timeline in two registers from one typed event stream (issue 46).

The clinician's timeline tells each event kind through one clinical template: what was looked up, for whom, what
was found, what was decided and why, and what was written — in clinical words, derived from the turn's events
(never from a sentence that assumes what happened). The engineer's trace (probabilities, rule names, model calls
and token counts, the router's actions) is the same events told as the agent records them; it stays on the page
behind one "Technical details" control, closed by default (an HTML ``<details>`` element inside the timeline's
Markdown, so the Gradio API's outputs are unchanged).

Pure functions on strings (no Gradio).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from docgemma.ui import wording
from docgemma.ui.markup import clip, escape
from docgemma.workspace import TimelineEvent, TurnResult, split

__all__ = ["DETAILS_START", "TECHNICAL", "clinical_lines", "clinician_view", "with_details"]

#: The one control that holds the engineer's trace.
TECHNICAL = "Technical details"
DETAILS_START = '<details class="technical-details">'
_DETAILS = re.compile(rf"{re.escape(DETAILS_START)}.*?</details>", re.DOTALL)

#: What the error handling did next, in clinical words (``agent/nodes/error_handler``'s decisions).
_AFTER_FAILURE = {
    "SKIP": "not tried again; the answer says what is missing",
    "RETRY": "tried again",
    "retry_same": "tried again",
    "retry_different_args": "tried again with other search terms",
    "ASK_USER": "you are asked how to go on",
}
#: The decision of a step a model failure cut off (``agent/assistant.MODEL_DOWN``): its detail is the sentence.
MODEL_DOWN = "model not answering"
#: The result check's classes as what was found.
_FOUND = {"success_rich": "found", "success_partial": "found", "no_results": "nothing found",
          "error_retryable": "failed", "error_fatal": "failed"}
#: Parentheticals and clauses of the engineer's register that a decision may carry: the model-call and probability
#: notes, and the rules' account of the message ("; used: amoxicillin (drug)…", "; nothing to account for").
_ENGINEERING = re.compile(r"\s*\((?:no model call[^)]*|p=[\d.]+)\)|;?\s*used: .*$|;\s*nothing to account for$")
#: A decision's closing parenthetical in the engineer's words (``agent/nodes/synthesize.Answer``: "a thanks or goodbye,
#: acknowledged; nothing else was asked (no model call: answered by code)"); it may hold one nested pair, as a
#: reason quoted in it does.
_WHO_WROTE = re.compile(r"\s*\((?:no model call|written by code|greeting line written by)(?:[^()]|\([^()]*\))*\)\s*$")
#: The agent speaks of "the clinician"; the clinician's timeline speaks to them.
_YOU = (("the clinician's message", "your message"), ("approved by the clinician", "approved by you"),
        ("declined by the clinician", "declined by you"), ("the clinician asks", "you ask"),
        ("the clinician picked", "you picked"), ("asked the clinician", "asked you"))
_RULE_REASON = re.compile(r"^(?:decided by rule[^:]*|unsure[^:]*): ")
#: Why a rule stood alone, in the engineer's words (``agent/decision._rule_alone``): the trace keeps them.
_RULE_HEADS = re.compile(r"^(?:nothing is done or written on this request, or an id that is no patient's is said"
                         r"|a form no reading mistakes \([^)]*\)"
                         r"|the request names exactly what it needs \([^)]*\)): ")


def _plain(text: str) -> str:
    """A decision without the engineer's parentheticals ("(no model call)", "(p=0.97)"), said to the clinician."""
    return _to_you(_ENGINEERING.sub("", _WHO_WROTE.sub("", text)).strip())


def _to_you(text: str) -> str:
    for theirs, yours in _YOU:
        text = text.replace(theirs, yours)
    return text


def _reason(detail: str) -> str:
    """Why a rule decided, in its own words ("the request names what it needs (Prescription)"), without the
    rule's name, the classifier's probability or the model-call count."""
    reason = _RULE_HEADS.sub("", _RULE_REASON.sub("", detail.split("; first resource:")[0]))
    return _plain(reason)


#: The model's reading of a request no rule was sure of (``agent/nodes/intent_classify._by_model``): its summary.
_MODEL_READ = re.compile(r"; model asked\. (?:model output unusable; intent decided from the extracted entities\. )?")


def _by_model(decision: str, detail: str, text: Callable[[str], str]) -> str:
    """A request no rule was sure of, which the model then classified (or, its output unusable, the drugs and
    patients the message names decided): what it was read as. What happens next follows: the look-ups, the answer."""
    summary = escape(text(_MODEL_READ.split(detail, maxsplit=1)[-1]))  # the model's words, as it wrote them
    if "model output unusable" in detail:
        read = "read from the drugs and patients it names" if decision == "TOOL_NEEDED" else \
            "no look-up needed: it names no drug or patient"
        return f"**Request** — not certain what was asked; {read}"
    how = "read by the model" if decision == "TOOL_NEEDED" else "no look-up needed, as the model read it"
    return f"**Request** — {how}" + (f": {summary}" if summary else "")


def _understood(e: TimelineEvent, text: Callable[[str], str]) -> str | None:
    decision, detail = e["decision"], e["detail"]
    if decision == "not decided":  # the answer's line says what the clinician is offered
        return "**Request** — not certain what was asked"
    if detail.startswith("unsure"):
        return _by_model(decision, detail, text)
    reason = escape(text(_reason(detail)))  # the rule's words may quote the message: escaped like all text
    if decision == "DIRECT":
        return f"**Request** — no look-up needed ({reason})" if reason else "**Request** — no look-up needed"
    if decision == "TOOL_NEEDED":  # the look-ups that follow say what was looked up; this says why
        return f"**Request** — {reason}" if reason else None
    return f"**Request** — {escape(text(_plain(decision)))}"


def _looked_up(e: TimelineEvent, text: Callable[[str], str]) -> str:
    what = e["label"].removeprefix("Consulting: ")
    decision = e["decision"].strip()
    details = text(_to_you(e["detail"]).replace("\n", " "))  # the detail quotes the record: only "you" is said
    if wording.is_declined(e["node"], decision):
        outcome = "declined by you: nothing written"
    elif decision == "success" and "approved by the clinician" in e["detail"]:
        outcome = "written to the record"
    elif decision == "success":
        outcome = "done"
    else:
        outcome = text(decision)
    return f"**{escape(what)}** — {escape(clip(details))}{' → ' if details else ''}{escape(outcome)}"


def clinical_lines(timeline: Sequence[TimelineEvent], text: Callable[[str], str]) -> list[str]:
    """One line per event that a clinician reads (``text``: the page's wording of a step's words: patient names,
    tool labels). The routing and the choice of a resource are told by the look-up that follows them."""
    lines: list[str] = []
    for e in timeline:
        node, decision = e["node"], e["decision"].strip()
        if decision == MODEL_DOWN:  # the clinician's one sentence for a backend that cannot answer (issue 45)
            lines.append(f"**{escape(e['label'].removesuffix('…'))}** — {escape(e['detail'])}")
        elif node == "intent_classify":
            line = _understood(e, text)
            if line:
                lines.append(line)
        elif node == "tool_execute":
            lines.append(_looked_up(e, text))
        elif node == "result_classify" and lines and decision in _FOUND and "→ done" in lines[-1]:
            # What the look-up found, on its own line: "done" says the call ran, this what came back.
            lines[-1] = lines[-1].replace("→ done", f"→ {_FOUND[decision]}")
        elif node == "error_handler" and decision in _AFTER_FAILURE:
            lines.append(f"**After the failure** — {_AFTER_FAILURE[decision]}")
        elif node == "synthesize":
            lines.append(f"**Answer** — {escape(text(_plain(decision)))}")
        elif node in ("commit_patient", "thread_update"):
            lines.append(f"**Patient** — {escape(text(_plain(decision)))}")
        elif node == "input_assembly" and decision not in ("text only", ""):
            lines.append(f"**Your message** — {escape(text(_plain(decision)))}")
    return lines


def header(result: TurnResult, pending: bool) -> str:
    """For whom, what was written (from the turn's writes, never assumed) and how sure."""
    parts = []
    if result.active_patient:
        parts.append(f"**Patient:** {escape(result.active_patient['name'])}")
    if pending:
        parts.append("**Waiting for your approval:** nothing written yet")
    elif result.writes:
        written = "; ".join(wording.write_line(split(w)[0])[0] for w in result.writes)
        parts.append(f"**Written to the record:** {escape(written)}")
    else:
        parts.append("**Written to the record:** nothing")
    if result.confidence and not pending:
        parts.append(f"**Confidence:** {escape(result.confidence)}")
    return " · ".join(parts)


def with_details(clinical: str, trace: str) -> str:
    """The clinician's timeline, then the engineer's trace behind one closed control."""
    return f"{clinical}\n\n{DETAILS_START}<summary>{TECHNICAL}</summary>\n\n{trace}\n\n</details>"


def clinician_view(timeline: str) -> str:
    """What a clinician reads of the timeline: everything but the closed technical details."""
    return _DETAILS.sub("", timeline)

"""Pure functions turning agent events and results into what the page shows (no Gradio import: plain dicts
and Markdown strings, so they are tested without a browser).

A chat message is ``{"role", "content", "metadata"?}``, the shape ``gr.Chatbot`` accepts. The chat keeps the
clinician's messages and the answers; the steps live in the timeline (``ui/timeline.py``), not under each answer
(issue 46: 3–9 collapsed step headings per answer made the chat long). While a turn runs, one pending line says
which step is under way; the answer replaces it. All text — the clinician's own, the
model's, the tools' and the record's — is escaped: no HTML, no script, no remote images; prompt-template
echoes in model text are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from docgemma.ui import timeline, wording
from docgemma.ui.markup import DETAIL_LIMIT, clip, demote_headings, escape, patient_header, source_link
from docgemma.workspace import (
    SWITCH_PREFIX,
    AgentEvent,
    ApprovalCard,
    ApprovalRequest,
    NodeEnd,
    NodeStart,
    Source,
    TimelineEvent,
    Token,
    Tools,
    TranscriptEntry,
    TurnDone,
    TurnResult,
    split,
    strip_template_debris,
)

__all__ = [
    "DETAIL_LIMIT",
    "IMAGE_ONLY",
    "INTERRUPTED",
    "INTERRUPTED_AFTER_WRITE",
    "NOT_ANSWERED",
    "REOPENED",
    "STILL_ANSWERING",
    "WELCOME",
    "answering_line",
    "apply_event",
    "approval_pointer",
    "clip",
    "demote_headings",
    "escape",
    "final_markdown",
    "patient_header",
    "restored_history",
    "status_line",
    "summary_markdown",
    "timeline_markdown",
    "transcript_history",
    "user_message",
]

Message = dict[str, Any]
#: The greeting when nothing is known about the installation (the page says what *this* one does: ``ui/modes``).
WELCOME = (
    "Hello, I am **DocGemma Connect**, a clinical decision-support assistant. Nothing is written to the record "
    "without your approval, and every answer shows how it was reached and how confident it is."
)
REOPENED = ("*Conversation reopened: this browser kept it (only its id). Not yours, or done? Press "
            "**New conversation**.*")
IMAGE_ONLY = "*(an image, not shown again)*"
#: A message whose turn's run is gone (issue 46), said only when the turn wrote nothing (``SavedConversation.wrote``);
#: a turn that wrote an approved card's values first is told with :data:`INTERRUPTED_AFTER_WRITE`.
INTERRUPTED = ("*This answer was interrupted (the page was reloaded or the app restarted) — nothing was written. "
               "Press Send again to ask it again.*")
INTERRUPTED_AFTER_WRITE = ("*This answer was interrupted (the page was reloaded or the app restarted) after the write "
                           "you approved was made: it is in the record. Check it before pressing Send again.*")
#: An earlier message left unanswered that way (the button is offered for the last one only).
NOT_ANSWERED = "*Not answered: the answer was interrupted (the page was reloaded or the app restarted).*"
#: A reopened page whose turn is still running in this process: the answer follows on this line.
STILL_ANSWERING = "Still answering this message…"
IMAGE_GONE = "*(an image, no longer kept on this server)*"
#: Looks up a patient's name by record id (the page's workspace); None where nothing is known.
Names = wording.PatientName


def user_message(text: str) -> Message:
    """The clinician's own message as the chat shows it: escaped like model text (a pasted
    ``![x](http://…)`` must not make the browser fetch anything)."""
    return {"role": "user", "content": escape(text)}


def _answer_index(history: list[Message]) -> int:
    """The message the turn's answer is streamed into: the last one when it is this answer so far, else a new one
    (after the approval card's line the decision's answer is a message of its own, never appended to that line)."""
    last = history[-1] if history else None
    if last and last["role"] == "assistant" and not last.get("metadata") and not _is_pointer(last):
        return len(history) - 1
    history.append({"role": "assistant", "content": ""})
    return len(history) - 1


def shown_steps(timeline: Sequence[TimelineEvent]) -> list[TimelineEvent]:
    """The turn's steps as the page tells them: after a write the clinician declined, its check and routing say
    so, and the error handling that skips it is not shown (see ``wording.AFTER_DECLINE``)."""
    out: list[TimelineEvent] = []
    declined = False
    for e in timeline:
        if e["node"] == "tool_execute":
            declined = wording.is_declined(e["node"], e["decision"])
        shown = _after_decline(e) if declined else e
        if shown is not None:
            out.append(shown)
    return out


def _after_decline(e: TimelineEvent) -> TimelineEvent | None:
    """A step that follows a declined write, as the page tells it (None: not shown)."""
    if e["node"] not in wording.AFTER_DECLINE:
        return e
    told = wording.AFTER_DECLINE[e["node"]]
    return None if told is None else {**e, "decision": told[0], "detail": told[1]}


def _declined_routes(timeline: Sequence[TimelineEvent]) -> list[bool]:
    """For each routing to the error handling, in order: whether it followed a declined write."""
    flags, declined = [], False
    for e in timeline:
        if e["node"] == "tool_execute":
            declined = wording.is_declined(e["node"], e["decision"])
        elif e["node"] == "router" and e["decision"] == "ERROR_HANDLER":
            flags.append(declined)
    return flags


#: The id of the one pending line that says which step is under way (never kept: the answer replaces it).
PROGRESS = "progress"


def _is_progress(message: Message) -> bool:
    return (message.get("metadata") or {}).get("id") == PROGRESS


def _progress(history: list[Message], event: NodeStart | NodeEnd) -> None:
    """The step under way, on one pending line. After a write the clinician declined, the error handling that
    skips it is no failure: its "Handling a problem" is not shown (see ``shown_steps``)."""
    last = history[-1] if history and _is_progress(history[-1]) else None
    if isinstance(event, NodeEnd):
        if last is not None and wording.is_declined(event.event["node"], event.event["decision"]):
            last["metadata"] = {**last["metadata"], "declined": True}
        return
    if last is not None and event.node == "error_handler" and last["metadata"].get("declined"):
        return
    line = {"role": "assistant", "content": "",
            "metadata": {"title": f"{event.label}…", "id": PROGRESS, "status": "pending"}}
    if last is not None:
        history[-1] = line
    else:
        history.append(line)


def answering_line() -> Message:
    """The pending line of a turn still running when its page was reopened (its first step replaces it)."""
    return {"role": "assistant", "content": "", "metadata": {"title": STILL_ANSWERING, "id": PROGRESS,
                                                             "status": "pending"}}


def _without_progress(history: list[Message]) -> list[Message]:
    return [m for m in history if not _is_progress(m)]


def apply_event(history: list[Message], event: AgentEvent, names: Names | None = None,
                born: wording.PatientBorn | None = None, tools: Tools | None = None) -> list[Message]:
    """Return a new history with ``event`` applied (``names``: patient names for record ids; ``born``: a
    patient's birth date and sex, said in the answer instead of their record id; ``tools``: the running tools as
    the workspace gives them, named by their labels). A step is not kept in the chat: the timeline tells it."""
    history = [dict(m) for m in history]
    if isinstance(event, (NodeStart, NodeEnd)):
        _progress(history, event)
        return history
    history = _without_progress(history)
    if isinstance(event, Token):
        index = _answer_index(history)
        # Cleaned as a whole each time: an echo split across chunks is caught once complete.
        # The text so far as written here or as the page sent it back (Gradio's content blocks).
        content = strip_template_debris(_text(history[index]) + escape(event.text), streaming=True)
        history[index] = {"role": "assistant", "content": content}
    elif isinstance(event, ApprovalRequest):
        # The card itself is shown once, below the conversation; the chat only says that one is waiting. A new card
        # for the same write (a re-check, a refused click) replaces the line of the card it replaced: said once.
        pointer = {"role": "assistant", "content": approval_pointer(event.request)}
        if history and _is_pointer(history[-1]):
            history[-1] = pointer
        else:
            history.append(pointer)
    elif isinstance(event, TurnDone):
        index = _answer_index(history)
        history[index] = {"role": "assistant", "content": final_markdown(event.result, born, tools)}
    return history


def restored_history(messages: Sequence[Mapping[str, Any]], pending: ApprovalCard | None = None,
                     paused_question: str | None = None) -> list[Message]:
    """The chat of a reopened conversation from its prompt history only (a thread saved before the transcript
    was kept): the welcome, the clinician's messages and the answers, a patient switch as a note, and, when a
    write waits, the paused turn's question and the pointer to its card. Everything escaped like live text."""
    history: list[Message] = [{"role": "assistant", "content": WELCOME}]
    if messages or pending is not None:
        # On a shared computer the next person sees whose conversation this is not: say it was reopened.
        history.append({"role": "assistant", "content": REOPENED})
    for message in messages:
        text = str(message.get("content", ""))
        if message.get("role") == "user":
            # An image-only turn has no text; the image itself is not shown again.
            history.append(user_message(text) if text.strip() else {"role": "user", "content": IMAGE_ONLY})
        elif message.get("role") == "assistant":
            history.append({"role": "assistant", "content": demote_headings(escape(text))})
        elif text.startswith(SWITCH_PREFIX):
            who = text[len(SWITCH_PREFIX):].strip().removeprefix("now:").strip()
            history.append({"role": "assistant", "content": f"*Active patient changed to {escape(who)}.*"})
    return _with_pending(history, pending, paused_question)


def _with_pending(history: list[Message], pending: ApprovalCard | None, paused_question: str | None) -> list[Message]:
    if pending is not None:
        if paused_question:
            history.append(user_message(paused_question))
        history.append({"role": "assistant", "content": approval_pointer(pending)})
    return history


#: Shows a turn's image in the chat: (filename, bytes) to a chat message, or None when it cannot be shown.
ImageShown = Callable[[TranscriptEntry], "Message | None"]


def transcript_history(welcome: str, entries: Sequence[TranscriptEntry], pending: ApprovalCard | None = None,
                       paused_question: str | None = None, image: ImageShown | None = None,
                       born: wording.PatientBorn | None = None, names: Names | None = None,
                       tools: Tools | None = None) -> list[Message]:
    """The chat of a reopened conversation, whole: every finished turn as it was shown (question, image, answer
    with its write confirmations, confidence and sources; the steps are the timeline's), patient notes, and a
    waiting card's pointer (``names``: kept for the callers; the chat names no step)."""
    history: list[Message] = [{"role": "assistant", "content": welcome}]
    if entries or pending is not None:
        history.append({"role": "assistant", "content": REOPENED})
    for entry in entries:
        if entry.get("note"):
            history.append({"role": "assistant", "content": f"*{escape(str(entry['note']))}*"})
            continue
        if str(entry.get("question", "")).strip():
            history.append(user_message(str(entry["question"])))
        if entry.get("image"):
            shown = image(entry) if image else None
            history.append(shown or {"role": "user", "content": IMAGE_GONE})
        if entry.get("sent"):  # sent, never answered: its run was cut off (the caller tells the last one)
            history.append({"role": "assistant", "content": NOT_ANSWERED})
            continue
        # What the turn's cards said ("Plain approval refused: …"), kept once the card is gone.
        history += [{"role": "assistant", "content": f"*{escape(str(note))}*"} for note in entry.get("notes", [])]
        # The record among the sources comes from the turn's tools and patient, as in the live answer.
        result = TurnResult(answer=str(entry.get("answer", "")), confidence=entry.get("confidence"),
                            sources=list(entry.get("sources", [])), writes=list(entry.get("writes", [])),
                            tools=[dict(t) for t in entry.get("tools", [])], active_patient=entry.get("patient"))
        history.append({"role": "assistant", "content": final_markdown(result, born, tools)})
    return _with_pending(history, pending, paused_question)


POINTER_START = "**Approval needed before writing to the record:**"


def _text(message: Message) -> str:
    """A message's text, as this module writes it (a string) or as the page sends it back (Gradio's content
    blocks: ``[{"type": "text", "text": …}]``)."""
    content = message.get("content", "")
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return content if isinstance(content, str) else ""


def _is_pointer(message: Message) -> bool:
    return message.get("role") == "assistant" and not message.get("metadata") and _text(message).startswith(POINTER_START)


def approval_pointer(request: ApprovalCard) -> str:
    """The chat's line for a waiting card (the card is shown once, under the conversation)."""
    patient = request.get("patient") or {}
    who = f" for {escape(str(patient['name']))}" if patient.get("name") else ""
    notice = f"\n\n{escape(request['notice'])}" if request.get("notice") else ""
    severe = (" **Severe finding:** approving needs an override with a reason."
              if request.get("override_required") else "")
    return (f"{POINTER_START} {escape(str(request.get('label', 'write')))}{who} — "
            f"review the card below; nothing is written until you decide.{severe}{notice}")


def _links(sources: list[Source]) -> list[str]:
    """Each source as a link to its tool's own host, its URL re-encoded; as text when the URL is anything else."""
    return [source_link(str(s.get("title", "")), s.get("url", "")) for s in sources]


def _used(result: TurnResult, tools: Tools, search: bool) -> bool:
    """Whether a tool of the turn succeeded that reads the record (``search``: that finds patients by name)."""
    for call in result.tools:
        tool = tools.get(str(call.get("tool")))
        if call.get("status") == "success" and tool and (tool.patient_search if search else
                                                          tool.record and not tool.patient_search):
            return True
    return False


def source_line(result: TurnResult, tools: Tools | None = None) -> str:
    """The turn's sources as links (https only), and the patient record when the turn read it (by ``tools``, the
    running tools' kinds): the active patient's when a record tool read it, the record's patient list when the
    turn only searched it."""
    parts = _links(result.sources)
    tools = tools or {}
    if _used(result, tools, search=False):
        who = f" of {escape(result.active_patient['name'])}" if result.active_patient else ""
        parts.append(f"the patient record{who}")
    elif _used(result, tools, search=True):
        parts.append("the patient record (search by name)")
    return " · ".join(parts)


def write_markdown(confirmation: str) -> str:
    """One write's confirmation: what was written, its kind in words (the FHIR reference stays in the audit), any
    override reason, the values written and what the clinician changed from the proposal."""
    head, lines = split(confirmation)
    what, kind, ref, reason = wording.write_line(head)
    text = f'<span class="check-ok">Written to the record</span> **{escape(what)}**'
    if ref:  # the kind in words; the FHIR reference ("MedicationRequest/60b2…") stays in the audit, not the chat
        text += f" — {escape(kind)}"
    if reason:
        text += f"  \nSevere finding overridden by you; reason: *{escape(reason)}*"
    for line in lines:  # every value written, then what was changed from the proposal
        label, _, rest = line.partition(": ")
        text += f"  \n**{escape(label)}:** {escape(rest)}"
    return text + "\n\n"


def final_markdown(result: TurnResult, born: wording.PatientBorn | None = None, tools: Tools | None = None) -> str:
    """The answer, then what was written (its kind in words): the end of the answer shows the write, not a
    look-up's facts before it (issue 46: "Patients found" closed an approved order's answer); then its confidence
    and sources."""
    written = "".join(write_markdown(w) for w in result.writes).rstrip()
    text = demote_headings(escape(wording.answer_text(result.answer, born))).rstrip()
    text = f"{text}\n\n{written}".strip() if written else text
    if result.confidence:
        text += f"\n\n*Confidence: {result.confidence}*"
    sources = source_line(result, tools)
    if sources:
        text += "\n\nSources: " + sources
    return text


#: The route of a turn that consulted nothing: never "direct answer", which a refused question did not get.
NO_LOOKUP = "no look-up"


def timeline_markdown(result: TurnResult | None, pending: bool = False, names: Names | None = None,
                      tools: Tools | None = None) -> str:
    """The turn in two registers (``ui/timeline.py``): what a clinician reads (for whom, what was looked up and
    found, decided and written), then the engineer's trace behind one closed "Technical details" control. With
    ``pending`` the turn is paused for the clinician's approval: its steps so far, nothing written."""
    if result is None or not result.timeline:
        return "*No turn yet.*"
    steps = shown_steps(result.timeline)
    lines = timeline.clinical_lines(steps, lambda text: wording.step_text(text, names, tools))
    sources = source_line(result, tools)
    clinical = "\n".join(
        [timeline.header(result, pending), "", *(f"{i}. {line}" for i, line in enumerate(lines, 1))]
        + ([f"\n**Sources:** {sources}"] if sources else []))
    return timeline.with_details(clinical, trace_markdown(result, pending, names, tools))


def trace_markdown(result: TurnResult, pending: bool = False, names: Names | None = None,
                   tools: Tools | None = None) -> str:
    """The engineer's trace of a turn: each node's decision and detail as the agent recorded them (rules,
    probabilities), route, model calls, tokens and time."""
    # A numbered list, not a table: the panel is ~450 px wide at 1440 px, and a five-column table there
    # broke words letter by letter ("Understa/nding"). Each step: label, decision, time, calls; detail below.
    rows = []
    for i, e in enumerate(shown_steps(result.timeline), 1):
        detail = escape(clip(wording.step_text(e["detail"].replace("\n", " "), names, tools)))
        decision = escape(wording.step_text(e["decision"], names, tools))
        calls = _cost(e)
        rows.append(f"{i}. **{escape(e['label'])}** — {decision} · {e['duration_ms']:.0f} ms{calls}"
                    + (f"  \n   {detail}" if detail else ""))
    if pending:
        spent = sum(e["duration_ms"] for e in result.timeline) / 1000
        total = (f"**Waiting for your approval** (nothing written yet) · **model calls:** {result.llm_calls} · "
                 f"**prompt tokens:** {result.prompt_tokens}{_cached(result.cached_tokens)} · "
                 f"**time so far:** {spent:.1f} s")
    else:
        total = (
            f"**Confidence:** {result.confidence or 'n/a'} · **model calls:** {result.llm_calls} · "
            f"**prompt tokens:** {result.prompt_tokens}{_cached(result.cached_tokens)} · "
            f"**decoded tokens:** {result.decoded_tokens} · **time:** {result.latency_ms / 1000:.1f} s"
        )
    route = wording.route(result.router_actions, _declined_routes(result.timeline)) or ("waiting" if pending else NO_LOOKUP)
    sources = source_line(result, tools) or "none"
    return f"{total}\n\n**Routing:** {escape(route)}\n\n" + "\n".join(rows) + f"\n\n**Sources:** {sources}"


def summary_markdown(name: str, summary_text: str, notes: Sequence[str] = ()) -> str:
    """The compiled patient summary for the patient panel (escaped; headings kept; the patient by name and
    birth date, not record id), and the newest notes."""
    lines = []
    for line in wording.clinical_text(wording.without_patient_ids(summary_text)).splitlines():
        if line.startswith("## "):
            lines.append(f"\n**{escape(line[3:])}**\n")  # a paragraph of its own, never inside a list item
        else:
            lines.append(escape(line) + ("" if line.lstrip().startswith("- ") else "  "))
    if notes:
        lines.append("\n**Clinical notes (newest first)**\n")
        lines += [f"- {escape(n)}" for n in notes]
    return f"### {escape(name)}\n" + "\n".join(lines)


def status_line(model: str, note: str | None, network: str) -> str:
    """Which model and device answer, and whether the network tools are reachable, in words a clinician
    reads (no "CUDA")."""
    name = model.split(" · ")[0].strip()
    if note:
        note = note.replace("CUDA is not available", "No GPU on this machine")
    if note and name and name in note:
        note = note.replace(name, "this model")  # the label is already on the line, once is enough
    warning = f" {escape(note)}" if note else ""
    return f"**Model:** {escape(model)}.{warning} **Knowledge tools:** {escape(network)}."


def _cost(e: TimelineEvent) -> str:
    """A node's model cost for its title: calls and tokens, or nothing when code decided alone."""
    if not e["llm_calls"]:
        return ""
    calls = f"{e['llm_calls']} model call{'s' if e['llm_calls'] != 1 else ''}"
    parts = [f"{e['prompt_tokens']} prompt tokens"]
    # ``.get``: events of a turn checkpointed before these figures existed do not carry them.
    if e.get("cached_tokens"):
        parts.append(f"{e['cached_tokens']} from cache")
    if e.get("decoded_tokens"):
        parts.append(f"{e['decoded_tokens']} decoded")
    return f" · {calls} ({', '.join(parts)})"


def _cached(cached: int) -> str:
    return f" ({cached} from cache)" if cached else ""

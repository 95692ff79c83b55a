"""Pure functions turning agent events and results into what the page shows (no Gradio import: plain dicts
and Markdown strings, so they are tested without a browser).

A chat message is ``{"role", "content", "metadata"?}``, the shape ``gr.Chatbot`` accepts. Each node is a
collapsible thought (title, status pending → done, duration); a tool call is nested under the step that
chose it (``parent_id``); the answer streams into a plain message. All text — the clinician's own, the
model's, the tools' and the record's — is escaped: no HTML, no script, no remote images; prompt-template
echoes in model text are dropped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from docgemma.agent.answer import strip_template_debris
from docgemma.agent.approval import ApprovalCard, PatientCard
from docgemma.agent.events import AgentEvent, ApprovalRequest, NodeEnd, NodeStart, Token, TurnDone, TurnResult
from docgemma.agent.memory import SWITCH_PREFIX
from docgemma.agent.state import TimelineEvent
from docgemma.tools.outcome import Source

Message = dict[str, Any]
WELCOME = (
    "Hello, I am **DocGemma Connect**, a clinical decision-support assistant. Ask a clinical question; "
    "check FDA drug safety warnings or interactions; find literature or recruiting trials; or search for a "
    "patient in the panel on the right and ask about the chart. You can attach an image (PNG, JPEG or "
    "DICOM). Nothing is written to the record without your approval, and every answer shows how it was "
    "reached and how confident it is: verify before acting."
)
REOPENED = ("*Conversation reopened: this browser kept it (only its id). Not yours, or done? Press "
            "**New conversation**.*")
IMAGE_ONLY = "*(an image, not shown again)*"
_IMAGE_MD = re.compile(r"!\[")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
#: Characters of a step's detail shown in the timeline panel: room for a prescription's arguments.
DETAIL_LIMIT = 300


def escape(text: str) -> str:
    """Show text as text: HTML escaped, Markdown image syntax defused (no remote images)."""
    return _IMAGE_MD.sub("!\\[", html.escape(text, quote=False))


def demote_headings(text: str) -> str:
    """Markdown headings as bold lines: in the chat a record's ``## Safety`` rendered as a page-size title. Each
    is a paragraph of its own: right after a list, a bare bold line became part of the list's last item."""
    return _HEADING.sub(r"\n**\1**\n", text)


def clip(text: str, limit: int = DETAIL_LIMIT) -> str:
    """At most ``limit`` characters, with an ellipsis when cut (a cut argument list must not look complete)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def user_message(text: str) -> Message:
    """The clinician's own message as the chat shows it: escaped like model text (a pasted
    ``![x](http://…)`` must not make the browser fetch anything)."""
    return {"role": "user", "content": escape(text)}


def _detail(text: str) -> str:
    """A timeline detail for people: the intent step's tool hint in plain words."""
    return text.replace("(hint: ", "(suggested: ").strip()


def _last_thought(history: list[Message], node: str, pending_only: bool) -> int | None:
    for i in range(len(history) - 1, -1, -1):
        meta = history[i].get("metadata") or {}
        if str(meta.get("id", "")).startswith(f"{node}:") and (meta.get("status") == "pending" or not pending_only):
            return i
    return None


def _answer_index(history: list[Message]) -> int:
    last = history[-1] if history else None
    if last and last["role"] == "assistant" and not last.get("metadata"):
        return len(history) - 1
    history.append({"role": "assistant", "content": ""})
    return len(history) - 1


def apply_event(history: list[Message], event: AgentEvent) -> list[Message]:
    """Return a new history with ``event`` applied."""
    history = [dict(m) for m in history]
    if isinstance(event, NodeStart):
        meta: dict[str, Any] = {"title": event.label, "id": f"{event.node}:{len(history)}", "status": "pending"}
        if event.node == "tool_execute":
            parent = _last_thought(history, "tool_select", pending_only=False)
            if parent is not None:
                meta["parent_id"] = history[parent]["metadata"]["id"]
        history.append({"role": "assistant", "content": "", "metadata": meta})
    elif isinstance(event, NodeEnd):
        e = event.event
        index = _last_thought(history, e["node"], pending_only=True)
        if index is not None:
            calls = _cost(e)
            history[index] = {
                "role": "assistant",
                "content": escape(f"{e['decision']}: {_detail(e['detail'])}" if e["detail"] else e["decision"]),
                "metadata": {
                    **history[index]["metadata"],
                    "title": f"{e['label']} — {e['decision']}{calls}",
                    "status": "done",
                    "duration": round(e["duration_ms"] / 1000, 2),
                },
            }
    elif isinstance(event, Token):
        index = _answer_index(history)
        # Cleaned as a whole each time: an echo split across chunks is caught once complete.
        content = strip_template_debris(history[index]["content"] + escape(event.text), streaming=True)
        history[index] = {"role": "assistant", "content": content}
    elif isinstance(event, ApprovalRequest):
        # The card itself is shown once, below the conversation; the chat only says that one is waiting.
        history.append({"role": "assistant", "content": approval_pointer(event.request)})
    elif isinstance(event, TurnDone):
        index = _answer_index(history)
        history[index] = {"role": "assistant", "content": final_markdown(event.result)}
    return history


def restored_history(messages: Sequence[Mapping[str, Any]], pending: ApprovalCard | None = None,
                     paused_question: str | None = None) -> list[Message]:
    """The chat of a reopened conversation: the welcome, then the clinician's messages and the answers (no
    reasoning steps: those were the old turns' live view), a patient switch as a note, and, when a write
    waits, the paused turn's question and the pointer to its card. Everything escaped like live text."""
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
    if pending is not None:
        if paused_question:
            history.append(user_message(paused_question))
        history.append({"role": "assistant", "content": approval_pointer(pending)})
    return history


def approval_pointer(request: ApprovalCard) -> str:
    """The chat's line for a waiting card (the card is shown once, under the conversation)."""
    patient = request.get("patient") or {}
    who = f" for {escape(str(patient['name']))}" if patient.get("name") else ""
    notice = f"\n\n{escape(request['notice'])}" if request.get("notice") else ""
    severe = " ⛔ Severe finding: approving needs an override with a reason." if request.get("override_required") else ""
    return (f"**Approval needed before writing to the record:** {escape(str(request.get('label', 'write')))}{who} — "
            f"review the card below; nothing is written until you decide.{severe}{notice}")


def patient_header(patient: PatientCard | None) -> str:
    """Who the write is for: name, birth date, sex, allergies, active medications (the id once, last)."""
    if not patient:
        return ""
    allergies = "; ".join(escape(a) for a in patient.get("allergies", [])) or "none recorded"
    meds = patient.get("medications", [])
    listed = f": {'; '.join(escape(m) for m in meds)}" if meds else ""
    more = " …" if patient.get("active_medications", 0) > len(meds) else ""
    return (f"**Patient:** {escape(str(patient.get('name', '?')))} · born {escape(str(patient.get('birth_date', '?')))} · "
            f"{escape(str(patient.get('gender', '?')))}  \n**Allergies:** {allergies}  \n"
            f"**Active medications ({patient.get('active_medications', 0)})**{listed}{more}  \n"
            f"*Patient ID {escape(str(patient.get('id', '?')))}*\n\n")


def approval_markdown(request: ApprovalCard) -> str:
    """The approval card: who it is for, any notice and safety warning first, then what will be written."""
    notice = f"\n\nℹ️ **{escape(request['notice'])}**" if request.get("notice") else ""
    severe = set(request.get("severe", []))
    warnings = "".join(f"\n\n{'⛔' if w in severe else '⚠️'} **{escape(w)}**" for w in request.get("warnings", []))
    override = ("\n\n⛔ **Severe conflict: a plain approval is refused. Give a reason and use 'Override & approve', "
                "edit the order, or reject it.**" if request.get("override_required") else "")
    preview = escape(request["preview"]).replace("\n", "  \n")
    header = patient_header(request.get("patient"))
    return f"**Approval needed before writing to the record**{notice}{warnings}{override}\n\n{header}{preview}"


def _links(sources: list[Source]) -> list[str]:
    return [f"[{escape(s['title'])}]({s['url']})" for s in sources if str(s.get("url", "")).startswith("https://")]


def final_markdown(result: TurnResult) -> str:
    """What was written (with its resource id), then the answer with its confidence and sources as links (https
    only)."""
    written = "".join(f"✅ **Written to the record:** {escape(w)}\n\n" for w in result.writes)
    text = written + demote_headings(escape(result.answer))
    if result.confidence:
        text += f"\n\n*Confidence: {result.confidence}*"
    links = _links(result.sources)
    if links:
        text += "\n\nSources: " + " · ".join(links)
    return text


def timeline_markdown(result: TurnResult | None, pending: bool = False) -> str:
    """The turn's structured steps: route, tools, results, retries, decisions, calls and time. With
    ``pending`` the turn is paused for the clinician's approval: its steps so far, nothing written yet."""
    if result is None or not result.timeline:
        return "*No turn yet.*"
    # A numbered list, not a table: the panel is ~450 px wide at 1440 px, and a five-column table there
    # broke words letter by letter ("Understa/nding"). Each step: label, decision, time, calls; detail below.
    rows = []
    for i, e in enumerate(result.timeline, 1):
        detail = escape(clip(_detail(e["detail"]).replace("\n", " ")))
        decision = escape(e["decision"])
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
    route = " → ".join(result.router_actions) or ("waiting" if pending else "direct answer")
    sources = " · ".join(_links(result.sources)) or "none"
    return f"{total}\n\n**Routing:** {escape(route)}\n\n" + "\n".join(rows) + f"\n\n**Sources:** {sources}"


def summary_markdown(name: str, summary_text: str) -> str:
    """The compiled patient summary for the patient panel (escaped; headings kept)."""
    lines = []
    for line in summary_text.splitlines():
        if line.startswith("## "):
            lines.append(f"\n**{escape(line[3:])}**\n")  # a paragraph of its own, never inside a list item
        else:
            lines.append(escape(line) + ("" if line.lstrip().startswith("- ") else "  "))
    return f"### {escape(name)}\n" + "\n".join(lines)


def status_line(model: str, note: str | None, network: str) -> str:
    """Which model and device answer, and whether the network tools are reachable."""
    name = model.split(" · ")[0].strip()
    if note and name and name in note:
        note = note.replace(name, "this model")  # the label is already on the line, once is enough
    warning = f" ⚠️ {escape(note)}" if note else ""
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

"""Pure functions turning agent events into Gradio chat messages (no Gradio import: plain dicts).

A message is ``{"role", "content", "metadata"?}``, the shape ``gr.Chatbot`` accepts. Each node is a
collapsible thought (title, status pending → done, duration); the answer streams into a plain message.
"""

from __future__ import annotations

import html
from typing import Any

Message = dict[str, Any]


def _escape(text: str) -> str:
    """Model and tool text is shown as text: no HTML, no script, no remote images."""
    return html.escape(text, quote=False).replace("![", "!\\[")


def _thought_index(history: list[Message], node: str) -> int | None:
    for i in range(len(history) - 1, -1, -1):
        meta = history[i].get("metadata") or {}
        if meta.get("id", "").startswith(f"{node}:") and meta.get("status") == "pending":
            return i
    return None


def _answer_index(history: list[Message]) -> int:
    last = history[-1] if history else None
    if last and last["role"] == "assistant" and not last.get("metadata"):
        return len(history) - 1
    history.append({"role": "assistant", "content": ""})
    return len(history) - 1


def apply_event(history: list[Message], event: dict[str, Any]) -> list[Message]:
    """Return a new history with ``event`` applied."""
    history = [dict(m) for m in history]
    kind = event["type"]
    if kind == "node_start":
        history.append({"role": "assistant", "content": "",
                        "metadata": {"title": event["label"], "id": f"{event['node']}:{len(history)}", "status": "pending"}})
    elif kind == "node_end":
        e = event["event"]
        index = _thought_index(history, e["node"])
        if index is not None:
            calls = f" · {e['llm_calls']} model call(s)" if e["llm_calls"] else ""
            history[index] = {
                "role": "assistant",
                "content": _escape(f"{e['decision']}: {e['detail']}" if e["detail"] else e["decision"]),
                "metadata": {**history[index]["metadata"], "title": f"{e['label']} — {e['decision']}{calls}",
                             "status": "done", "duration": round(e["duration_ms"] / 1000, 2)},
            }
    elif kind == "token":
        index = _answer_index(history)
        history[index] = {"role": "assistant", "content": history[index]["content"] + _escape(event["text"])}
    elif kind == "approval":
        request = event["request"]
        warnings = "".join(f"\n\n**Warning:** {_escape(w)}" for w in request.get("warnings", []))
        history.append({"role": "assistant", "content": "**Approval needed before writing to the record**\n\n"
                        + _escape(request["preview"]).replace("\n", "  \n") + warnings})
    elif kind == "done":
        result = event["result"]
        index = _answer_index(history)
        history[index] = {"role": "assistant", "content": final_markdown(result)}
    return history


def final_markdown(result: Any) -> str:
    """The answer with its confidence and sources as links."""
    text = _escape(result.answer)
    if result.confidence:
        text += f"\n\n*Confidence: {result.confidence}*"
    links = [f"[{_escape(s['title'])}]({s['url']})" for s in result.sources if str(s.get("url", "")).startswith("https://")]
    if links:
        text += "\n\nSources: " + " · ".join(links)
    return text

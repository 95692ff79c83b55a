"""The first Gradio chat: streamed answer, each node as a collapsible thought, image upload, approvals.

Each browser session gets its own conversation thread (``gr.State``); model calls are queued one at a
time, which is what one GPU can serve. The full clinician workspace is a later issue.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from docgemma.agent.assistant import Assistant
from docgemma.config import Settings
from docgemma.ui.events import apply_event

log = logging.getLogger(__name__)
EXAMPLES = [
    "What is hypertension?",
    "Check FDA warnings for dofetilide",
    "Check interactions between warfarin, aspirin and ibuprofen",
    "Find recruiting clinical trials for heart failure",
]


def build_demo(assistant: Assistant, status: str) -> Any:
    """The Blocks app around ``assistant``."""
    import gradio as gr

    def respond(message: dict[str, Any], history: list[Any], thread: str) -> Iterator[tuple[Any, ...]]:
        text = str(message.get("text") or "")
        files = message.get("files") or []
        attachment = None
        if files:
            path = Path(files[0] if isinstance(files[0], str) else files[0]["path"])
            attachment = {"filename": path.name, "data": path.read_bytes()}
        history = [*history, {"role": "user", "content": text or f"[{attachment['filename'] if attachment else ''}]"}]
        pending = False
        for event in assistant.stream_turn(thread, text, attachment):  # type: ignore[arg-type]
            history = apply_event(history, event)
            pending = pending or event["type"] == "approval"
            yield history, gr.update(visible=pending), None
        yield history, gr.update(visible=assistant.pending_approval(thread) is not None), None

    def decide(action: str, history: list[Any], thread: str) -> Iterator[tuple[Any, ...]]:
        for event in assistant.stream_resume(thread, {"action": action}):
            history = apply_event(history, event)
            yield history, gr.update(visible=False)

    with gr.Blocks(title="DocGemma Connect") as demo:
        thread = gr.State(lambda: f"web-{uuid.uuid4().hex}")
        gr.Markdown("## DocGemma Connect\nClinical decision support. " + status)
        chatbot = gr.Chatbot(label="Conversation", height=560)
        with gr.Row(visible=False) as approval:
            approve = gr.Button("Approve", variant="primary")
            reject = gr.Button("Reject", variant="stop")
        box = gr.MultimodalTextbox(placeholder="Ask a clinical question, or attach an image (PNG, JPEG, DICOM)",
                                   file_types=[".png", ".jpg", ".jpeg", ".dcm"], file_count="single")
        gr.Examples(EXAMPLES, inputs=box)
        box.submit(respond, [box, chatbot, thread], [chatbot, approval, box], api_name="respond")
        for button, action in ((approve, "approve"), (reject, "reject")):
            button.click(partial(decide, action), [chatbot, thread], [chatbot, approval], api_name=action)
    demo.queue(default_concurrency_limit=1)
    return demo


def launch(settings: Settings) -> None:
    """Load the model and serve on ``GRADIO_SERVER_NAME``:``GRADIO_SERVER_PORT`` (127.0.0.1:7860)."""
    from docgemma.runtime import build_assistant

    assistant = build_assistant(settings)
    note = getattr(assistant.llm, "fallback_note", None)
    status = f"Model: **{assistant.llm.name}**." + (f" {note}" if note else "")
    demo = build_demo(assistant, status)
    demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
                server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))

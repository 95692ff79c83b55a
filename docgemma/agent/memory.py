"""Conversation memory across a change of patient: the switch is a marker in the conversation, and the
prompts only ever see the turns after the last one, so the previous patient's facts stay out of them."""

from __future__ import annotations

from collections.abc import Sequence

from docgemma.agent.state import PatientRef
from docgemma.llm.base import Message

SWITCH_PREFIX = "[active patient changed]"


def switch_marker(patient: PatientRef | None) -> Message:
    """The conversation entry that records a change of active patient."""
    who = f"{patient['name']} (ID {patient['id']})" if patient else "none"
    return Message(role="system", content=f"{SWITCH_PREFIX} now: {who}")


def since_last_switch(conversation: Sequence[Message]) -> list[Message]:
    """The user and assistant messages after the last patient switch."""
    out: list[Message] = []
    for message in conversation:
        if message["role"] == "system" and message["content"].startswith(SWITCH_PREFIX):
            out = []
        elif message["role"] != "system":
            out.append(message)
    return out


def switched(before: PatientRef | None, after: PatientRef | None) -> bool:
    """True when the active patient changed from one patient to another (or was cleared)."""
    return before is not None and (after is None or after["id"] != before["id"])

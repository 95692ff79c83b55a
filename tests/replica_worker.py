"""One app replica for the multi-process tests: ``python -m tests.replica_worker`` builds the assistant from
``DOCGEMMA_*`` (as ``app.py`` does) and answers JSON-line commands on stdin, one JSON line each on stdout.

    {"op": "turn", "thread": T, "message": M}            -> {"card_id": ...} or {"answer": ..., "writes": [...]}
    {"op": "pending", "thread": T}                       -> {"card_id": ... | null}
    {"op": "open", "thread": T}                          -> {"said": ..., "card_id": ... | null, "chat": [...]}
        (the conversation reopened: ``Assistant.settle``, what it said, the card still waiting, and what the
        reopened chat shows of it: the transcript's notes and write confirmations)
    {"op": "decide", "thread": T, "card_id": C, "action": "approve", "at": EPOCH}
                                                         -> {"answer": ..., "writes": [...]} (starts at ``at``)
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from docgemma.agent.events import TurnDone
from docgemma.config import Settings
from docgemma.runtime import build_assistant


def outcome(result: Any) -> dict[str, Any]:
    if isinstance(result, dict):
        return {"card_id": result["card_id"], "tool": result["tool"]}
    return {"answer": result.answer, "writes": result.writes}


def reopened(assistant: Any, thread: str) -> dict[str, Any]:
    said = "".join(e.result.answer for e in assistant.settle(thread) if isinstance(e, TurnDone))
    card = assistant.pending_approval(thread)
    chat = [text for entry in assistant.state(thread).get("transcript", [])
            for text in [entry.get("note") or "", *entry.get("writes", [])] if text]
    return {"said": said, "card_id": card["card_id"] if card else None, "chat": chat}


def main() -> None:
    assistant = build_assistant(Settings.from_env())
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        command = json.loads(line)
        thread = command["thread"]
        if command["op"] == "turn":
            reply = outcome(assistant.run_turn(thread, command["message"]))
        elif command["op"] == "pending":
            card = assistant.pending_approval(thread)
            reply = {"card_id": card["card_id"] if card else None}
        elif command["op"] == "open":
            reply = reopened(assistant, thread)
        else:
            time.sleep(max(0.0, float(command.get("at", 0)) - time.time()))  # both replicas start together
            reply = outcome(assistant.resume(thread, {"action": command["action"], "card_id": command["card_id"]}))
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

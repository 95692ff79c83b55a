"""Golden case runner (the contract in ARCHITECTURE.md).

``python -m docgemma golden FILE --backend oracle|<backend> [--out results.jsonl]`` runs every turn
through the real graph. In ``oracle`` mode the model nodes answer with the turn's expected labels
(:mod:`docgemma.eval.oracle`), so what is measured is the deterministic machinery; any failed expectation then exits non-zero.

Extensions of the contract (all optional): ``expected_tools`` (every tool of a multi-step turn, in
order; the oracle selects them one by one), ``mock_tool_results`` (a list consumed call by call, where
``mock_tool_result`` answers every call), ``approval`` (``approve`` | ``reject`` |
``{"edit": {...}}`` (the edited card is then approved) | ``{"override": "reason"}``, default approve),
``oracle_tools`` (the oracle's tool sequence, unchecked), ``expected_args_by_tool``,
``expected_tool_count``, ``expected_llm_calls``, ``expected_path_contains``, ``unexpected_router_action``,
``expected_answer_contains``.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from docgemma.agent.assistant import Assistant
from docgemma.agent.events import ApprovalRequest, TurnDone, TurnResult
from docgemma.agent.state import Attachment
from docgemma.eval.matching import args_match
from docgemma.eval.oracle import TurnContext, golden_assistant
from docgemma.llm.base import LLM
from docgemma.tools.registry import ToolRegistry

#: Held-out phrasing sets (``golden_tests/heldout_*.json``), written apart from the rules, measure them on wording
#: no rule was written from. Their failed expectations are reported but do not fail the run: gating on them would
#: make them a tuning target. ``bench/bench_rules.py`` reports them; the golden test checks every rule decision
#: on them is right and that no write is made that a message did not ask for.
HELDOUT_PREFIX = "heldout_"


def is_heldout(path: Path) -> bool:
    """True for a held-out phrasing set (see :data:`HELDOUT_PREFIX`)."""
    return path.name.startswith(HELDOUT_PREFIX)


def sample_image() -> Attachment:
    """The runner's sample image: an anonymised CT slice that ships inside pydicom (a real scan)."""
    import pydicom

    path = Path(pydicom.__file__).parent / "data" / "test_files" / "CT_small.dcm"
    return Attachment(filename="CT_small.dcm", data=path.read_bytes())


@dataclass
class Session:
    """One conversation of a case file."""

    session_id: str
    description: str
    turns: list[dict[str, Any]]


def load_cases(path: Path) -> list[Session]:
    """Sessions of a case file; each ``single_turn`` entry becomes a session of its own."""
    data = json.loads(path.read_text(encoding="utf-8"))
    sessions = [Session(s["session_id"], s.get("description", ""), s["user_inputs"]) for s in data.get("sessions", [])]
    for i, turn in enumerate(data.get("single_turn", [])):
        sessions.append(Session(f"single-{i + 1}", turn.get("description", ""), [turn]))
    if not sessions:
        raise ValueError(f"{path}: no 'sessions' or 'single_turn' cases")
    return sessions


def check_turn(turn: dict[str, Any], result: TurnResult, ctx: TurnContext, registry: ToolRegistry) -> dict[str, bool]:
    """Each expectation of the turn, checked; plus the answer invariants every turn must keep."""
    checks: dict[str, bool] = {}
    tools = [t["tool"] for t in result.tools]
    if "expected_intent" in turn:
        checks["intent"] = result.intent == turn["expected_intent"]
    if "expected_tool" in turn:
        checks["tool"] = (tools[0] if tools else None) == turn["expected_tool"]
    if turn.get("expected_tools"):
        checks["tools"] = [t for i, t in enumerate(tools) if i == 0 or t != tools[i - 1]] == turn["expected_tools"]
    if turn.get("expected_args"):
        call = next((t for t in result.tools if t["tool"] == turn.get("expected_tool")), None)
        checks["args"] = call is not None and args_match(turn["expected_args"], call["args"], ctx.last_search_id)
    for key, values in turn.get("expected_entities", {}).items():
        got = result.entities.get(key, [])
        checks[f"entities.{key}"] = {v.lower() for v in values} <= {str(g).lower() for g in got}
    if "expected_result_classification" in turn:
        classes = [e["decision"] for e in result.timeline if e["node"] == "result_classify"]
        checks["result_classification"] = turn["expected_result_classification"] in classes
    if "expected_router_action" in turn:
        checks["router_action"] = turn["expected_router_action"] in result.router_actions
    if "expected_clarification" in turn:
        checks["clarification"] = turn["expected_clarification"].lower() in (result.clarification or "").lower()
    for tool, args in turn.get("expected_args_by_tool", {}).items():
        call = next((t for t in result.tools if t["tool"] == tool), None)
        checks[f"args.{tool}"] = call is not None and args_match(args, call["args"], ctx.last_search_id)
    if "expected_tool_count" in turn:
        checks["tool_count"] = len(tools) == turn["expected_tool_count"]
    if "expected_llm_calls" in turn:
        checks["llm_calls"] = result.llm_calls == turn["expected_llm_calls"]
    for node in turn.get("expected_path_contains", []):
        checks[f"path.{node}"] = node in result.path
    if "unexpected_router_action" in turn:
        checks["router_action_absent"] = turn["unexpected_router_action"] not in result.router_actions
    if "expected_answer_contains" in turn:
        checks["answer_contains"] = turn["expected_answer_contains"].lower() in result.answer.lower()
    checks["answer_not_empty"] = bool(result.answer.strip())
    checks["no_internal_names"] = not any(name in result.answer for name in registry.names)
    return checks


def decision_for(choice: Any, cards: int) -> dict[str, Any]:
    """The decision on the ``cards``-th card of a turn: an edit is shown again as a new card (every check
    re-run), which the run then approves; ``{"override": reason}`` approves a severe conflict with a reason."""
    if isinstance(choice, dict) and "edit" in choice:
        return {"action": "edit", "args": choice["edit"]} if cards == 0 else {"action": "approve"}
    if isinstance(choice, dict) and "override" in choice:
        return {"action": "override", "reason": str(choice["override"])}
    return {"action": str(choice)}


def run_session(assistant: Assistant, session: Session, ctx: TurnContext, registry: ToolRegistry,
                file_id: str) -> Iterator[dict[str, Any]]:
    """Run a session's turns; yield one JSON-able record per turn."""
    thread = f"golden-{file_id}-{session.session_id}"
    for turn in session.turns:
        ctx.turn, ctx.tool_index, ctx.mock_index, ctx.current_tool = turn, 0, 0, None
        attachment = sample_image() if turn.get("has_image") else None
        events = assistant.stream_turn(thread, turn["user_input"], attachment)
        outcome: TurnResult | None = None
        cards = 0
        while outcome is None:
            waiting = None
            for event in events:  # the typed events every front end consumes
                if isinstance(event, TurnDone):
                    outcome = event.result
                elif isinstance(event, ApprovalRequest):
                    waiting = event.request
            if outcome is not None:
                break
            if waiting is None:
                raise RuntimeError(f"{session.session_id}: the turn ended without a result")
            if cards >= 5:  # a write waits for approval, card after card
                raise RuntimeError(f"{session.session_id}: approval cards keep coming back ({cards})")
            events = assistant.stream_resume(thread, decision_for(turn.get("approval", "approve"), cards))
            cards += 1
        first = outcome.tools[0] if outcome.tools else None
        checks = check_turn(turn, outcome, ctx, registry)
        by_rule = {
            node: any(e["node"] == node and "decided by rule" in e["detail"] for e in outcome.timeline)
            for node in ("intent_classify", "tool_select")
        }
        yield {
            "session_id": session.session_id, "user_input": turn["user_input"], "intent": outcome.intent,
            "tool": first["tool"] if first else None, "args": first["args"] if first else None,
            "tools": [t["tool"] for t in outcome.tools], "entities": outcome.entities, "path": outcome.path,
            "router_actions": outcome.router_actions, "clarification": outcome.clarification,
            "llm_calls": outcome.llm_calls, "prompt_tokens": outcome.prompt_tokens,
            "cached_tokens": outcome.cached_tokens, "decoded_tokens": outcome.decoded_tokens,
            "model_ms": round(outcome.model_ms, 2),
            "calls_by_node": [
                {k: e.get(k, 0) for k in ("node", "llm_calls", "prompt_tokens", "cached_tokens", "decoded_tokens",
                                          "model_ms")}
                for e in outcome.timeline if e["llm_calls"]
            ],
            "latency_ms": round(outcome.latency_ms, 2), "answer": outcome.answer, "checks": checks,
            "decided_by_rule": by_rule,
        }


#: Checks whose value the oracle itself supplies unless code decided first: in oracle mode they are the
#: oracle compared with itself, so they are reported apart from accuracy.
ECHO_CHECKS = {"intent": "intent_classify", "tool": "tool_select", "tools": "tool_select"}


def route_of(record: dict[str, Any]) -> str:
    """direct, single tool or multi-tool: the budget class of a turn (budgets of 2, 4, 4+N calls)."""
    calls = len(record["tools"])
    return "direct" if calls == 0 else "single tool" if calls == 1 else "multi-tool"


def run_file(path: Path, llm: LLM | None, out: TextIO | None = None, report: TextIO = sys.stdout) -> int:
    """Run a case file; ``llm=None`` means oracle mode. Returns the process exit code."""
    oracle = llm is None
    assistant, ctx, registry = golden_assistant(llm)
    model = assistant.llm
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    calls: dict[str, list[int]] = defaultdict(list)
    failed: list[str] = []
    for session in load_cases(path):
        for record in run_session(assistant, session, ctx, registry, path.stem):
            if out is not None:
                out.write(json.dumps(record, default=str) + "\n")
            calls[route_of(record)].append(record["llm_calls"])
            for key, ok in record["checks"].items():
                node = ECHO_CHECKS.get(key)
                if oracle and node and not record["decided_by_rule"][node]:
                    key = f"{key} (oracle echo)"
                totals[key][0] += int(ok)
                totals[key][1] += 1
                if not ok:
                    failed.append(f"{session.session_id}: {record['user_input']!r} — {key}")
    report.write(f"{path.name} ({'oracle' if oracle else model.name})\n")
    report.write(f"{'field':<32}{'correct':>10}{'total':>8}{'accuracy':>10}\n")
    for key in sorted(totals):
        ok, n = totals[key]
        report.write(f"{key:<32}{ok:>10}{n:>8}{ok / n:>10.0%}\n")
    report.write("model calls per turn: " + "; ".join(
        f"{route} {sum(v) / len(v):.1f} (max {max(v)}, {len(v)} turns)" for route, v in sorted(calls.items())
    ) + "\n")
    if oracle:
        report.write("(oracle echo: the oracle answered that field itself; it checks the wiring, not accuracy)\n")
    for line in failed:
        report.write(f"FAIL {line}\n")
    if oracle and failed and is_heldout(path):
        report.write("(a held-out phrasing set: its failures are measured by bench/bench_rules.py, not gated)\n")
        return 0
    return 1 if (oracle and failed) else 0

"""Every button leads somewhere (issue 46, item 4): each button the golden and held-out runs offer on the embedded
default (the demo model, not fit to judge medical requests: an unsure turn offers its candidate actions as buttons;
a sure one its follow-ups), pressed, is understood — decided surely, never the "not recognised" reply — and runs
the tool its words name, for the patient its words name.

A button is pressed as the page presses it: its words are the next message of the same conversation (a copy of the
thread at that point, so the run goes on unchanged). The tools answer from mocks: what is checked is what is run."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.events import ApprovalRequest, TurnDone, TurnResult
from docgemma.eval.golden import decision_for, load_cases, sample_image
from docgemma.eval.oracle import TurnContext, golden_assistant

FILES = sorted((Path(__file__).parents[2] / "golden_tests").glob("*.json"))
NOT_RECOGNISED = "not recognised"
OK: dict[str, Any] = {"status": "success", "data": {"result": "synthetic"}}

#: The tool a button's words name, by how they begin (every phrasing ``agent/ask.py`` and the tools' follow-ups use).
NAMED_TOOL = [
    (r"Find patient ", "search_patient"),
    (r"What are the FDA (?:safety|boxed) warnings for ", "check_drug_safety"),
    (r"Check interactions between |Does .+ interact with .+ current medications\?", "check_drug_interactions"),
    (r"Find recent studies on ", "search_medical_literature"),
    (r"Find recruiting clinical trials for |Are there recruiting clinical trials on this topic\?",
     "find_clinical_trials"),
    (r"Show the chart of ", "get_patient_chart"),
    (r"When was .+ last seen\?", "get_patient_timeline"),
    (r"Show .+'s? ", "query_patient_data"),
    (r"What is .+ treating\?|What is linked to |Which of .+ medications is for which condition",
     "explore_connections"),
    (r"Prescribe ", "prescribe_medication"),
    (r"Record an allergy to |Record NKDA for ", "add_allergy"),
    (r"Remove the .+ allergy label for ", "remove_allergy_label"),
    (r"Note for ", "save_clinical_note"),
    (r"Analyse the attached image", "analyze_medical_image"),
]


def named_tool(button: str) -> str | None:
    return next((tool for pattern, tool in NAMED_TOOL if re.match(pattern, button)), None)


@dataclass(frozen=True)
class Offered:
    """A button one turn offered, and where to press it."""

    where: str
    message: str
    button: str
    thread: str
    active: str | None


def _fork(assistant: Assistant, source: str, target: str) -> None:
    """A copy of ``source``'s latest checkpoint as ``target``'s: the conversation as it stood when offered."""
    saver: Any = assistant.graph.checkpointer
    latest = saver.get_tuple({"configurable": {"thread_id": source}})
    assert latest is not None
    saver.put({"configurable": {"thread_id": target, "checkpoint_ns": ""}}, latest.checkpoint, latest.metadata,
              latest.checkpoint["channel_versions"])


def _finish(assistant: Assistant, thread: str, events: Iterator[Any], approval: Any) -> TurnResult | None:
    for shown in range(6):
        waiting = False
        for event in events:
            if isinstance(event, ApprovalRequest):
                waiting = True
            elif isinstance(event, TurnDone):
                return event.result
        if not waiting:
            return None
        events = assistant.stream_resume(thread, decision_for(approval, shown))
    return None


@cache
def _runs() -> tuple[Assistant, TurnContext, list[Offered]]:
    """Every golden and held-out turn on the demo model (tools from the turn's mocks), with the buttons offered."""
    assistant, ctx, _registry = golden_assistant(demo_llm())
    offered: list[Offered] = []
    for path in FILES:
        for session in load_cases(path):
            thread = f"b-{path.stem}-{session.session_id}"
            for i, turn in enumerate(session.turns):
                ctx.turn, ctx.tool_index, ctx.mock_index, ctx.current_tool = turn, 0, 0, None
                attachment = sample_image() if turn.get("has_image") else None
                result = _finish(assistant, thread, assistant.stream_turn(thread, turn["user_input"], attachment),
                                 turn.get("approval", "approve"))
                if result is None or not result.follow_ups:
                    continue
                active = result.active_patient["name"] if result.active_patient else None
                # The thread as it stood, kept: each button is pressed on a copy of it.
                snapshot = f"{thread}@{i}"
                _fork(assistant, thread, snapshot)
                offered += [Offered(f"{path.stem}/{session.session_id}#{i}", turn["user_input"], b, snapshot, active)
                            for b in result.follow_ups]
    return assistant, ctx, offered


def press(offered: Offered, n: int) -> tuple[TurnResult | None, list[tuple[str, dict[str, Any]]]]:
    """The button pressed on a copy of its conversation: (the turn's result, the tools run with their arguments)."""
    assistant, ctx, _offered = _runs()
    thread = f"{offered.thread}/press-{n}"
    _fork(assistant, offered.thread, thread)
    tool = named_tool(offered.button)
    searched = re.search(r"(?:Find patient |patient )([A-Z][\w'-]+(?: [A-Z][\w'-]+)*)", offered.button)
    name = searched.group(1) if searched else "Grace Okonkwo"
    found = {"status": "success", "data": {"query": name, "matches": [
        {"id": "pressed-1", "name": name, "birth_date": "1950-01-01", "gender": "female"}]}}
    mocks = [found if tool == "search_patient" or (tool and not offered.button.startswith(("Check", "What are the FDA",
                                                                                            "Find recent",
                                                                                            "Find recruiting")))
             else OK] + [OK] * 4
    ctx.turn = {"user_input": offered.button, "mock_tool_results": mocks}
    ctx.tool_index, ctx.mock_index, ctx.current_tool = 0, 0, None
    ran: list[tuple[str, dict[str, Any]]] = []
    events = assistant.stream_turn(thread, offered.button)
    card = None
    for event in events:
        if isinstance(event, ApprovalRequest):
            card = event.request
            break
        if isinstance(event, TurnDone):
            ran = [(t["tool"], dict(t["args"])) for t in event.result.tools]
            return event.result, ran
    assert card is not None
    return None, [(str(card["tool"]), dict(card["args"]))]


def _searched_for(args: dict[str, Any], button: str) -> bool:
    """True when the search's name is one the button's words name."""
    name = str(args.get("name") or args.get("query") or "").lower()
    return bool(name) and name in button.lower()


def test_the_runs_offer_buttons_to_press() -> None:
    """Not vacuous: the runs offer buttons of many kinds."""
    offered = _runs()[2]
    kinds = {named_tool(o.button) for o in offered}
    assert len(offered) >= 20 and len(kinds) >= 5, (len(offered), kinds)


def test_every_button_names_a_tool() -> None:
    unnamed = sorted({o.button for o in _runs()[2] if named_tool(o.button) is None})
    assert not unnamed, unnamed


def test_every_button_pressed_is_understood_and_does_what_it_says() -> None:
    wrong: list[tuple[str, str, str]] = []
    offered = _runs()[2]
    pressed: set[tuple[str, str | None]] = set()
    for n, button in enumerate(offered):
        if (button.button, button.active) in pressed:  # the same words for the same patient: pressed once
            continue
        pressed.add((button.button, button.active))
        result, ran = press(button, n)
        tool = named_tool(button.button)
        if result is not None and NOT_RECOGNISED in result.answer:
            wrong.append((button.where, button.button, "not recognised"))
            continue
        if not ran:
            wrong.append((button.where, button.button, "no tool ran"))
            continue
        first, args = ran[0]
        if first == "search_patient" and tool != "search_patient":
            # A record button naming a patient by name finds them first; the record tool follows on the one found.
            then = [name for name, _args in ran[1:]]
            if not _searched_for(args, button.button) or (then and then[0] != tool):
                wrong.append((button.where, button.button, f"searched {args}, then {then}"))
        elif first != tool:
            wrong.append((button.where, button.button, f"ran {first}"))
        elif tool == "search_patient" and not _searched_for(args, button.button):
            wrong.append((button.where, button.button, f"searched {args}"))
    assert not wrong, "\n".join(map(str, wrong))


@pytest.mark.parametrize("button", ["What are the FDA safety warnings for warfarin?"])
def test_named_tool_reads_the_phrasings(button: str) -> None:
    assert named_tool(button) == "check_drug_safety"

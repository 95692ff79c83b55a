"""The clinician's register over every golden and held-out turn (issue 46): each turn's timeline and answer, as the
page renders them, carry none of the engineer's words outside the closed technical details, which still hold them
(oracle mode: the turns' own labels, the tools' mocks; every card decided as the file says)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from docgemma.agent.events import ApprovalRequest, TurnDone, TurnResult
from docgemma.eval.golden import decision_for, load_cases, sample_image
from docgemma.eval.oracle import golden_assistant
from docgemma.ui.messages import final_markdown, timeline_markdown
from docgemma.ui.timeline import clinician_view
from docgemma.workspace import tool_views
from tests.unit.test_page_text import ENGINEERING

FILES = sorted((Path(__file__).parents[2] / "golden_tests").glob("*.json"))
CHECKED = ENGINEERING


def results(path: Path) -> Iterator[tuple[str, TurnResult]]:
    assistant, ctx, _registry = golden_assistant(None)
    for session in load_cases(path):
        thread = f"view-{path.stem}-{session.session_id}"
        for turn in session.turns:
            ctx.turn, ctx.tool_index, ctx.mock_index, ctx.current_tool = turn, 0, 0, None
            attachment = sample_image() if turn.get("has_image") else None
            events = assistant.stream_turn(thread, turn["user_input"], attachment)
            for shown in range(6):
                waiting, done = None, None
                for event in events:
                    if isinstance(event, ApprovalRequest):
                        waiting = event.request
                    elif isinstance(event, TurnDone):
                        done = event.result
                if done is not None or waiting is None:
                    if done is not None:
                        yield turn["user_input"], done
                    break
                events = assistant.stream_resume(thread, decision_for(turn.get("approval", "approve"), shown))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_no_engineering_word_in_the_clinicians_view_of_any_golden_turn(path: Path) -> None:
    tools = tool_views(golden_assistant(None)[2])
    found, technical = [], ""
    for message, result in results(path):
        timeline = timeline_markdown(result, tools=tools)
        technical += timeline
        shown = clinician_view(timeline) + "\n" + final_markdown(result, tools=tools)
        found += [(message, what, m.group(0)) for what, pattern in CHECKED.items()
                  for m in re.finditer(pattern, shown)]
    assert not found, found[:20]
    assert re.search(ENGINEERING["rule's words"], technical) and re.search(ENGINEERING["model calls"], technical)

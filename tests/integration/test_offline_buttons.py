"""Nothing offers a tool that is offline (issue 46, item 4): where the knowledge services cannot be reached (no
internet connection), no button, follow-up, example or sentence offers an FDA, interaction, literature or trial
look-up — on every golden and held-out turn on the demo model, in the replies to other languages and to a greeting —
and the installation stays offline after the minute it does not retry, until a look-up answers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent import other_language
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.events import ApprovalRequest, TurnDone, TurnResult
from docgemma.eval.golden import decision_for, load_cases, sample_image
from docgemma.eval.oracle import golden_assistant
from docgemma.tools import http

FILES = sorted((Path(__file__).parents[2] / "golden_tests").glob("*.json"))
#: The words of a button or sentence that offers a knowledge look-up.
LOOK_UP = re.compile(r"\bFDA\b|interact|\bstud(?:y|ies)\b|\btrials?\b|literature|PubMed", re.IGNORECASE)
#: The sentence that says the look-ups are not available here (it names them to say so).
NOT_AVAILABLE = re.compile(r"[^.]*cannot be reached from this machine[^.]*\.|\([^)]*(?:sans connexion|sem ligação|"
                           r"sin conexión|bila mtandao)[^)]*\)")


@pytest.fixture
def offline() -> Iterator[None]:
    http.note_unreachable("api.fda.gov")
    yield
    http.forget_offline()


def _results() -> Iterator[tuple[str, TurnResult]]:
    assistant, ctx, _registry = golden_assistant(demo_llm())
    for path in FILES:
        for session in load_cases(path):
            thread = f"off-{path.stem}-{session.session_id}"
            for turn in session.turns:
                ctx.turn, ctx.tool_index, ctx.mock_index, ctx.current_tool = turn, 0, 0, None
                events: Any = assistant.stream_turn(thread, turn["user_input"],
                                                    sample_image() if turn.get("has_image") else None)
                for shown in range(6):
                    waiting = False
                    for event in events:
                        if isinstance(event, ApprovalRequest):
                            waiting = True
                        elif isinstance(event, TurnDone):
                            yield turn["user_input"], event.result
                    if not waiting:
                        break
                    events = assistant.stream_resume(thread, decision_for(turn.get("approval", "approve"), shown))


@pytest.mark.usefixtures("offline")
def test_no_turn_offers_a_look_up_while_offline() -> None:
    offered = [(message, b) for message, result in _results() for b in result.follow_ups if LOOK_UP.search(b)]
    assert not offered, offered


@pytest.mark.usefixtures("offline")
@pytest.mark.parametrize("message", ["hello", "Bonjour, quels sont les médicaments de ma patiente ?",
                                     "Habari, mgonjwa wangu anatumia dawa gani?", "hmm, what about tramadol",
                                     "Check ICD I10 coding guidance"])
def test_the_replies_offer_no_look_up_while_offline(message: str) -> None:
    assistant, _ctx, _registry = golden_assistant(demo_llm())
    result = assistant.run_turn("off", message)
    assert isinstance(result, TurnResult)
    assert not [b for b in result.follow_ups if LOOK_UP.search(b)], result.follow_ups
    said = NOT_AVAILABLE.sub("", result.answer)
    assert not LOOK_UP.search(said), result.answer
    # Only a true line: "the closest actions are below" when there are some.
    assert ("actions are below" in result.answer) == bool(result.follow_ups), (result.answer, result.follow_ups)


@pytest.mark.parametrize("language", ["fr", "pt", "es", "sw"])
def test_another_language_is_told_only_the_record_offline(language: str) -> None:
    reply = other_language.reply(language, offline=True)
    assert not LOOK_UP.search(NOT_AVAILABLE.sub("", reply)), reply
    assert "Find recruiting trials" in other_language.reply(language)  # online, the look-ups are offered


@pytest.mark.usefixtures("offline")
def test_offline_lasts_past_the_minute_without_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clinic's connection does not come back by itself after the minute: offline until a host answers."""
    later = http.time.monotonic() + 10 * http.OFFLINE_MEMORY_S
    monkeypatch.setattr(http.time, "monotonic", lambda: later)
    assert http.known_offline()
    http.forget_offline()
    assert not http.known_offline()

"""Typed events between the agent and its front ends."""

from __future__ import annotations

import typing
from typing import Any, get_args, get_type_hints

from docgemma.agent import events
from docgemma.agent.assistant import Assistant
from docgemma.agent.events import AgentEvent, NodeEnd, NodeStart, Token, TurnDone
from docgemma.llm.fake import FakeLLM
from tests.conftest import Tools


def test_no_any_at_the_boundary() -> None:
    for cls in get_args(AgentEvent):
        for name, hint in get_type_hints(cls, vars(events)).items():
            assert hint is not Any, f"{cls.__name__}.{name}"
    hints = get_type_hints(Assistant.stream_turn)
    assert hints["return"] == typing.Iterator[AgentEvent] or get_args(hints["return"]) == (AgentEvent,)


def test_a_turn_streams_only_typed_events(fake: FakeLLM, tools: Tools) -> None:
    fake.enqueue("A stroke is an interruption of blood flow to the brain.")
    stream = list(Assistant(fake, tools.registry()).stream_turn("t", "What is a stroke?"))
    assert all(isinstance(e, get_args(AgentEvent)) for e in stream)
    assert isinstance(stream[0], NodeStart) and isinstance(stream[-1], TurnDone)
    ends = [e.event["node"] for e in stream if isinstance(e, NodeEnd)]
    assert ends == stream[-1].result.path and any(isinstance(e, Token) for e in stream)

"""Timeline bookkeeping shared by every node: duration, LLM calls and prompt tokens per node run.

A node opens a :class:`NodeTrace`, makes its model calls through ``trace.llm`` (which counts them) and
ends with ``trace.event(decision, detail)``: the event goes to the live stream (``custom`` mode, for the
UI) and into the returned state (for the turn result).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from docgemma.agent.answer import strip_template_debris
from docgemma.agent.events import NodeEnd, NodeStart
from docgemma.agent.state import TimelineEvent
from docgemma.llm.base import LLM, Messages, SchemaT, Usage, last_usage

if TYPE_CHECKING:
    from PIL.Image import Image

NODE_LABELS: dict[str, str] = {
    "input_assembly": "Reading the request",
    "intent_classify": "Understanding the question",
    "tool_select": "Choosing a resource",
    "tool_execute": "Consulting a resource",
    "result_classify": "Checking the result",
    "router": "Deciding the next step",
    "error_handler": "Handling a problem",
    "synthesize": "Writing the answer",
}


def stream_writer() -> Callable[[Any], None]:
    """LangGraph's custom-stream writer, or a no-op outside a graph run (nodes called directly in tests)."""
    try:
        from langgraph.config import get_stream_writer

        return get_stream_writer()
    except (RuntimeError, KeyError):
        return lambda _event: None


class MeteredLLM:
    """Wraps an LLM and adds up what its calls cost: calls, prompt/cached/decoded tokens and model time.

    A backend that reports :class:`Usage` (``last_usage``) is read after each call, so the prompt is not
    tokenized a second time just to be counted; any other backend is counted with ``count_tokens`` and the
    wall time of the call (decoded tokens then unknown: 0).
    """

    def __init__(self, llm: LLM) -> None:
        self.inner = llm
        self.name = llm.name
        self.supports_images = llm.supports_images
        self.usages: list[Usage] = []

    @property
    def calls(self) -> int:
        """Model calls made so far."""
        return len(self.usages)

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens of every call."""
        return sum(u.prompt_tokens for u in self.usages)

    @property
    def cached_tokens(self) -> int:
        """Prompt tokens served from a prefix cache."""
        return sum(u.cached_tokens for u in self.usages)

    @property
    def decoded_tokens(self) -> int:
        """Tokens generated."""
        return sum(u.decoded_tokens for u in self.usages)

    @property
    def model_ms(self) -> float:
        """Wall time spent inside the model calls."""
        return sum(u.seconds for u in self.usages) * 1000

    def _record(self, messages: Messages, start: float, before: Usage | None) -> None:
        usage = last_usage(self.inner)
        # The same object as before the call means the backend did not report this call (it raised first):
        # measure it here rather than count the previous call twice.
        if usage is None or usage is before:
            usage = Usage(self.inner.count_tokens(messages), seconds=time.perf_counter() - start)
        self.usages.append(usage)

    def generate_json(
        self,
        messages: Messages,
        schema: type[SchemaT],
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> SchemaT:
        """Delegate, then record the call (also when its output does not validate: it was paid for)."""
        before, start = last_usage(self.inner), time.perf_counter()
        try:
            return self.inner.generate_json(
                messages, schema, temperature=temperature, max_tokens=max_tokens, images=images
            )
        finally:
            self._record(messages, start, before)

    def generate_text(
        self,
        messages: Messages,
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> Iterator[str]:
        """Delegate; the call is recorded when the stream ends (or is abandoned)."""
        before, start = last_usage(self.inner), time.perf_counter()
        try:
            yield from self.inner.generate_text(
                messages, temperature=temperature, max_tokens=max_tokens, images=images
            )
        finally:
            self._record(messages, start, before)

    def count_tokens(self, messages: Messages) -> int:
        """Delegate."""
        return self.inner.count_tokens(messages)


class NodeTrace:
    """One node run: announces its start on the stream and builds its timeline event at the end."""

    def __init__(self, node: str, llm: LLM | None = None, label: str | None = None) -> None:
        self.node = node
        self.label = label or NODE_LABELS[node]
        self.llm = MeteredLLM(llm) if llm is not None else None
        self.write = stream_writer()
        self.start = time.perf_counter()
        self.write(NodeStart(node, self.label))

    def event(self, decision: str, detail: str = "") -> TimelineEvent:
        """Finish the run: emit and return its timeline event."""
        # Model text (a task summary, a result summary) may echo the prompt template: cleaned once, here,
        # so every consumer (web UI, CLI, golden records) gets the same timeline.
        event = TimelineEvent(
            node=self.node,
            label=self.label,
            decision=strip_template_debris(decision).strip(),
            detail=strip_template_debris(detail).strip(),
            duration_ms=round((time.perf_counter() - self.start) * 1000, 2),
            llm_calls=self.llm.calls if self.llm else 0,
            prompt_tokens=self.llm.prompt_tokens if self.llm else 0,
            cached_tokens=self.llm.cached_tokens if self.llm else 0,
            decoded_tokens=self.llm.decoded_tokens if self.llm else 0,
            model_ms=round(self.llm.model_ms, 2) if self.llm else 0.0,
        )
        self.write(NodeEnd(event))
        return event

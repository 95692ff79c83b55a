"""A scripted model for tests: queued replies, and a record of every prompt it was sent.

``FakeLLM`` answers from a queue (or a ``responder`` callable). Each reply is a pydantic instance or a
dict for ``generate_json``, a string for ``generate_text`` (or raw JSON for ``generate_json``, to test
unusable output), or an exception to raise. ``docgemma.eval.oracle`` builds its oracle on the responder.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError

from docgemma.llm.base import LLMError, LLMOutputError, Messages, SchemaT, parse_json

if TYPE_CHECKING:
    from PIL.Image import Image

Reply = BaseModel | dict[str, Any] | str | BaseException


@dataclass
class Call:
    """One request the fake received."""

    kind: Literal["json", "text"]
    messages: list[dict[str, str]]
    schema: type[BaseModel] | None
    temperature: float
    max_tokens: int
    images: int

    @property
    def prompt(self) -> str:
        """All message contents joined, for substring assertions."""
        return "\n".join(m["content"] for m in self.messages)


@dataclass
class FakeLLM:
    """Scripted LLM. ``replies`` are consumed in order; ``responder`` answers when the queue is empty."""

    replies: Iterable[Reply] = ()
    responder: Callable[[Call], Reply] | None = None
    name: str = "fake"
    supports_images: bool = True
    #: Tests of the "demo model" behaviour set False, as :func:`docgemma.agent.demo_llm.demo_llm` does.
    clinically_meaningful: bool = True
    chunk_words: int = 3
    calls: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue: deque[Reply] = deque(self.replies)

    def enqueue(self, *replies: Reply) -> None:
        """Append replies to the script."""
        self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Replies not consumed yet."""
        return len(self._queue)

    def _next(self, call: Call) -> Reply:
        self.calls.append(call)
        if self._queue:
            reply = self._queue.popleft()
        elif self.responder is not None:
            reply = self.responder(call)
        else:
            what = call.schema.__name__ if call.schema else "text"
            raise LLMError(f"FakeLLM script exhausted: no reply queued for a {what} request")
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def generate_json(
        self,
        messages: Messages,
        schema: type[SchemaT],
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> SchemaT:
        """Return the next scripted reply as an instance of ``schema``."""
        reply = self._next(Call("json", _copy(messages), schema, temperature, max_tokens, len(images)))
        if isinstance(reply, str):
            return parse_json(schema, reply)
        if isinstance(reply, BaseModel):
            if not isinstance(reply, schema):
                raise LLMError(
                    f"FakeLLM script out of order: {schema.__name__} requested, "
                    f"{type(reply).__name__} queued"
                )
            return reply
        try:
            return schema.model_validate(reply)
        except ValidationError as exc:  # what a real backend reports for unusable output
            raise LLMOutputError(f"scripted reply does not validate against {schema.__name__}", str(reply)) from exc

    def generate_text(
        self,
        messages: Messages,
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> Iterator[str]:
        """Stream the next scripted reply in chunks of ``chunk_words`` words."""
        reply = self._next(Call("text", _copy(messages), None, temperature, max_tokens, len(images)))
        if not isinstance(reply, str):
            raise LLMError(f"FakeLLM script out of order: text requested, {type(reply).__name__} queued")
        words = reply.split(" ")
        for i in range(0, len(words), self.chunk_words):
            chunk = " ".join(words[i : i + self.chunk_words])
            yield chunk if i + self.chunk_words >= len(words) else chunk + " "

    def count_tokens(self, messages: Messages) -> int:
        """Whitespace-separated words: deterministic, close enough for bookkeeping in tests."""
        return sum(len(m["content"].split()) for m in messages)


def _copy(messages: Messages) -> list[dict[str, str]]:
    return [{"role": m["role"], "content": m["content"]} for m in messages]

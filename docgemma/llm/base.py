"""The LLM protocol every model backend implements (a contract: see ARCHITECTURE.md)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypedDict, TypeVar, runtime_checkable

from pydantic import BaseModel

if TYPE_CHECKING:
    from PIL.Image import Image


@dataclass(frozen=True)
class NodeConfig:
    """Generation settings of one LLM call site (the agent's table is ``agent.node_settings.NODE_CONFIG``)."""

    temperature: float
    max_tokens: int


@dataclass(frozen=True)
class Usage:
    """What one model call cost, as the backend measured it (the figures the per-turn budgets are about).

    ``prompt_tokens`` counts the whole prompt with the model's own tokenizer (or the server's ``usage``);
    ``cached_tokens`` is the part served from a prefix cache (KV reuse, vLLM's automatic prefix caching,
    llama.cpp's prompt cache) and so not prefilled again; ``decoded_tokens`` the tokens generated.
    """

    prompt_tokens: int
    cached_tokens: int = 0
    decoded_tokens: int = 0
    seconds: float = 0.0

    @property
    def uncached_tokens(self) -> int:
        """Prompt tokens the model had to prefill for this call."""
        return self.prompt_tokens - self.cached_tokens


class Message(TypedDict):
    """One chat message. Images travel separately (``images=``) and attach to the last user message."""

    role: Literal["system", "user", "assistant"]
    content: str


Messages = Sequence[Message]
SchemaT = TypeVar("SchemaT", bound=BaseModel)


class LLMError(RuntimeError):
    """The backend could not produce an answer (load failure, server error, unusable output)."""


class LLMOutputError(LLMError):
    """The model answered, but the answer does not validate against the requested schema."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(message)
        self.raw = raw


class MissingDependencyError(LLMError):
    """A backend needs a package that is not installed; the message says what to install."""


#: What the clinician is told, in the chat and the timeline, when the model backend cannot answer.
BACKEND_DOWN_SENTENCE = ("The model is not answering right now, so this message was not processed and nothing "
                         "was written; your conversation is kept, please try again in a minute.")


class BackendUnavailable(Exception):
    """The backend cannot answer at all right now: a served model down, too slow, or answering in the wrong
    framing; a ZeroGPU quota, queue or worker error. ``reason`` is for the logs and ``/readyz``; the clinician
    reads :data:`BACKEND_DOWN_SENTENCE`.

    Deliberately not an :class:`LLMError`: the nodes fall back on code when a model's *answer* is unusable, but
    with no model there is nothing to fall back to, so this ends the turn (``Assistant``) instead of sending
    every later node to wait on the same dead backend.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@runtime_checkable
class LLM(Protocol):
    """A model the agent can call. ``generate_json`` is always constrained decoding."""

    @property
    def name(self) -> str:
        """Human-readable model name (shown in status lines)."""
        ...

    @property
    def supports_images(self) -> bool:
        """True when ``images=`` can be passed."""
        ...

    def generate_json(
        self,
        messages: Messages,
        schema: type[SchemaT],
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> SchemaT:
        """Return an instance of ``schema`` produced under a JSON-schema constraint.

        Raises :class:`LLMOutputError` when the output does not validate (e.g. cut at ``max_tokens``).
        """
        ...

    def generate_text(
        self,
        messages: Messages,
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> Iterator[str]:
        """Stream free text as chunks."""
        ...

    def count_tokens(self, messages: Messages) -> int:
        """Prompt tokens these messages cost (exact where the backend has the tokenizer)."""
        ...


def clinically_meaningful(llm: object) -> bool:
    """Whether ``llm`` may write medical prose: False for the embedded demo model and the rule-based demo.

    An optional attribute beside the protocol (backends without it count as meaningful), so test doubles
    and third-party backends keep working unchanged.
    """
    return bool(getattr(llm, "clinically_meaningful", True))


class PerThreadUsage:
    """A backend's ``last_usage`` attribute, kept per calling thread (declare it unannotated on the class).

    One model serves concurrent turns (two clinicians' sessions); a caller reads ``last_usage`` right after
    its call returns, and by then another thread's call may have finished: a plain attribute would hand it
    that call's figures. Each thread reads the usage of its own most recent call.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self._key = f"_{name}_per_thread"

    def _local(self, obj: object) -> threading.local:
        # dict.setdefault is atomic: two threads' first calls get the same store.
        store: threading.local = vars(obj).setdefault(self._key, threading.local())
        return store

    def __get__(self, obj: object | None, objtype: type | None = None) -> Usage | None:
        if obj is None:
            return None
        usage: Usage | None = getattr(self._local(obj), "usage", None)
        return usage

    def __set__(self, obj: object, value: Usage | None) -> None:
        self._local(obj).usage = value


def last_usage(llm: object) -> Usage | None:
    """The :class:`Usage` of ``llm``'s most recent finished call, when the backend reports one.

    An optional attribute beside the protocol (``last_usage``), set by a backend when a call ends (for a
    stream: when it is exhausted). Backends without it are metered by ``count_tokens`` instead.
    """
    usage = getattr(llm, "last_usage", None)
    return usage if isinstance(usage, Usage) else None


def parse_json(schema: type[SchemaT], raw: str) -> SchemaT:
    """Validate ``raw`` against ``schema``; raise :class:`LLMOutputError` (keeping ``raw``) if it fails."""
    from pydantic import ValidationError

    try:
        return schema.model_validate_json(raw)
    except ValidationError as exc:
        raise LLMOutputError(
            f"model output does not validate against {schema.__name__}: {exc.error_count()} error(s)", raw
        ) from exc


def merge_system_into_user(messages: Messages) -> list[Message]:
    """Fold system messages into the first user message, for chat templates without a system role."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [Message(role=m["role"], content=m["content"]) for m in messages if m["role"] != "system"]
    if not system:
        return rest
    if rest and rest[0]["role"] == "user":
        rest[0] = Message(role="user", content=f"{system}\n\n{rest[0]['content']}")
    else:
        rest.insert(0, Message(role="user", content=system))
    return rest

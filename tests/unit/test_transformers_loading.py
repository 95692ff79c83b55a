"""What ``load_transformers_llm`` asks transformers for on each GPU platform, without a GPU: torch's CUDA
queries and the transformers loaders are faked, and the tests assert what ``from_pretrained`` receives.

Pinned table (compute capability → model dtype = 4-bit compute dtype; always ``device_map={"": 0}``):
A100 8.0 / A10G 8.6 / L4 8.9 / H100 9.0 → bfloat16; V100 7.0 / T4 7.5 → float32; never float16. A GPU the
installed torch has no kernels for (Kaggle's P100, sm_60) is refused before anything loads.
CPU → float32, no quantization, no device map.
"""

from __future__ import annotations

import importlib
import os
import pickle
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import torch

from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.schemas import RetryStrategy, intent_schema, tool_selection_schema
from docgemma.config import MEDGEMMA_MODEL_ID
from docgemma.llm import transformers_backend as backend
from docgemma.llm.base import BackendUnavailable, LLMError, Message, MissingDependencyError, clinically_meaningful
from docgemma.llm.fake import FakeLLM
from docgemma.llm.openai_backend import OpenAICompatLLM
from docgemma.llm.transformers_backend import (
    QUANTIZATION_SKIP,
    ModelAccessError,
    TransformersLLM,
    UnsupportedGPUError,
    kaggle_model_dir,
    load_transformers_llm,
)

pytestmark = pytest.mark.floors


class FakeModel:
    """What the fake loaders return: records ``.to`` and answers ``generate`` with fixed ids."""

    device = torch.device("cpu")
    dtype = torch.float32

    def __init__(self) -> None:
        self.generated = 0

    def eval(self) -> FakeModel:
        return self

    def to(self, device: Any) -> FakeModel:
        return self

    def generate(self, input_ids: Any, attention_mask: Any = None, streamer: Any = None, **kwargs: Any) -> Any:
        self.generated += 1
        new = torch.tensor([[7, 8]])
        if streamer is not None:
            streamer.put(input_ids)
            streamer.put(new[0])
            streamer.end()
        return torch.cat([input_ids, new], dim=1)


class FakeTokenizer:
    """Enough of a tokenizer for the backend: a template that joins contents, ids as characters."""

    bos_token_id, eos_token_id = 1, 2

    def apply_chat_template(self, messages: Any, tokenize: bool, add_generation_prompt: bool) -> str:
        return "|".join(m["content"] for m in messages)

    def __call__(self, text: str, return_tensors: str, add_special_tokens: bool) -> Any:
        assert add_special_tokens is False
        ids = torch.tensor([[3 + (ord(c) % 50) for c in text]])
        return sys.modules["transformers"].BatchEncoding({"input_ids": ids, "attention_mask": torch.ones_like(ids)})

    def decode(self, ids: Any, skip_special_tokens: bool = True, **kwargs: Any) -> str:
        return '{"strategy":"retry_same"}' if list(ids)[-2:] == [7, 8] else ""


class Loaders:
    """Fakes for the transformers entry points; records every ``from_pretrained`` call."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, vision: bool = True, fail: BaseException | None = None):
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

        def loader(kind: str, result: Any) -> Any:
            def from_pretrained(model: str, **kwargs: Any) -> Any:
                if fail is not None:
                    raise fail
                self.calls.append((kind, model, kwargs))
                return result() if callable(result) else result
            return SimpleNamespace(from_pretrained=from_pretrained)

        config = SimpleNamespace(vision_config=object() if vision else None)
        names = ("AutoConfig", "AutoProcessor", "AutoTokenizer", "AutoModelForImageTextToText",
                 "AutoModelForCausalLM", "BitsAndBytesConfig")
        # Resolve transformers' lazy attributes first: resolving them here replaced the module in
        # sys.modules once (seen on transformers 5.23), and the backend imports whatever is there.
        for name in names:
            getattr(importlib.import_module("transformers"), name)
        transformers = sys.modules["transformers"]
        monkeypatch.setattr(transformers, "AutoConfig", loader("config", config))
        monkeypatch.setattr(transformers, "AutoProcessor",
                            loader("processor", SimpleNamespace(tokenizer=FakeTokenizer(), image_processor=object())))
        monkeypatch.setattr(transformers, "AutoTokenizer", loader("tokenizer", FakeTokenizer))
        monkeypatch.setattr(transformers, "AutoModelForImageTextToText", loader("model", FakeModel))
        monkeypatch.setattr(transformers, "AutoModelForCausalLM", loader("model", FakeModel))
        monkeypatch.setattr(transformers, "BitsAndBytesConfig", lambda **kw: SimpleNamespace(**kw))
        monkeypatch.setitem(sys.modules, "bitsandbytes", ModuleType("bitsandbytes"))

    def model_kwargs(self) -> dict[str, Any]:
        (kwargs,) = [kw for kind, _, kw in self.calls if kind == "model"]
        return kwargs


#: What Kaggle's torch (2.x, CUDA 12) is built for: no sm_60, so a P100 cannot run it.
KAGGLE_ARCHES = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "compute_90"]


def fake_gpu(monkeypatch: pytest.MonkeyPatch, capability: tuple[int, int] | None, name: str = "GPU",
             arches: list[str] = KAGGLE_ARCHES) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: capability is not None)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    monkeypatch.setattr(torch.cuda, "get_arch_list", lambda: list(arches))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: name)


@pytest.fixture(autouse=True)
def no_spaces_no_kaggle(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "spaces", None)  # import fails: not a ZeroGPU Space
    for name in ("SPACES_ZERO_GPU", "ACCELERATOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(backend, "KAGGLE_INPUT", tmp_path / "no-kaggle")


@pytest.mark.parametrize(("gpu", "capability", "dtype"), [
    ("V100", (7, 0), torch.float32),
    ("T4", (7, 5), torch.float32),
    ("A100", (8, 0), torch.bfloat16),
    ("A10G", (8, 6), torch.bfloat16),
    ("L4", (8, 9), torch.bfloat16),
    ("H100", (9, 0), torch.bfloat16),
])
def test_gpu_dtype_and_placement(monkeypatch: pytest.MonkeyPatch, gpu: str, capability: tuple[int, int],
                                 dtype: torch.dtype) -> None:
    fake_gpu(monkeypatch, capability)
    loaders = Loaders(monkeypatch)
    llm = load_transformers_llm(MEDGEMMA_MODEL_ID)
    kwargs = loaders.model_kwargs()
    assert kwargs["dtype"] is dtype, gpu
    quant = kwargs["quantization_config"]
    assert quant.bnb_4bit_compute_dtype is dtype and quant.load_in_4bit and quant.bnb_4bit_quant_type == "nf4"
    # Vision tower, projector and output head stay in 16/32-bit (tests/integration/test_medgemma_path.py loads it).
    assert quant.llm_int8_skip_modules == QUANTIZATION_SKIP == ["model.vision_tower", "model.multi_modal_projector", "lm_head"]
    assert kwargs["device_map"] == {"": 0}  # one GPU even on Kaggle's 2×T4
    assert torch.float16 not in (kwargs["dtype"], quant.bnb_4bit_compute_dtype)
    assert llm.device == "cuda" and llm.quantization == "4-bit NF4" and llm.supports_images
    assert llm.name == "MedGemma 1.5 4B IT" and llm.clinically_meaningful


@pytest.mark.parametrize(("capability", "asked", "reuse"), [
    ((8, 0), None, False),   # bf16 compute: reuse is not exact, off unless asked for
    ((8, 0), True, True),
    ((7, 5), None, True),    # float32 compute (T4): exact, on
    ((7, 5), False, False),
])
def test_prefix_reuse_default_follows_the_compute_dtype(monkeypatch: pytest.MonkeyPatch, capability: tuple[int, int],
                                                        asked: bool | None, reuse: bool) -> None:
    fake_gpu(monkeypatch, capability)
    Loaders(monkeypatch)
    assert load_transformers_llm(MEDGEMMA_MODEL_ID, prefix_cache=asked).prefix_cache is reuse


def test_p100_is_refused_with_what_to_choose(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kaggle's torch has no sm_60 kernels: the first CUDA operation would fail; the load says why first."""
    fake_gpu(monkeypatch, (6, 0), name="Tesla P100-PCIE-16GB")
    loaders = Loaders(monkeypatch)
    with pytest.raises(UnsupportedGPUError) as raised:
        load_transformers_llm(MEDGEMMA_MODEL_ID)
    message = str(raised.value)
    assert "Tesla P100" in message and "6.0" in message and "GPU T4 x2" in message and "sm_75" in message
    assert isinstance(raised.value, LLMError) and not loaders.calls  # nothing was loaded


@pytest.mark.parametrize(("capability", "arches"), [
    ((7, 5), KAGGLE_ARCHES),                     # T4 on Kaggle
    ((8, 9), KAGGLE_ARCHES),                     # L4: sm_86 code runs on 8.9
    ((10, 0), KAGGLE_ARCHES),                    # a newer GPU: the PTX of compute_90 is compiled for it
    ((6, 0), ["sm_60", "sm_70"]),                # a torch built with sm_60 runs a P100
    ((6, 0), []),                                # a build that does not list its architectures: CUDA decides
])
def test_gpus_the_installed_torch_supports_load(monkeypatch: pytest.MonkeyPatch, capability: tuple[int, int],
                                                arches: list[str]) -> None:
    fake_gpu(monkeypatch, capability, arches=arches)
    Loaders(monkeypatch)
    assert load_transformers_llm(MEDGEMMA_MODEL_ID).device == "cuda"


def test_cpu_loads_float32_unquantized_without_device_map(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_gpu(monkeypatch, None)
    loaders = Loaders(monkeypatch, vision=False)
    llm = load_transformers_llm("some/text-model")
    assert loaders.model_kwargs() == {"dtype": torch.float32}
    assert llm.device == "cpu" and llm.quantization is None and not llm.supports_images


def test_cpu_without_gpu_hardware_runs_the_demo_model_with_a_plain_note(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_gpu(monkeypatch, None)
    Loaders(monkeypatch, vision=False)
    llm = load_transformers_llm(None)
    assert llm.fallback_note == f"CUDA is not available: running {backend.EMBEDDED_LABEL} instead of MedGemma."


def test_gpu_space_whose_cuda_fails_says_so_loudly(monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    """A GPU Space with a torch built for a newer driver: the page and the log say the GPU failed and why,
    instead of a quiet "CUDA is not available" over the CPU demo."""
    fake_gpu(monkeypatch, None)
    monkeypatch.setenv("ACCELERATOR", "t4-small")
    monkeypatch.setattr(torch.version, "cuda", "13.0")

    def too_old() -> None:
        raise RuntimeError("The NVIDIA driver on your system is too old (found version 12020).")

    monkeypatch.setattr(torch.cuda, "init", too_old)
    Loaders(monkeypatch, vision=False)
    with caplog.at_level("ERROR", logger="docgemma.llm.platform"):
        llm = load_transformers_llm(None)
    note = str(llm.fallback_note)
    assert note.startswith("GPU FAILURE") and "t4-small" in note and "CUDA 13.0" in note
    assert "driver on your system is too old" in note and "not MedGemma" in note
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == [note]
    from docgemma.ui.messages import status_line

    assert "GPU FAILURE" in status_line(llm.describe(), llm.fallback_note, "reachable")


def test_kaggle_models_directory_is_preferred_to_the_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for variation in ("medgemma-27b-it", "medgemma-1.5-4b-it"):
        path = tmp_path / "medgemma" / "transformers" / variation / "1"
        path.mkdir(parents=True)
        (path / "config.json").write_text("{}")
    monkeypatch.setattr(backend, "KAGGLE_INPUT", tmp_path)
    fake_gpu(monkeypatch, (7, 5))
    loaders = Loaders(monkeypatch)
    llm = load_transformers_llm(None)
    wanted = str(tmp_path / "medgemma" / "transformers" / "medgemma-1.5-4b-it" / "1")
    assert {model for _, model, _ in loaders.calls} == {wanted}
    assert llm.name == "MedGemma 1.5 4B IT"


def test_no_kaggle_directory_means_the_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert backend._display_name("/kaggle/input/medgemma/transformers/medgemma-27b-text-it/1") == "medgemma-27b-text-it"
    assert kaggle_model_dir(tmp_path / "absent") is None
    (tmp_path / "other-dataset").mkdir()
    assert kaggle_model_dir(tmp_path) is None
    fake_gpu(monkeypatch, (8, 0))
    loaders = Loaders(monkeypatch)
    load_transformers_llm(None)
    assert {model for _, model, _ in loaders.calls} == {MEDGEMMA_MODEL_ID}


def _gated() -> BaseException:
    import httpx2
    from huggingface_hub.errors import GatedRepoError

    url = f"https://huggingface.co/{MEDGEMMA_MODEL_ID}/resolve/main/config.json"
    return GatedRepoError("Access to model is restricted", response=httpx2.Response(403, request=httpx2.Request("GET", url)))


@pytest.mark.parametrize("error", [
    _gated(),
    OSError(f"You are trying to access a gated repo. Make sure to have access to it at https://huggingface.co/{MEDGEMMA_MODEL_ID}"),
])
def test_gated_medgemma_says_how_to_get_access(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    fake_gpu(monkeypatch, (7, 5))
    Loaders(monkeypatch, fail=error)
    with pytest.raises(ModelAccessError) as raised:
        load_transformers_llm(None)
    message = str(raised.value)
    assert isinstance(raised.value, LLMError) and raised.value.__cause__ is error
    assert "Health AI Developer Foundations" in message and "HF_TOKEN" in message and "Kaggle" in message


def test_missing_other_model_names_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_gpu(monkeypatch, None)
    Loaders(monkeypatch, fail=OSError("no such directory"))
    with pytest.raises(ModelAccessError, match="cannot load someone/x: OSError: no such directory"):
        load_transformers_llm("someone/x")


@pytest.mark.parametrize("model", ["/models/missing", "./missing", "models/medgemma/missing"])
def test_a_missing_model_directory_says_so_not_the_hubs_repo_id_error(monkeypatch: pytest.MonkeyPatch,
                                                                      model: str) -> None:
    fake_gpu(monkeypatch, None)
    Loaders(monkeypatch, fail=AssertionError("the hub must not be asked"))
    with pytest.raises(ModelAccessError, match=f"no model directory at {model} \\(nothing there\\)"):
        load_transformers_llm(model)


def recording_spaces(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[int]]:
    """A ``spaces`` module whose GPU wrapper records each wrapped call and the duration it would ask for."""
    wrapped: list[str] = []
    durations: list[int] = []

    def gpu(duration: Any) -> Any:
        def decorate(fn: Any) -> Any:
            def run(*args: Any, **kwargs: Any) -> Any:
                wrapped.append(fn.__name__)
                durations.append(duration(*args, **kwargs))  # as spaces does for a dynamic duration
                # spaces pickles the arguments into its worker: what cannot be pickled fails the call there.
                args, kwargs = pickle.loads(pickle.dumps((args, kwargs)))
                return fn(*args, **kwargs)
            return run
        return decorate

    spaces = ModuleType("spaces")
    spaces.GPU = gpu  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "spaces", spaces)
    return wrapped, durations


def test_zerogpu_wraps_every_model_call(monkeypatch: pytest.MonkeyPatch) -> None:
    wrapped, durations = recording_spaces(monkeypatch)
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    llm = TransformersLLM("fake", FakeModel(), FakeTokenizer())
    llm._constraints = SimpleNamespace(matcher=lambda schema: None,
                                       processor=lambda schema: (lambda input_ids, scores: scores))
    messages = [Message(role="user", content="hi")]
    assert llm.generate_json(messages, RetryStrategy, temperature=0.0, max_tokens=4).strategy == "retry_same"
    list(llm.generate_text(messages, temperature=0.0, max_tokens=512))
    assert wrapped == ["_generate_ids_impl", "_stream_impl"] and llm.model.generated == 2
    # Each call asks for what its token budget needs: a short JSON call much less than a long answer.
    assert durations == [21, 72] and not llm.prefix_cache


def test_zerogpu_calls_cross_as_plain_data_even_for_schemas_made_inside_functions(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The intent and tool-selection schemas are ``pydantic.create_model`` classes made inside functions: pickle
    cannot name them, and the real ``spaces`` pickles a GPU call's arguments (every model-decided turn failed with
    PicklingError on ZeroGPU). Their JSON Schema text crosses instead."""
    wrapped, _ = recording_spaces(monkeypatch)
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    llm = TransformersLLM("fake", FakeModel(), FakeTokenizer())
    seen: list[Any] = []
    llm._constraints = SimpleNamespace(matcher=seen.append, processor=lambda schema: (lambda input_ids, scores: scores))
    messages = [Message(role="user", content="hi")]
    for schema in (intent_schema(("a", "b")), tool_selection_schema(("a", "b"))):
        with pytest.raises(Exception, match=r"pickle|attribute lookup"):
            pickle.dumps(schema)  # the bug's cause, still true of the classes
        with pytest.raises(LLMError):  # crossed, ran, and the fake model's answer is not this schema
            llm.generate_json(messages, schema, temperature=0.0, max_tokens=4)
    assert wrapped == ["_generate_ids_impl"] * 2 and all(isinstance(s, str) for s in seen)


def test_on_zerogpu_the_gpu_check_runs_in_the_worker_once_never_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """``torch.cuda.get_arch_list()`` at load initialised CUDA in the main process; the forked worker then
    failed ("Cannot re-initialize CUDA in forked subprocess"). On ZeroGPU the check runs on the worker's first
    call, once per worker process."""
    recording_spaces(monkeypatch)
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    fake_gpu(monkeypatch, (9, 0))
    probed: list[int] = []
    monkeypatch.setattr(torch.cuda, "get_arch_list", lambda: probed.append(os.getpid()) or list(KAGGLE_ARCHES))
    Loaders(monkeypatch)
    llm = load_transformers_llm(MEDGEMMA_MODEL_ID)
    assert probed == [] and llm.gpu_check is not None  # nothing probed CUDA at load
    llm._gpu_ready()
    llm._gpu_ready()
    assert probed == [os.getpid()]  # once in this (worker) process
    llm._gpu_checked = -1  # another forked worker: its own first call checks again
    llm._gpu_ready()
    assert len(probed) == 2


def test_off_zerogpu_the_gpu_check_runs_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_gpu(monkeypatch, (7, 5))
    probed: list[int] = []
    monkeypatch.setattr(torch.cuda, "get_arch_list", lambda: probed.append(1) or list(KAGGLE_ARCHES))
    Loaders(monkeypatch)
    assert load_transformers_llm(MEDGEMMA_MODEL_ID).gpu_check is None and probed == [1]


def test_a_zerogpu_failure_reaches_the_agent_as_the_backend_being_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """spaces raises ``gradio.Error("ZeroGPU quota exceeded", …)`` or ``("ZeroGPU worker error", "<class>")``:
    the agent gets BackendUnavailable (one sentence), never the raw error on the page."""
    import gradio as gr

    from docgemma.llm.platform import failures_said

    def quota(*args: Any, **kwargs: Any) -> Any:
        raise gr.Error("You have exceeded your free ZeroGPU quota", title="ZeroGPU quota exceeded")

    def worker_fails_midway(*args: Any, **kwargs: Any) -> Any:
        yield "First"
        raise gr.Error("RuntimeError", title="ZeroGPU worker error")

    with pytest.raises(BackendUnavailable, match="quota"):
        failures_said(quota)()
    stream = failures_said(worker_fails_midway)()
    assert next(stream) == "First"
    with pytest.raises(BackendUnavailable, match="RuntimeError"):
        next(stream)


def test_spaces_importable_without_zerogpu_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``spaces`` package is on every Space, GPU or CPU: only ZeroGPU's variable turns the wrapper on."""
    wrapped, _ = recording_spaces(monkeypatch)
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    llm = TransformersLLM("fake", FakeModel(), FakeTokenizer())
    assert llm._generate_ids == llm._generate_ids_impl and llm._stream == llm._stream_impl
    assert llm.prefix_cache and wrapped == []  # the prefix cache stays on outside ZeroGPU


def test_zerogpu_without_the_spaces_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPACES_ZERO_GPU", "1")
    monkeypatch.setitem(sys.modules, "spaces", None)  # import spaces -> ImportError
    with pytest.raises(MissingDependencyError, match="pip install spaces"):
        TransformersLLM("fake", FakeModel(), FakeTokenizer())


def test_without_spaces_model_calls_are_plain() -> None:
    llm = TransformersLLM("fake", FakeModel(), FakeTokenizer())
    assert llm._generate_ids == llm._generate_ids_impl and llm._stream == llm._stream_impl


def test_clinically_meaningful_flags() -> None:
    assert FakeLLM().clinically_meaningful and clinically_meaningful(FakeLLM())
    assert not clinically_meaningful(FakeLLM(clinically_meaningful=False))
    assert not clinically_meaningful(demo_llm())
    assert clinically_meaningful(OpenAICompatLLM("http://127.0.0.1:9/v1", "medgemma"))
    assert clinically_meaningful(object())  # backends without the attribute keep their prose
    assert not clinically_meaningful(TransformersLLM("SmolLM2", FakeModel(), FakeTokenizer(), clinically_meaningful=False))

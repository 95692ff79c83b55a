"""The embedded GGUF is converted once and kept (issue 47: a restart within 30 s). What later starts load from the
kept folder must be the very model the GGUF gives: the same chat template, the same token ids, the same logits and
the same greedy reply; a half-written folder is never used; a cache that cannot be written is said, and the app
still loads."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from docgemma.llm.base import Message
from docgemma.llm.transformers_backend import (
    CONVERTED_MARK,
    TransformersLLM,
    converted_folder,
    embedded_model_file,
    load_transformers_llm,
)

pytestmark = [pytest.mark.slow]
MESSAGES = [Message(role="system", content="You are a careful assistant."),
            Message(role="user", content="What is the usual adult dose of amoxicillin for otitis media?")]


def ids(llm: TransformersLLM) -> list[int]:
    out = llm.tokenizer.apply_chat_template([dict(m) for m in MESSAGES], tokenize=True, add_generation_prompt=True,
                                            return_dict=True)
    return [int(t) for t in out["input_ids"]]


def reply(llm: TransformersLLM, tokens: int) -> str:
    return "".join(llm.generate_text(MESSAGES, temperature=0.0, max_tokens=tokens))


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[TransformersLLM, TransformersLLM, Path]:
    cache = tmp_path_factory.mktemp("models")
    converted = load_transformers_llm(str(embedded_model_file()), converted_dir=cache)  # converts and keeps it
    folder = converted_folder(embedded_model_file(), converted.model.dtype, cache)
    assert (folder / CONVERTED_MARK).is_file()
    reloaded = load_transformers_llm(str(embedded_model_file()), converted_dir=cache)  # loads the kept folder
    return converted, reloaded, folder


def test_the_kept_model_is_the_model_the_gguf_gives(pair: tuple[TransformersLLM, TransformersLLM, Path]) -> None:
    import torch

    converted, reloaded, folder = pair
    assert reloaded.tokenizer.name_or_path == str(folder)  # really loaded from the kept folder
    assert reloaded.describe() == converted.describe()  # still the embedded demo model, not fit for medicine
    assert reloaded.clinically_meaningful is False
    assert ids(reloaded) == ids(converted)
    assert reloaded.tokenizer.eos_token_id == converted.tokenizer.eos_token_id
    batch = torch.tensor([ids(converted)])
    with torch.no_grad():
        assert torch.equal(reloaded.model(batch).logits, converted.model(batch).logits)
    assert reply(reloaded, 24) == reply(converted, 24)


def test_the_model_that_was_saved_is_left_as_it_was(pair: tuple[TransformersLLM, TransformersLLM, Path]) -> None:
    converted, _, _ = pair
    # Saving takes the GGUF quantizer off for a moment (transformers refuses to save it) and puts it back.
    assert converted.model.hf_quantizer is not None
    assert converted.model.config.quantization_config is not None


def test_a_half_written_folder_is_not_used(tmp_path: Path) -> None:
    import torch

    folder = converted_folder(embedded_model_file(), torch.float32, tmp_path)
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")  # a start killed while writing: no mark
    llm = load_transformers_llm(str(embedded_model_file()), converted_dir=tmp_path)
    assert llm.tokenizer.name_or_path != str(folder)  # converted from the GGUF again
    assert not any(p.name.startswith(f"{folder.name}.partial") for p in tmp_path.iterdir())


def test_a_cache_that_cannot_be_written_is_said_and_the_model_still_loads(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")  # (a read-only folder would not stop root, who runs CI)
    with caplog.at_level(logging.WARNING):
        llm = load_transformers_llm(str(embedded_model_file()), converted_dir=blocker / "models")
    assert "could not keep the converted model" in caplog.text
    assert reply(llm, 4)

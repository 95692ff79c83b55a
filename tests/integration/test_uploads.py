"""Uploads that cannot hurt: image bytes stay out of the conversation checkpoint (a bounded image store on
disk holds them), a pixel bomb gets a clear message in the CLI, and the CLI prints answers written without
a model (the empty-message note)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from docgemma.__main__ import main
from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.config import Settings
from docgemma.image_store import ImageRef, ImageStore, load_image_bytes
from docgemma.images import ImageError
from docgemma.llm.demo import demo_llm
from docgemma.tools.registry import default_registry
from tests.fixture_images import bomb_png, noise_png


def _assistant(tmp_path: Path, max_image_bytes: int = 20_000_000) -> tuple[Assistant, Path, ImageStore]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    db = tmp_path / "conversations.sqlite"
    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    saver.setup()
    settings = Settings(max_image_bytes=max_image_bytes, data_dir=tmp_path)
    store = ImageStore(settings.image_store_path, max_file_bytes=max_image_bytes, max_files=3)
    return Assistant(demo_llm(), default_registry(), saver, settings, image_store=store), db, store


def _answer(outcome: TurnResult | dict[str, object]) -> str:
    assert isinstance(outcome, TurnResult)
    return outcome.answer


def test_an_image_turn_does_not_put_the_image_into_the_checkpoint(tmp_path: Path) -> None:
    """The bytes used to be part of the graph state, so every image turn grew conversations.sqlite by the
    image's size (601 MB after two refused 300 MB uploads)."""
    assistant, db, store = _assistant(tmp_path)
    assistant.run_turn("t", "What is hypertension?")
    before = db.stat().st_size
    image = noise_png(600, 600)  # ~1 MB that does not compress
    assistant.run_turn("t", "What does this image show?", {"filename": "scan.png", "data": image})
    growth = db.stat().st_size - before
    assert growth < len(image) / 4, f"checkpoint grew by {growth} bytes for a {len(image)}-byte image"
    ref = assistant.state("t")["attachment"]
    assert ref is not None and "data" not in ref and load_image_bytes(ref) == image
    assert store.usage() == (1, len(image))


def test_a_refused_upload_is_neither_stored_nor_checkpointed(tmp_path: Path) -> None:
    assistant, db, store = _assistant(tmp_path, max_image_bytes=100_000)
    assistant.run_turn("t", "What is hypertension?")
    before = db.stat().st_size
    big = noise_png(400, 400)  # ~480 kB, over the 100 kB limit
    answer = _answer(assistant.run_turn("t", "Look at this", {"filename": "big.png", "data": big}))
    assert "the limit is" in answer
    assert db.stat().st_size - before < len(big) / 4 and store.usage() == (0, 0)


def test_the_store_is_bounded_and_an_evicted_image_gets_a_clear_message(tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "images", max_file_bytes=10_000_000, max_files=3)
    refs: list[ImageRef] = [store.put(f"{i}.png", noise_png(20, 20, seed=i)) for i in range(5)]
    assert store.usage()[0] == 3
    assert load_image_bytes(refs[-1]) == noise_png(20, 20, seed=4)
    with pytest.raises(ImageError, match="no longer available"):
        load_image_bytes(refs[0])
    again = store.put("again.png", noise_png(20, 20, seed=4))  # same content: one file
    assert again["path"] == refs[-1]["path"] and store.usage()[0] == 3


def test_a_pixel_bomb_gets_a_clear_message_in_a_turn(tmp_path: Path) -> None:
    assistant, _, _ = _assistant(tmp_path)
    answer = _answer(assistant.run_turn("t", "What does this show?", {"filename": "bomb.png", "data": bomb_png(14_000, 14_000)}))
    assert "14000×14000 pixels" in answer and "limit is 50 megapixels" in answer


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DOCGEMMA_BACKEND", "fake")
    monkeypatch.setenv("DOCGEMMA_DATA_DIR", str(tmp_path / "data"))
    # Knowledge tools point at a closed local port: nothing can reach the network.
    for name in ("OPENFDA", "EUTILS", "EUROPEPMC", "CTGOV"):
        monkeypatch.setenv(f"DOCGEMMA_{name}_URL", "http://127.0.0.1:9")
    return tmp_path


@pytest.mark.slow
def test_cli_pixel_bomb_is_a_clear_message_not_a_crash(cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 14000×14000 PNG crashed ``python -m docgemma chat`` with DecompressionBombError."""
    bomb = cli_env / "bomb.png"
    bomb.write_bytes(bomb_png(14_000, 14_000))
    assert main(["chat", "What does this image show?", "--image", str(bomb)]) == 0
    out = capsys.readouterr().out
    assert "14000×14000 pixels" in out and "limit is 50 megapixels" in out


@pytest.mark.slow
def test_cli_refuses_an_oversized_file_before_reading_it(cli_env: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCGEMMA_MAX_IMAGE_BYTES", "1000")
    big = cli_env / "big.png"
    big.write_bytes(noise_png(100, 100))
    assert main(["chat", "Look", "--image", str(big)]) == 2
    assert "the limit is" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_prints_the_empty_message_note(cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The note was only in the result, never printed: an empty message printed just a bare timeline."""
    assert main(["chat", "   "]) == 0
    assert "Please type a question" in capsys.readouterr().out

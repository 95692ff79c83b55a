"""An upload is decoded once, with every limit: INPUT_ASSEMBLY's decode is the one the image tool is handed, and
a decompression bomb is refused at that single decode (from the header, never decoded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import docgemma.agent.nodes.input_assembly as assembly_node
import docgemma.agent.nodes.tool_execute as tool_node
import docgemma.image_store as image_store
from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.image_store import ImageStore, decode_ref, decode_upload
from docgemma.images import ImageError, decode_image
from docgemma.tools.registry import default_registry
from tests.fixture_images import bomb_png, noise_png


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every real decode, as (file name, pixel limit); the kept decodes start empty."""
    seen: list[tuple[str, int]] = []

    def watched(filename: str, data: bytes, max_bytes: int, max_pixels: int = 0) -> Any:
        seen.append((filename, max_pixels))
        return decode_image(filename, data, max_bytes, max_pixels)

    monkeypatch.setattr(image_store, "decode_image", watched)
    monkeypatch.setattr(image_store, "_decoded", type(image_store._decoded)())
    return seen


def test_a_decompression_bomb_is_refused_at_the_single_decode(tmp_path: Path, decodes: list[tuple[str, int]]) -> None:
    store = ImageStore(tmp_path, max_file_bytes=5_000_000)
    ref = store.put("bomb.png", bomb_png(30_000, 30_000))
    for _ in range(2):  # asked again (the image tool after INPUT_ASSEMBLY): the refusal is kept, not re-decoded
        with pytest.raises(ImageError, match=r"pixels|megapixel"):
            decode_ref(ref, 5_000_000, 1_000_000)
    assert decodes == [("bomb.png", 1_000_000)]


def test_the_preview_and_the_turn_share_one_decode(tmp_path: Path, decodes: list[tuple[str, int]]) -> None:
    data = noise_png(64, 64)
    shown = decode_upload("scan.png", data, 5_000_000, 1_000_000)
    ref = ImageStore(tmp_path, max_file_bytes=5_000_000).put("scan.png", data)
    assert decode_ref(ref, 5_000_000, 1_000_000) is shown
    assert decodes == [("scan.png", 1_000_000)]
    decode_ref(ref, 5_000_000, 2_000_000)  # other limits: decoded under those limits
    assert decodes[-1] == ("scan.png", 2_000_000)


def test_the_image_tool_is_handed_the_image_input_assembly_decoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   decodes: list[tuple[str, int]]) -> None:
    handed: dict[str, list[Any]] = {"input_assembly": [], "tool_execute": []}
    for name, module in (("input_assembly", assembly_node), ("tool_execute", tool_node)):
        def kept(ref: Any, max_bytes: int, max_pixels: int, _name: str = name) -> Any:
            image = decode_ref(ref, max_bytes, max_pixels)
            handed[_name].append(image)
            return image

        monkeypatch.setattr(module, "decode_ref", kept)
    settings = Settings(data_dir=tmp_path, max_image_pixels=1_000_000)
    store = ImageStore(settings.image_store_path, max_file_bytes=settings.max_image_bytes)
    assistant = Assistant(demo_llm(), default_registry(), None, settings, image_store=store)
    assistant.run_turn("t", "Analyze this chest x-ray image", {"filename": "cxr.png", "data": noise_png(300, 300)})
    assert len(handed["tool_execute"]) == 1, "the image tool did not run"
    assert handed["tool_execute"][0] is handed["input_assembly"][0]
    assert decodes == [("cxr.png", 1_000_000)]

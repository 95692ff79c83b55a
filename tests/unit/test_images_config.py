"""Image decoding (PNG, JPEG, DICOM, bad uploads) and settings parsing."""

from __future__ import annotations

import io
from pathlib import Path

import pydicom
import pytest
from PIL import Image

from docgemma.config import ConfigError, Settings
from docgemma.images import ImageError, decode_image

CT = Path(pydicom.__file__).parent / "data" / "test_files" / "CT_small.dcm"


def encoded(fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 24), (200, 10, 10)).save(buffer, format=fmt)
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_png_and_jpeg_decode(fmt: str) -> None:
    image = decode_image(f"x.{fmt.lower()}", encoded(fmt), 10_000_000)
    assert image.size == (32, 24) and image.mode == "RGB" and image.format == fmt


def test_dicom_is_windowed_to_8_bit_rgb() -> None:
    image = decode_image("CT_small.dcm", CT.read_bytes(), 10_000_000)
    assert image.mode == "RGB" and image.size == (128, 128)
    low, high = image.convert("L").getextrema()
    assert low == 0 and high == 255  # full 8-bit range after windowing


@pytest.mark.parametrize(("name", "data", "message"), [
    ("empty.png", b"", "is empty"),
    ("notes.txt", b"hello, this is text", "not a supported image"),
    ("broken.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "damaged"),
    ("fake.dcm", b"\x00" * 200, "not a valid DICOM"),
])
def test_bad_uploads_get_clear_errors(name: str, data: bytes, message: str) -> None:
    with pytest.raises(ImageError, match=message):
        decode_image(name, data, 10_000_000)


def test_oversized_upload_is_refused() -> None:
    with pytest.raises(ImageError, match="limit"):
        decode_image("big.png", encoded("PNG"), 10)


def test_settings_from_env() -> None:
    settings = Settings.from_env({"DOCGEMMA_BACKEND": "fake", "DOCGEMMA_DATA_DIR": "/tmp/dg", "DOCGEMMA_MAX_MESSAGE_CHARS": "50"})
    assert settings.backend == "fake" and settings.data_dir == Path("/tmp/dg") and settings.max_message_chars == 50
    with pytest.raises(ConfigError, match="DOCGEMMA_BACKEND"):
        Settings.from_env({"DOCGEMMA_BACKEND": "gpt"})
    with pytest.raises(ConfigError, match="DOCGEMMA_MAX_MESSAGE_CHARS"):
        Settings.from_env({"DOCGEMMA_MAX_MESSAGE_CHARS": "lots"})

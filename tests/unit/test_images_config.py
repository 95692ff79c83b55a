"""Image decoding (PNG, JPEG, DICOM, bad uploads) and settings parsing."""

from __future__ import annotations

import io
from pathlib import Path

import pydicom
import pytest
from PIL import Image

from docgemma.config import ConfigError, Settings
from docgemma.images import MAX_SIDE, ImageError, decode_image
from tests.fixture_images import CT_QUADRANTS, bomb_png, synthetic_ct

TEST_FILES = Path(pydicom.__file__).parent / "data" / "test_files"
CT = TEST_FILES / "CT_small.dcm"


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


@pytest.mark.parametrize("side", [14_000, 12_000, 7_100])
def test_pixel_bombs_are_refused_from_the_header_before_decoding(side: int) -> None:
    """14000² crashed the CLI with PIL's DecompressionBombError; 12000² decoded (1.7 GB peak). Both are
    refused from the header with the image's size and the limit, as is anything just over 50 MP."""
    with pytest.raises(ImageError, match=rf"{side}×{side} pixels .*limit is 50 megapixels"):
        decode_image("scan.png", bomb_png(side, side), 10_000_000)


def test_pixel_limit_is_a_parameter_and_large_images_are_downscaled() -> None:
    with pytest.raises(ImageError, match="limit is 1 megapixels"):
        decode_image("x.png", bomb_png(1100, 1000), 10_000_000, max_pixels=1_000_000)
    image = decode_image("x.png", bomb_png(5000, 100), 10_000_000)  # accepted (0.5 MP), longest side capped
    assert image.size == (MAX_SIDE, 41) and image.mode == "RGB" and image.format == "PNG"


@pytest.mark.parametrize("mode", ["RGBA", "LA", "P", "1", "L", "RGB"])
def test_large_images_of_every_mode_are_shrunk_to_rgb(mode: str) -> None:
    buffer = io.BytesIO()
    Image.new(mode, (4100, 30), 1).save(buffer, format="PNG")
    image = decode_image("wide.png", buffer.getvalue(), 10_000_000)
    assert image.size == (MAX_SIDE, 15) and image.mode == "RGB"


def test_ct_window_is_applied_in_hounsfield_units() -> None:
    """Modality LUT (rescale intercept -1024) before the VOI window (centre 40, width 400 HU). Before, the
    window was applied to stored values: water and soft tissue both came out white."""
    image = decode_image("ct.dcm", synthetic_ct(), 10_000_000).convert("L")
    grey = {name: image.getpixel(xy) for name, xy in
            zip(CT_QUADRANTS, [(5, 5), (40, 5), (5, 40), (40, 40)], strict=True)}
    # Linear window [-160, 240] HU → 0..255: water (0 HU) = 102, soft tissue (40 HU) = 128.
    assert grey == {"air": 0, "water": 102, "soft tissue": 128, "bone": 255}


@pytest.mark.parametrize("name", ["MR_small_jp2klossless.dcm", "MR_small_jpeg_ls_lossless.dcm", "MR_small_RLE.dcm"])
def test_compressed_dicom_decodes_like_the_uncompressed_original(name: str) -> None:
    """JPEG 2000, JPEG-LS and RLE (pydicom's own samples, shipped in its wheel) decode through pylibjpeg;
    lossless, so the windowed image equals that of the uncompressed MR_small.dcm."""
    reference = decode_image("MR_small.dcm", (TEST_FILES / "MR_small.dcm").read_bytes(), 10_000_000)
    image = decode_image(name, (TEST_FILES / name).read_bytes(), 10_000_000)
    assert image.size == (64, 64) and image.tobytes() == reference.tobytes()


@pytest.mark.parametrize("name", ["SC_rgb_jpeg_dcmtk.dcm", "SC_rgb_rle_2frame.dcm", "JPEG2000.dcm"])
def test_compressed_colour_and_multiframe_dicom_decode(name: str) -> None:
    image = decode_image(name, (TEST_FILES / name).read_bytes(), 10_000_000)
    assert image.mode == "RGB" and min(image.size) > 0
    low, high = image.convert("L").getextrema()
    assert high > low  # an actual picture, not a blank frame


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

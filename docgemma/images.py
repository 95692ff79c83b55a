"""Decoding of uploaded images: PNG, JPEG and DICOM (windowed to 8-bit), with clear errors."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image

SUPPORTED = "PNG, JPEG or DICOM"
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"


class ImageError(ValueError):
    """An upload that cannot be used as an image; the message is shown to the clinician."""


def is_dicom(data: bytes) -> bool:
    """DICOM Part 10 files carry ``DICM`` after a 128-byte preamble."""
    return len(data) >= 132 and data[128:132] == b"DICM"


def decode_image(filename: str, data: bytes, max_bytes: int) -> Image:
    """Decode an upload to an RGB PIL image, or raise :class:`ImageError` saying what is wrong."""
    if not data:
        raise ImageError(f"The file {filename!r} is empty.")
    if len(data) > max_bytes:
        raise ImageError(
            f"The file {filename!r} is {len(data) / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.0f} MB."
        )
    if is_dicom(data) or filename.lower().endswith((".dcm", ".dicom")):
        return _decode_dicom(filename, data)
    if not (data.startswith(_PNG_MAGIC) or data.startswith(_JPEG_MAGIC)):
        raise ImageError(f"The file {filename!r} is not a supported image ({SUPPORTED}).")
    from PIL import Image as PILImage
    from PIL import UnidentifiedImageError

    try:
        image = PILImage.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise ImageError(f"The file {filename!r} is damaged and could not be read as an image.") from exc
    fmt = image.format
    rgb = image.convert("RGB")
    rgb.format = fmt
    return rgb


def _decode_dicom(filename: str, data: bytes) -> Image:
    import numpy as np
    import pydicom
    from PIL import Image as PILImage
    from pydicom.errors import InvalidDicomError

    try:
        dataset = pydicom.dcmread(io.BytesIO(data))
        pixels = dataset.pixel_array
    except InvalidDicomError as exc:
        raise ImageError(f"The file {filename!r} is not a valid DICOM file.") from exc
    except (AttributeError, ValueError, RuntimeError, NotImplementedError) as exc:
        # No pixel data, or a compressed transfer syntax without its decoder installed.
        raise ImageError(f"The DICOM file {filename!r} has no image data this system can decode.") from exc
    if pixels.ndim == 4 or (pixels.ndim == 3 and dataset.get("SamplesPerPixel", 1) == 1):
        pixels = pixels[len(pixels) // 2]  # multi-frame: the middle frame is the most representative
    if dataset.get("SamplesPerPixel", 1) == 1:
        from pydicom.pixels import apply_voi_lut

        windowed = apply_voi_lut(pixels, dataset).astype("float64")
        low, high = float(windowed.min()), float(windowed.max())
        scaled = (windowed - low) / (high - low) * 255.0 if high > low else np.zeros_like(windowed)
        if dataset.get("PhotometricInterpretation") == "MONOCHROME1":
            scaled = 255.0 - scaled  # MONOCHROME1 stores inverted grey levels
        image = PILImage.fromarray(scaled.astype("uint8"), mode="L").convert("RGB")
    else:
        image = PILImage.fromarray(pixels.astype("uint8")).convert("RGB")
    image.format = "PNG"
    return image

"""Decoding of uploaded images: PNG, JPEG and DICOM (rescaled to HU, then windowed to 8-bit), with clear errors.

Every size limit is checked before pixels are decoded: the byte size first, then the pixel count read from
the header (PIL's ``Image.open`` and pydicom's ``dcmread`` only parse headers), so a small file that expands
to gigabytes (a "decompression bomb") is refused with a message instead of exhausting memory.
"""

from __future__ import annotations

import io
import struct
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL.Image import Image

SUPPORTED = "PNG, JPEG or DICOM"
#: Default pixel cap (width × height of one frame): 50 MP, above any clinical photograph or radiograph.
DEFAULT_MAX_PIXELS = 50_000_000
#: Longest side of the decoded image handed on (preview, vision model): the models read ~900 px.
MAX_SIDE = 2048
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"


class ImageError(ValueError):
    """An upload that cannot be used as an image; the message is shown to the clinician."""


def is_dicom(data: bytes) -> bool:
    """DICOM Part 10 files carry ``DICM`` after a 128-byte preamble."""
    return len(data) >= 132 and data[128:132] == b"DICM"


def size_error(filename: str, size: int, max_bytes: int) -> str:
    """The message for an upload over the byte limit."""
    return f"The file {filename!r} is {size / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.0f} MB."


def pixel_error(filename: str, width: int, height: int, max_pixels: int) -> str:
    """The message for an image over the pixel limit."""
    return (
        f"The image {filename!r} is {width}×{height} pixels ({_megapixels(width * height)} megapixels); the "
        f"limit is {_megapixels(max_pixels)} megapixels. Please send a smaller export of the image."
    )


def _megapixels(pixels: int) -> str:
    return f"{pixels / 1e6:.1f}".removesuffix(".0")


def decode_image(filename: str, data: bytes, max_bytes: int, max_pixels: int = DEFAULT_MAX_PIXELS) -> Image:
    """Decode an upload to an RGB PIL image (longest side at most :data:`MAX_SIDE`), or raise
    :class:`ImageError` saying what is wrong."""
    if not data:
        raise ImageError(f"The file {filename!r} is empty.")
    if len(data) > max_bytes:
        raise ImageError(size_error(filename, len(data), max_bytes))
    if is_dicom(data) or filename.lower().endswith((".dcm", ".dicom")):
        image = _decode_dicom(filename, data, max_pixels)
    elif data.startswith(_PNG_MAGIC) or data.startswith(_JPEG_MAGIC):
        image = _decode_raster(filename, data, max_pixels)
    else:
        raise ImageError(f"The file {filename!r} is not a supported image ({SUPPORTED}).")
    fmt = image.format
    if max(image.size) > MAX_SIDE:
        image.thumbnail((MAX_SIDE, MAX_SIDE))
    image.format = fmt
    return image


def png_data_url(image: Image) -> str:
    """An image as a ``data:image/png;base64,…`` URL (how OpenAI-compatible chat messages carry an image)."""
    import base64

    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _decode_raster(filename: str, data: bytes, max_pixels: int) -> Image:
    from PIL import Image as PILImage
    from PIL import UnidentifiedImageError

    damaged = f"The file {filename!r} is damaged and could not be read as an image."
    try:
        # Our own cap replaces PIL's global decompression-bomb warning; PIL's hard limit (2× its warning
        # size) still raises in open() for images far over any sane cap.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PILImage.DecompressionBombWarning)
            image = PILImage.open(io.BytesIO(data))  # lazy: reads the header only
    except PILImage.DecompressionBombError as exc:
        if data.startswith(_PNG_MAGIC) and len(data) >= 24:
            width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk comes first
            raise ImageError(pixel_error(filename, width, height, max_pixels)) from exc
        raise ImageError(
            f"The image {filename!r} has far more pixels than the limit of {_megapixels(max_pixels)} megapixels. "
            "Please send a smaller export of the image."
        ) from exc
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise ImageError(damaged) from exc
    width, height = image.size
    if width * height > max_pixels:
        raise ImageError(pixel_error(filename, width, height, max_pixels))
    fmt = image.format
    try:
        if fmt == "JPEG":
            # JPEG can decode at 1/2, 1/4 or 1/8 scale: a fraction of the memory of a full decode.
            image.draft(image.mode, (MAX_SIDE, MAX_SIDE))
        image.load()
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageError(damaged) from exc
    shown: Image = image
    if max(image.size) > MAX_SIDE:
        shown = _shrink(image, max(image.size) // MAX_SIDE)  # still ≥ MAX_SIDE: thumbnail() finishes the job
        del image  # the full-size pixels go now, not at return
    rgb = shown if shown.mode == "RGB" else shown.convert("RGB")  # no second full-size copy when already RGB
    rgb.format = fmt
    return rgb


def _shrink(image: Image, factor: int) -> Image:
    """Box-average ``image`` by an integer ``factor`` before any colour conversion, so that no second
    full-size copy is made: reduce() premultiplies alpha through a full copy, so colour bands with alpha are
    reduced one at a time (alpha is dropped anyway). Measured at 50 MP RGBA: 404 → ~250 MB peak."""
    from PIL import Image as PILImage

    if image.mode in ("RGBA", "LA"):
        bands = [image.getchannel(i).reduce(factor) for i in range(len(image.getbands()) - 1)]
        return bands[0] if len(bands) == 1 else PILImage.merge("RGB", bands)
    if image.mode in ("1", "P"):
        image = image.convert("L" if image.mode == "1" else "RGB")  # modes reduce() cannot read
    return image.reduce(factor)


def _decode_dicom(filename: str, data: bytes, max_pixels: int) -> Image:
    import pydicom
    from PIL import Image as PILImage
    from pydicom.errors import InvalidDicomError
    from pydicom.pixels import pixel_array

    try:
        dataset = pydicom.dcmread(io.BytesIO(data))
    except InvalidDicomError as exc:
        raise ImageError(f"The file {filename!r} is not a valid DICOM file.") from exc
    except (AttributeError, ValueError, EOFError, OSError) as exc:
        raise ImageError(f"The file {filename!r} is damaged and could not be read as DICOM.") from exc
    rows, columns = int(dataset.get("Rows") or 0), int(dataset.get("Columns") or 0)
    if "PixelData" not in dataset or not rows or not columns:
        raise ImageError(f"The DICOM file {filename!r} has no image data.")
    if rows * columns > max_pixels:
        raise ImageError(pixel_error(filename, columns, rows, max_pixels))
    frames = int(dataset.get("NumberOfFrames") or 1)
    syntax = getattr(getattr(dataset, "file_meta", None), "TransferSyntaxUID", None)
    try:
        # Only the middle frame (the most representative) is decoded, never the whole series.
        pixels = pixel_array(dataset, index=frames // 2) if frames > 1 else dataset.pixel_array
    except (AttributeError, ValueError, RuntimeError, NotImplementedError) as exc:
        what = getattr(syntax, "name", "this encoding")
        raise ImageError(
            f"The DICOM file {filename!r} could not be decoded ({what}); the file may be damaged or use an "
            "encoding this system cannot read."
        ) from exc
    if dataset.get("SamplesPerPixel", 1) == 1:
        grey = window_to_8bit(pixels, dataset)
        image = PILImage.fromarray(grey, mode="L").convert("RGB")
    else:
        bits = int(dataset.get("BitsStored") or 8)
        rgb = pixels >> (bits - 8) if bits > 8 else pixels  # 16-bit colour: keep the high byte
        image = PILImage.fromarray(rgb.astype("uint8")).convert("RGB")
    image.format = "PNG"
    return image


def window_to_8bit(pixels: Any, dataset: Any) -> Any:
    """Grey levels for display, in the DICOM order: the modality LUT first (stored values → HU for CT, via
    rescale slope/intercept or a Modality LUT Sequence), then the VOI transform (the file's first window
    centre/width, applied in HU; or its VOI LUT), then 8 bits. Without a window the full range is shown.
    MONOCHROME1 (inverted grey levels) is flipped."""
    import numpy as np
    from pydicom.pixels import apply_modality_lut, apply_voi_lut

    values = np.asarray(apply_modality_lut(pixels, dataset), dtype="float64")
    center, width = _first(dataset.get("WindowCenter")), _first(dataset.get("WindowWidth"))
    if center is not None and width is not None and width > 0 and "VOILUTSequence" not in dataset:
        low, high = center - width / 2, center + width / 2
        scaled = np.clip((values - low) / (high - low), 0.0, 1.0) * 255.0
    else:
        if "VOILUTSequence" in dataset:
            values = np.asarray(apply_voi_lut(values, dataset), dtype="float64")
        low, high = float(values.min()), float(values.max())
        scaled = (values - low) / (high - low) * 255.0 if high > low else np.zeros_like(values)
    if dataset.get("PhotometricInterpretation") == "MONOCHROME1":
        scaled = 255.0 - scaled  # MONOCHROME1 stores inverted grey levels
    return np.rint(scaled).astype("uint8")


def _first(value: Any) -> float | None:
    """A window value (DS, possibly multi-valued: the first is the file's default)."""
    if value is None or value == "":
        return None
    if isinstance(value, (list, tuple)) or type(value).__name__ == "MultiValue":
        value = value[0] if len(value) else None
    return float(value) if value is not None else None

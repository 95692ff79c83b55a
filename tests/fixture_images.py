"""Images made for tests: a "decompression bomb" PNG (huge dimensions, tiny file) written without ever
holding its pixels, and a synthetic CT slice with a known rescale intercept and window."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def bomb_png(width: int, height: int) -> bytes:
    """A valid 1-bit greyscale PNG of ``width``×``height`` black pixels: ~200 kB at 14000×14000, which
    decodes to ~600 MB as RGB. Rows are compressed one by one, so building it needs almost no memory."""
    row = b"\x00" + b"\x00" * ((width + 7) // 8)  # filter byte + packed bits
    compressor = zlib.compressobj(9)
    parts = [compressor.compress(row) for _ in range(height)]
    parts.append(compressor.flush())
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", b"".join(parts)) + _chunk(b"IEND", b"")


def noise_png(width: int, height: int, seed: int = 0) -> bytes:
    """An RGB PNG of random pixels (does not compress: the file is about 3 bytes per pixel)."""
    from PIL import Image

    pixels = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


#: Stored values of the synthetic CT's four quadrants and their Hounsfield units (intercept -1024).
CT_QUADRANTS = {"air": (0, -1024), "water": (1024, 0), "soft tissue": (1064, 40), "bone": (2024, 1000)}


def synthetic_ct(window: tuple[float, float] = (40.0, 400.0)) -> bytes:
    """A 64×64 CT slice (signed 16-bit, rescale slope 1, intercept -1024) with a soft-tissue window
    (centre 40 HU, width 400 HU): air, water, soft tissue and bone in its four quadrants."""
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.uid import CTImageStorage, ExplicitVRLittleEndian, generate_uid

    stored = np.zeros((64, 64), dtype=np.int16)
    (air, _), (water, _), (tissue, _), (bone, _) = CT_QUADRANTS.values()
    stored[:32, :32], stored[:32, 32:], stored[32:, :32], stored[32:, 32:] = air, water, tissue, bone
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = CTImageStorage
    meta.MediaStorageSOPInstanceUID = generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta = meta
    ds.SOPClassUID, ds.SOPInstanceUID, ds.Modality = CTImageStorage, meta.MediaStorageSOPInstanceUID, "CT"
    ds.Rows, ds.Columns, ds.SamplesPerPixel, ds.PhotometricInterpretation = 64, 64, 1, "MONOCHROME2"
    ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 16, 15, 1
    ds.RescaleSlope, ds.RescaleIntercept, ds.RescaleType = 1, -1024, "HU"
    ds.WindowCenter, ds.WindowWidth = window
    ds.PixelData = stored.tobytes()
    buffer = io.BytesIO()
    ds.save_as(buffer, enforce_file_format=True)
    return buffer.getvalue()

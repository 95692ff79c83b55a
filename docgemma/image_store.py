"""A bounded store of uploaded images on disk, so that conversation state carries a small reference
(:class:`ImageRef`) instead of the image bytes (which LangGraph would otherwise write into the SQLite
checkpoint on every turn, for ever).

An upload is decoded once, with every limit (bytes and pixels, checked from the header before decoding):
:func:`decode_upload` (the page's preview) and :func:`decode_ref` (INPUT_ASSEMBLY, then the image tool) share
the decoded image, or the refusal, for the same content and limits.

Files are named by the SHA-256 of their content (the same upload is stored once). The store keeps at most
``max_files`` files and ``max_total_bytes`` bytes: the least recently used are deleted first. An upload over
``max_file_bytes`` is never written; its reference carries the error instead, shown to the clinician.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from docgemma.images import ImageError, decode_image, size_error
from docgemma.private_files import private_folder

if TYPE_CHECKING:
    from PIL.Image import Image

#: How many decoded uploads are kept (an image of at most 2048 px a side is at most 12 MB decoded).
DECODED_KEPT = 4
_decoded: OrderedDict[tuple[str, str, int, int], Image | ImageError] = OrderedDict()
_decoded_lock = threading.Lock()


class ImageRef(TypedDict):
    """An upload as the conversation state holds it: where its bytes are, or why they were refused."""

    filename: str
    size: int
    sha256: str
    path: str
    error: str | None


class ImageStore:
    """Content-addressed image files under ``root``, bounded in count and total size."""

    def __init__(self, root: Path, *, max_file_bytes: int, max_total_bytes: int = 1 << 30, max_files: int = 500) -> None:
        self.root = Path(root)
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max(max_total_bytes, max_file_bytes)
        self.max_files = max(max_files, 1)

    def put(self, filename: str, data: bytes) -> ImageRef:
        """Store ``data`` (or refuse it when too large) and return its reference."""
        if len(data) > self.max_file_bytes:
            return ImageRef(filename=filename, size=len(data), sha256="", path="",
                            error=size_error(filename, len(data), self.max_file_bytes))
        digest = hashlib.sha256(data).hexdigest()
        private_folder(self.root)  # uploaded images are patient data
        path = self.root / digest
        if path.exists():
            path.touch()  # recently used: evicted last
        else:
            # Written under a temporary name and renamed, so a reader never sees half a file.
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".upload-")
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        self.cleanup(keep=path)
        return ImageRef(filename=filename, size=len(data), sha256=digest, path=str(path), error=None)

    def cleanup(self, keep: Path | None = None) -> int:
        """Delete the least recently used files until the store is within its bounds; returns how many."""
        if not self.root.is_dir():
            return 0
        files = []
        for entry in os.scandir(self.root):
            if entry.is_file() and not entry.name.startswith("."):
                stat = entry.stat()
                files.append((stat.st_mtime, stat.st_size, Path(entry.path)))
        files.sort()
        total = sum(size for _, size, _ in files)
        count, removed = len(files), 0
        for _, size, path in files:
            if total <= self.max_total_bytes and count <= self.max_files:
                break
            if path == keep:
                continue
            path.unlink(missing_ok=True)
            total, count, removed = total - size, count - 1, removed + 1
        return removed

    def usage(self) -> tuple[int, int]:
        """(files, bytes) currently stored."""
        if not self.root.is_dir():
            return 0, 0
        sizes = [p.stat().st_size for p in self.root.iterdir() if p.is_file() and not p.name.startswith(".")]
        return len(sizes), sum(sizes)


def load_image_bytes(ref: ImageRef) -> bytes:
    """The bytes of a stored upload; :class:`ImageError` when it was refused, has been cleaned up since,
    or no longer matches its hash."""
    legacy = ref.get("data")
    if isinstance(legacy, bytes):
        return legacy  # a thread checkpointed before the store existed held the bytes themselves
    if ref.get("error"):
        raise ImageError(str(ref["error"]))
    try:
        data = Path(ref["path"]).read_bytes()
    except OSError as exc:
        raise ImageError(
            f"The image {ref['filename']!r} is no longer available (old uploads are cleaned up); please attach it again."
        ) from exc
    if hashlib.sha256(data).hexdigest() != ref["sha256"]:
        raise ImageError(f"The stored copy of {ref['filename']!r} has changed; please attach it again.")
    return data


def _decoded_once(key: tuple[str, str, int, int], read: Callable[[], bytes]) -> Image:
    """The image (or the refusal) decoded for ``key`` (content hash, file name, limits); decoded from ``read()``
    only when no decode of it is kept."""
    with _decoded_lock:
        found = _decoded.get(key)
        if found is not None:
            _decoded.move_to_end(key)
    if found is None:
        _, filename, max_bytes, max_pixels = key
        data = read()  # a file gone or changed is not kept as this content's refusal
        try:
            found = decode_image(filename, data, max_bytes, max_pixels)
        except ImageError as refused:
            found = refused
        with _decoded_lock:
            _decoded[key] = found
            while len(_decoded) > DECODED_KEPT:
                _decoded.popitem(last=False)
    if isinstance(found, ImageError):
        raise found
    return found


def decode_upload(filename: str, data: bytes, max_bytes: int, max_pixels: int) -> Image:
    """An upload's bytes decoded with every limit (see :func:`~docgemma.images.decode_image`), once for the same
    content and limits: the turn that stores these bytes reuses the image (or the refusal)."""
    return _decoded_once((hashlib.sha256(data).hexdigest(), filename, max_bytes, max_pixels), lambda: data)


def decode_ref(ref: ImageRef, max_bytes: int, max_pixels: int) -> Image:
    """A stored upload decoded with every limit, once for the same content and limits: the image tool gets the
    image INPUT_ASSEMBLY decoded, not a second decode. :class:`ImageError` says why it cannot be used."""
    if ref.get("error") or not ref.get("sha256"):  # refused at the door, or a legacy reference holding bytes
        data = load_image_bytes(ref)
        return _decoded_once((hashlib.sha256(data).hexdigest(), ref["filename"], max_bytes, max_pixels),
                             lambda: data)
    return _decoded_once((ref["sha256"], ref["filename"], max_bytes, max_pixels), lambda: load_image_bytes(ref))

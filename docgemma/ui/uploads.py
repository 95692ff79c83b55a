"""Which files a browser (or an API client) may make the app open: only those Gradio itself stored, in its
upload folder, and the app's own files (the bounded image store, the chat's previews).

A client names a file by its path (Gradio's ``FileData``). Gradio checks that such a path lies in its upload
folder only once ``Blocks.launch`` has run (``Blocks.has_launched``); mounted on our FastAPI app
(``gr.mount_gradio_app``) the check returned early, Gradio copied whatever path the client named into its cache
and the handler opened it — a mode 600 ``.png`` elsewhere on disk came back as a chat image. So three checks,
each enough alone:

* :class:`UploadGate`, around the app in both ways of serving it: a request to Gradio's API whose JSON names a
  file outside the upload folder is refused before Gradio reads (or copies) anything;
* Gradio's own check, turned on for a mounted app (:func:`enable_gradio_check`);
* the handlers' (:func:`checked_path`, :func:`safe_history`) before they open a file or hand a history back.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: The chat's line for a file the page did not upload.
REFUSED = ("That file was not uploaded through this page, so it was not opened: nothing was sent. "
           "Attach the image again with the paperclip.")
#: What a history message naming a foreign file becomes.
FOREIGN = "*(a file that was not uploaded through this page, not shown)*"


class UploadRefused(ValueError):
    """A client named a file outside the folders it may name."""


def gradio_upload_folder() -> Path:
    """Gradio's upload and cache folder (``GRADIO_TEMP_DIR``, else ``<tmp>/gradio``), as Gradio computes it."""
    from gradio.utils import get_upload_folder

    return Path(get_upload_folder())


def allowed_roots(*extra: Path | str | None) -> tuple[Path, ...]:
    """Gradio's upload folder and ``extra`` folders (the image store, the previews), symlinks resolved."""
    roots = [gradio_upload_folder(), *(Path(e) for e in extra if e)]
    return tuple(Path(os.path.realpath(r)) for r in roots)


def inside(path: str | Path, roots: Iterable[Path]) -> bool:
    """True when ``path``, symlinks and ``..`` resolved, lies in one of ``roots``."""
    try:
        real = Path(os.path.realpath(path))
    except (OSError, ValueError):  # a NUL byte, a loop of links
        return False
    return any(real == root or real.is_relative_to(root) for root in roots)


def checked_path(path: str | Path, roots: Iterable[Path]) -> Path:
    """``path`` as a :class:`Path` when a client may name it; :class:`UploadRefused` otherwise (before anything
    opens or even stats it)."""
    if not str(path) or not inside(path, roots):
        # The path itself is not logged: a file name can carry a patient's name.
        log.warning("refused a client file path outside the upload folder")
        raise UploadRefused(REFUSED)
    return Path(path)


def _paths(value: Any) -> Iterable[str]:
    """Every ``path`` a chat message's content names (Gradio's message shapes: a FileData dict, a list of
    content parts, ``{"file": FileData}``)."""
    if isinstance(value, dict):
        if isinstance(value.get("path"), str):
            yield value["path"]
        for key in ("file", "content", "value"):
            if key in value:
                yield from _paths(value[key])
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _paths(item)


def safe_history(history: Iterable[Any], roots: Iterable[Path]) -> list[Any]:
    """The chat history a client sent, with every message that names a file outside ``roots`` replaced by a
    note: the handler returns the history, and Gradio would copy any file it names into its cache and serve it."""
    roots = tuple(roots)
    cleaned: list[Any] = []
    for message in history or []:
        content = message.get("content") if isinstance(message, dict) else message
        if any(not inside(p, roots) for p in _paths(content)):
            log.warning("dropped a chat message naming a file outside the upload folder")
            cleaned.append({"role": message.get("role", "user") if isinstance(message, dict) else "user",
                            "content": FOREIGN})
        else:
            cleaned.append(message)
    return cleaned


def enable_gradio_check(demo: Any) -> None:
    """Turn on Gradio's own check that a client's file lies in its upload folder for an app served without
    ``Blocks.launch`` (``gr.mount_gradio_app``): Gradio runs it only when ``has_launched`` is set, and that
    flag gates nothing else (gradio 6: ``processing_utils._check_allowed`` is its one reader)."""
    demo.has_launched = True


Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]
#: The largest API request body the gate reads (a long conversation's history is well under this).
MAX_BODY = 32 * 1024 * 1024


def _file_paths(value: Any) -> Iterable[str]:
    """Every ``path`` of a dict anywhere in a request's JSON: a Gradio ``FileData``, also one without its
    ``meta`` (a component's model still reads it as a file, and Gradio's own check then never sees it)."""
    if isinstance(value, dict):
        if isinstance(value.get("path"), str):
            yield value["path"]
        for item in value.values():
            yield from _file_paths(item)
    elif isinstance(value, list):
        for item in value:
            yield from _file_paths(item)


class UploadGate:
    """ASGI middleware: a POST to Gradio's API (``/gradio_api/…`` but the upload itself) whose JSON names a file
    outside ``roots`` (Gradio's upload folder by default) is answered 400 before Gradio sees it."""

    def __init__(self, app: Asgi, roots: Iterable[Path] | None = None) -> None:
        self.app = app
        self.roots = tuple(roots) if roots is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if (scope["type"] != "http" or scope.get("method") != "POST" or "/gradio_api/" not in path
                or path.rstrip("/").endswith("/upload")):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY:
                await _refuse(send, 413, "request too large")
                return
            chunks.append(chunk)
            more = bool(message.get("more_body"))
        body = b"".join(chunks)
        if self._foreign(body):
            log.warning("refused an API request naming a file outside the upload folder")
            await _refuse(send, 400, REFUSED)
            return
        await self.app(scope, replay_body(body, receive), send)

    def _foreign(self, body: bytes) -> bool:
        # The decoded JSON, never the raw bytes: a key written "\u0070ath" is "path" once parsed (and Gradio
        # parses it), so a byte search for '"path"' let such a request through to Gradio.
        try:
            data = json.loads(body)
        except ValueError:
            return False  # not JSON: Gradio refuses it itself (its parser is as strict as this one)
        roots = self.roots if self.roots is not None else allowed_roots()
        return any(not inside(p, roots) for p in _file_paths(data))


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands ``body`` (already read by a gate) on once, then waits on the client's (for its
    disconnect): the upload gate and the login gate both read a body before the app does."""
    replayed = False

    async def replay() -> MutableMapping[str, Any]:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay

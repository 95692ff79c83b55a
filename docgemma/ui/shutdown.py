"""A prompt, quiet stop for the web server.

At SIGTERM (an orchestrator stopping a replica, a Space restarting) or Ctrl-C, the server-sent event streams
a browser keeps open — Gradio's session heartbeat for as long as the page is open, a turn's streamed answer —
are ended at once, other requests get a short grace period, and the process exits 0 without a traceback.

Without this the server waits for every open connection: a page left open holds its heartbeat stream for
ever, so a stop took the whole graceful timeout and then printed the cancelled streams' tracebacks. A turn cut
off this way ends as it would if the process died: its message was kept when sent, and the page reloaded (on
this process restarted, or another replica) shows it as interrupted, with Send again.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]

#: Seconds ordinary requests (an upload, a page load) may take to finish once a stop was asked for.
GRACE_S = 3
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopSignal:
    """Set once from any thread (a signal handler included), awaited in the server's event loop."""

    def __init__(self) -> None:
        self.is_set = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event: asyncio.Event | None = None

    def set(self) -> None:
        self.is_set = True
        loop, event = self._loop, self._event
        if loop is not None and event is not None:
            loop.call_soon_threadsafe(event.set)  # thread-safe, and wakes the loop

    async def wait(self) -> None:
        if self._event is None:
            self._event = asyncio.Event()
            self._loop = asyncio.get_running_loop()
            if self.is_set:  # set before the loop was known
                self._event.set()
        await self._event.wait()


class EndStreamsOnStop:
    """ASGI middleware: once ``stop`` is set, a response that streams server-sent events is ended (its handler
    cancelled, the HTTP response closed properly), so the server does not wait for it."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Any], stop: StopSignal) -> None:
        self.app = app
        self.stop = stop

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = {"events": False, "complete": False}

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["events"] = any(k.lower() == b"content-type" and v.startswith(b"text/event-stream")
                                      for k, v in message.get("headers", []))
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                state["complete"] = True
            await send(message)

        handler = asyncio.ensure_future(self.app(scope, receive, watched))
        stopped = asyncio.ensure_future(self.stop.wait())
        try:
            await asyncio.wait({handler, stopped}, return_when=asyncio.FIRST_COMPLETED)
            while not handler.done():  # a stop was asked for: streams end now, the rest may finish
                if state["events"]:
                    handler.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await handler
                    if not state["complete"]:
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return
                await asyncio.wait({handler}, timeout=0.1)
            handler.result()  # the handler's own exception, if any, as without this middleware
        finally:
            stopped.cancel()
            if not handler.done():  # this request itself was cancelled (the server's grace period ran out)
                handler.cancel()


@contextlib.contextmanager
def stop_on_signals(on_stop: Callable[[], None]) -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT call ``on_stop`` instead of killing the process or raising
    KeyboardInterrupt; the previous handlers come back afterwards. Main thread only (as Python requires).

    uvicorn installs its own handlers while it serves and, after its graceful shutdown, re-sends the signal to
    the handler it found: that is this one, so the process then returns normally (exit 0) instead of dying of
    the signal."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        on_stop()

    previous = {sig: signal.signal(sig, handler) for sig in _STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)

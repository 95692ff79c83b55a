"""TOOL_EXECUTE over MCP (``DOCGEMMA_TOOL_TRANSPORT=mcp``): registry tools called through an MCP client.

One session is kept open on a background event loop (a stdio subprocess of ``python -m docgemma mcp`` with
this interpreter, or a streamable-HTTP URL); calls from the graph's threads are scheduled onto it. The
subprocess finds the package as any ``python -m`` does: installed (``pip install -e .``), or from the
current directory when run from a checkout's root (as the tests and ``app.py`` are).

An approved write carries its approval (the card's identity, the override reason, the approver, the conversation)
signed with the approval key (:mod:`docgemma.tools.mcp_approval`): the server writes nothing without it. The stdio
server this client starts gets a fresh key; an HTTP server's is the deployer's ``DOCGEMMA_MCP_APPROVAL_KEY``.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
import threading
from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel

from docgemma.tools.mcp_approval import META_KEY, signed_approval
from docgemma.tools.outcome import ToolOutcome, failure
from docgemma.tools.spec import Executor, ToolContext

CALL_TIMEOUT_S = 30.0


class McpToolClient:
    """A persistent MCP client session. ``url=None`` starts the stdio server as a subprocess."""

    def __init__(self, url: str | None = None, env: Mapping[str, str] | None = None, allow_writes: bool = True,
                 token: str | None = None, approval_key: str | None = None) -> None:
        self.url = url
        self.token = token
        self.allow_writes = allow_writes
        # The stdio server is ours: it gets a fresh key, known to no other process, to check our approvals with.
        self.approval_key = approval_key or (secrets.token_urlsafe(32) if url is None and allow_writes else None)
        self.env = dict(env or {})
        if url is None and self.approval_key:
            self.env["DOCGEMMA_MCP_APPROVAL_KEY"] = self.approval_key
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._session: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="docgemma-mcp", daemon=True)
        self._thread.start()
        self._main_future = asyncio.run_coroutine_threadsafe(self._main(), self._loop)
        if not self._ready.wait(60) or self._error is not None:
            raise RuntimeError(f"MCP tool server did not start: {self._error!r}")

    async def _main(self) -> None:
        from contextlib import AsyncExitStack

        from mcp import ClientSession

        self._stop = asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                if self.url:
                    from mcp.client.streamable_http import streamable_http_client
                    from mcp.shared._httpx_utils import create_mcp_http_client

                    # A server beyond loopback requires its bearer token (docgemma.exposure).
                    headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
                    http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
                    transport = streamable_http_client(self.url, http_client=http)
                else:
                    from mcp.client.stdio import StdioServerParameters, stdio_client

                    args = ["-m", "docgemma", "mcp", "--transport", "stdio"] + (["--allow-writes"] if self.allow_writes else [])
                    transport = stdio_client(StdioServerParameters(command=sys.executable, args=args, env=self.env))
                streams = await stack.enter_async_context(transport)
                session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
                await session.initialize()
                self._session = session
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:  # noqa: BLE001 — reported to the constructor, which raises it
            self._error = exc
            self._ready.set()

    def list_tools(self) -> list[Any]:
        """The server's tools (name, description, inputSchema)."""
        return list(self._run(self._session.list_tools()).tools)

    def call(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> ToolOutcome:
        """Call a tool (``meta``: the request's ``_meta``); transport failures become ``service_unavailable``."""
        try:
            result = self._run(self._session.call_tool(name, arguments, meta=meta))
        except (TimeoutError, ConnectionError, OSError, RuntimeError):
            return failure("service_unavailable")
        if result.is_error:
            return failure("server_error")
        structured = result.structured_content
        if structured is None and result.content:  # a server without structured output: its JSON text
            try:
                structured = json.loads(result.content[0].text)
            except (json.JSONDecodeError, AttributeError):
                return failure("invalid_response")
        if not isinstance(structured, dict) or structured.get("status") not in ("success", "error"):
            return failure("invalid_response")
        return cast(ToolOutcome, structured)

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(CALL_TIMEOUT_S)

    def executor(self, name: str) -> Executor:
        """An executor that calls ``name`` through this client."""

        def run(args: BaseModel, context: ToolContext) -> ToolOutcome:
            # The context travels with the call (it was dropped: every write was keyed by patient and tool alone).
            meta = ({META_KEY: signed_approval(self.approval_key, name, args.model_dump(), context)}
                    if context.scope and self.approval_key else None)
            return self.call(name, args.model_dump(exclude_none=True), meta)

        return run

    def close(self) -> None:
        """End the session (and the subprocess)."""
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        try:
            self._main_future.result(10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)

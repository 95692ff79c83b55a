"""The tool registry served over MCP (official ``mcp`` SDK): ``python -m docgemma mcp --transport stdio|http``.

Every registry tool is listed with its name, full description and the JSON schema of its argument model,
and answers with the tool's outcome as structured content (output schema: :class:`~docgemma.tools.outcome.ToolOutcome`,
``{"status": ..., "data" | "error_type": ...}``; the same JSON as text for older clients), the same value
TOOL_EXECUTE gets in-process. Record tools are marked closed-world (``openWorldHint=False``); the knowledge
tools query public sources (open world).

Write tools are left out unless the deployer turns writes on (:mod:`docgemma.tools.mcp_writes`): with
``allow_writes`` a write needs the app's signed approval of exactly its arguments (the agent's MCP client mode,
whose clinician approved the card); with ``unattended`` a client writes without one, over HTTP behind a token
only, logged, and any severe finding refuses it. Both run the record's write checks again before writing. The
image tool is listed but answers ``no_image`` here: it needs the conversation's image and model, which live in
the app.

Over HTTP the record's tools hand out patient data, so the server follows the record's own exposure policy
(:mod:`docgemma.exposure`, as ``ehr serve``): loopback by default, any other address only with a bearer token
(``DOCGEMMA_MCP_TOKEN``), and with a token set every request must carry it.
"""

from __future__ import annotations

import inspect
import logging
from typing import TYPE_CHECKING, Annotated, Any

from docgemma.browser_guard import BrowserGuard, served_names
from docgemma.config import ConfigError
from docgemma.exposure import MIN_TOKEN_CHARS, BearerGate
from docgemma.exposure import check_exposure as _check_exposure
from docgemma.tools.mcp_approval import MIN_KEY_CHARS
from docgemma.tools.mcp_writes import WriteGuard
from docgemma.tools.outcome import ToolOutcome, failure
from docgemma.tools.review_types import WriteCheck
from docgemma.tools.spec import ToolContext, ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def _tool_function(spec: ToolSpec, guard: WriteGuard | None) -> Any:
    """A function whose signature is the tool's argument model, so the SDK publishes that schema. A write tool's
    also takes the SDK's request context (not published): its ``_meta`` carries the clinician's approval."""
    from mcp.server.mcpserver import Context

    def call(ctx: Context, **kwargs: Any) -> ToolOutcome:
        args = spec.args_model.model_validate(kwargs)
        if spec.writes:
            if guard is None:  # not listed without a guard; a call by name is refused all the same
                return failure("not_configured")
            return guard.run(spec, args, ctx.request_context.meta)
        return spec.run(args, ToolContext())

    # Every field is taken, the ones code fills (``NOT_WRITTEN``: the unread words, the entry a card was built on)
    # included, so the app's signed arguments arrive whole (the SDK drops a keyword its signature lacks, and the
    # signature check then refused the call); those are still left out of the published schema (``SkipJsonSchema``).
    parameters = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)] + [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[info.annotation, info],
                          default=inspect.Parameter.empty if info.is_required() else info.default)
        for name, info in spec.args_model.model_fields.items()
    ]
    call.__signature__ = inspect.Signature(parameters, return_annotation=ToolOutcome)  # type: ignore[attr-defined]
    call.__annotations__ = {"ctx": Context, "return": ToolOutcome}  # how the SDK finds its context parameter
    call.__name__ = spec.name
    return call


def build_server(registry: ToolRegistry, *, guard: WriteGuard | None = None) -> MCPServer:
    """An MCP server exposing ``registry``; its write tools only with a write ``guard``."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.types import ToolAnnotations
    except ImportError as exc:
        raise ImportError("the MCP server needs the official SDK: pip install 'mcp>=2.3'") from exc
    server = MCPServer("docgemma-connect", instructions="Clinical knowledge and patient-record tools of DocGemma Connect.")
    for spec in registry:
        if spec.writes and guard is None:
            continue
        server.add_tool(
            _tool_function(spec, guard), name=spec.name, title=spec.label, description=spec.full_desc,
            annotations=ToolAnnotations(title=spec.label, read_only_hint=not spec.writes, destructive_hint=spec.updates,
                                        open_world_hint=not spec.record),
            structured_output=True,
        )
    return server


log = logging.getLogger(__name__)

TOKEN_VARIABLE = "DOCGEMMA_MCP_TOKEN"
APPROVAL_KEY_VARIABLE = "DOCGEMMA_MCP_APPROVAL_KEY"


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to serve the tools over HTTP beyond loopback without a token (``ConfigError`` naming the fix)."""
    _check_exposure(host, token, what="the tool server (it reads patient records)", variable=TOKEN_VARIABLE)


def write_guard(*, allow_writes: bool, unattended: bool, approval_key: str | None, write_check: WriteCheck | None,
                transport: str, token: str | None) -> WriteGuard | None:
    """The server's write policy from its start-up options (None: no write tools); ``ConfigError`` when a mode
    lacks what guards it."""
    if unattended:
        if transport != "http" or not token or len(token) < MIN_TOKEN_CHARS:
            raise ConfigError("--unattended-writes lets a client write with no clinician's approval: it is served "
                              f"over HTTP only, behind {TOKEN_VARIABLE} of {MIN_TOKEN_CHARS} or more characters")
        log.warning("UNATTENDED WRITES ON: MCP clients may write to the record without a clinician's approval "
                    "(every write checked; severe findings refuse it; each write logged)")
        return WriteGuard("unattended", approval_key, write_check)
    if allow_writes:
        if not approval_key or len(approval_key) < MIN_KEY_CHARS:
            raise ConfigError(f"--allow-writes needs {APPROVAL_KEY_VARIABLE} ({MIN_KEY_CHARS}+ characters): the key the "
                              "app signs each clinician-approved write with (the app sets it for the server it starts)")
        return WriteGuard("approved", approval_key, write_check)
    return None


def http_app(registry: ToolRegistry, *, host: str = "127.0.0.1", token: str | None = None,
             guard: WriteGuard | None = None, allowed_hosts: tuple[str, ...] = ()) -> Any:
    """The streamable HTTP app (``/mcp``), behind the bearer token when one is given, and behind the browser
    checks every server of ours has (``docgemma/browser_guard.py``: Host, Origin, JSON writes)."""
    app = build_server(registry, guard=guard).streamable_http_app(host=host)
    gated = BearerGate(app, token, realm="docgemma-mcp") if token else app
    return BrowserGuard(gated, served_names(host, allowed_hosts))


def serve(registry: ToolRegistry, transport: str, *, host: str = "127.0.0.1", port: int = 8765,
          guard: WriteGuard | None = None, token: str | None = None, allowed_hosts: tuple[str, ...] = ()) -> None:
    """Run until stopped: ``stdio`` or ``http`` (streamable HTTP at ``http://host:port/mcp``)."""
    if transport == "stdio":
        build_server(registry, guard=guard).run("stdio")
        return
    check_exposure(host, token)
    import uvicorn

    uvicorn.run(http_app(registry, host=host, token=token, guard=guard, allowed_hosts=allowed_hosts), host=host,
                port=port, log_level="warning")

"""The tool registry served over MCP (official ``mcp`` SDK): ``python -m docgemma mcp --transport stdio|http``.

Every registry tool is listed with its name, full description and the JSON schema of its argument model,
and answers with the tool's outcome as structured content (output schema: :class:`~docgemma.tools.outcome.ToolOutcome`,
``{"status": ..., "data" | "error_type": ...}``; the same JSON as text for older clients), the same value
TOOL_EXECUTE gets in-process. Record tools are marked closed-world (``openWorldHint=False``); the knowledge
tools query public sources (open world).

Write tools are left out unless ``allow_writes`` is set: over MCP there is no clinician to approve a write,
so only a caller that does its own approval (the agent's MCP client mode) may enable them. The image tool
is listed but answers ``no_image`` here: it needs the conversation's image and model, which live in the app.

Over HTTP the record's tools hand out patient data, so the server follows the record's own exposure policy
(:mod:`docgemma.exposure`, as ``ehr serve``): loopback by default, any other address only with a bearer token
(``DOCGEMMA_MCP_TOKEN``), and with a token set every request must carry it.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Annotated, Any

from docgemma.exposure import BearerGate
from docgemma.exposure import check_exposure as _check_exposure
from docgemma.tools.args import NOT_WRITTEN
from docgemma.tools.outcome import ToolOutcome
from docgemma.tools.spec import ToolContext, ToolRegistry, ToolSpec

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def _tool_function(spec: ToolSpec) -> Any:
    """A function whose signature is the tool's argument model, so the SDK publishes that schema."""

    def call(**kwargs: Any) -> ToolOutcome:
        args = spec.args_model.model_validate(kwargs)
        return spec.run(args, ToolContext())

    parameters = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[info.annotation, info],
                          default=inspect.Parameter.empty if info.is_required() else info.default)
        for name, info in spec.args_model.model_fields.items() if name not in NOT_WRITTEN  # code's to fill
    ]
    call.__signature__ = inspect.Signature(parameters, return_annotation=ToolOutcome)  # type: ignore[attr-defined]
    call.__name__ = spec.name
    return call


def build_server(registry: ToolRegistry, *, allow_writes: bool = False) -> MCPServer:
    """An MCP server exposing ``registry``."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.types import ToolAnnotations
    except ImportError as exc:
        raise ImportError("the MCP server needs the official SDK: pip install 'mcp>=2.3'") from exc
    server = MCPServer("docgemma-connect", instructions="Clinical knowledge and patient-record tools of DocGemma Connect.")
    for spec in registry:
        if spec.writes and not allow_writes:
            continue
        server.add_tool(
            _tool_function(spec), name=spec.name, title=spec.label, description=spec.full_desc,
            annotations=ToolAnnotations(title=spec.label, read_only_hint=not spec.writes, destructive_hint=False,
                                        open_world_hint=not spec.record),
            structured_output=True,
        )
    return server


TOKEN_VARIABLE = "DOCGEMMA_MCP_TOKEN"


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to serve the tools over HTTP beyond loopback without a token (``ConfigError`` naming the fix)."""
    _check_exposure(host, token, what="the tool server (it reads patient records)", variable=TOKEN_VARIABLE)


def http_app(registry: ToolRegistry, *, host: str = "127.0.0.1", token: str | None = None,
             allow_writes: bool = False) -> Any:
    """The streamable HTTP app (``/mcp``), behind the bearer token when one is given."""
    app = build_server(registry, allow_writes=allow_writes).streamable_http_app(host=host)
    return BearerGate(app, token, realm="docgemma-mcp") if token else app


def serve(registry: ToolRegistry, transport: str, *, host: str = "127.0.0.1", port: int = 8765,
          allow_writes: bool = False, token: str | None = None) -> None:
    """Run until stopped: ``stdio`` or ``http`` (streamable HTTP at ``http://host:port/mcp``)."""
    if transport == "stdio":
        build_server(registry, allow_writes=allow_writes).run("stdio")
        return
    check_exposure(host, token)
    import uvicorn

    uvicorn.run(http_app(registry, host=host, token=token, allow_writes=allow_writes), host=host, port=port,
                log_level="warning")

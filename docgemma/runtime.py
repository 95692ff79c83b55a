"""Builds the application from settings: model backend, tool registry (in-process or over MCP), and the
durable conversation store."""

from __future__ import annotations

import logging
import os
import sqlite3

from docgemma.agent.assistant import Assistant
from docgemma.agent.entities import DrugDictionary
from docgemma.config import Settings
from docgemma.llm import make_llm
from docgemma.tools.knowledge import knowledge_tools
from docgemma.tools.registry import ToolRegistry, default_registry

log = logging.getLogger(__name__)


def build_registry(settings: Settings, *, in_process: bool | None = None) -> ToolRegistry:
    """The ten tools with every executor available. Over MCP (``DOCGEMMA_TOOL_TRANSPORT=mcp``) the tools
    run in a ``python -m docgemma mcp`` subprocess, except image analysis, which needs the app's image
    and model and always runs here."""
    local = knowledge_tools(settings).bind(default_registry())
    if in_process or (in_process is None and settings.tool_transport == "inprocess"):
        return local
    from docgemma.tools.mcp_client import McpToolClient

    client = McpToolClient(env=dict(os.environ))
    remote = {s.name: client.executor(s.name) for s in local if s.executor is not None and not s.needs_image}
    return local.with_executors(remote)


def build_assistant(settings: Settings) -> Assistant:
    """Load the model and open the conversation store (an SQLite file under ``settings.data_dir``)."""
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError as exc:
        raise ImportError("conversation memory needs: pip install langgraph-checkpoint-sqlite") from exc
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    # One connection shared by the app's worker threads; SqliteSaver serialises access with its own lock.
    connection = sqlite3.connect(settings.checkpoint_path, check_same_thread=False)
    checkpointer = SqliteSaver(connection)
    checkpointer.setup()
    DrugDictionary.warm()
    llm = make_llm(settings)
    log.info("model: %s", llm.name)
    return Assistant(llm, build_registry(settings), checkpointer, settings)

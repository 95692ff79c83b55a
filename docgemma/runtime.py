"""Builds the application's assistant from settings: model backend, tool registry, durable checkpointer."""

from __future__ import annotations

import logging
import sqlite3

from docgemma.agent.assistant import Assistant
from docgemma.agent.entities import DrugDictionary
from docgemma.config import Settings
from docgemma.llm import make_llm
from docgemma.tools.registry import default_registry

log = logging.getLogger(__name__)


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
    return Assistant(llm, default_registry(), checkpointer, settings)

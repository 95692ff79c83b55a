"""Closed and idle page sessions are dropped: Gradio kept every session's state (a copy of the page's
configuration, ~0.5-1 MB) until 10,000 had come, so the app's memory grew with each session."""

from __future__ import annotations

import datetime

from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.ops.metrics import Metrics
from docgemma.tools.registry import default_registry
from docgemma.ui.page import build_demo
from docgemma.ui.server import build_app
from docgemma.ui.sessions import SessionReaper
from docgemma.workspace import Workspace


def test_closed_and_idle_sessions_are_dropped_open_ones_kept() -> None:
    demo = build_demo(Workspace(Assistant(demo_llm(), default_registry(), settings=Settings()), None), "Demo rules · CPU")
    build_app(demo, None, Metrics())  # type: ignore[arg-type]  # Gradio's app: its session store
    holder = demo.state_holder
    now = datetime.datetime.now()
    for sid in ("open-recent", "closed-recent", "closed-old", "open-idle"):
        holder[sid]  # Gradio creates a session's state on first use
    holder.session_data["closed-recent"].is_closed = True
    holder.session_data["closed-old"].is_closed = True
    holder.time_last_used["closed-old"] = now - datetime.timedelta(seconds=300)
    holder.time_last_used["open-idle"] = now - datetime.timedelta(hours=5)
    reaper = SessionReaper(demo, closed_s=120, idle_s=4 * 3600)
    assert reaper.sweep(now) == 2
    assert set(holder.session_data) == {"open-recent", "closed-recent"}
    assert set(holder.time_last_used) == {"open-recent", "closed-recent"}
    assert Settings.from_env({"DOCGEMMA_SESSION_CLOSED_S": "30"}).session_closed_s == 30

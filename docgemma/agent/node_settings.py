"""Per-node temperature and token caps, in one table (the figures behind them: docs/design-notes.md).

T=0.0 for every operational node (thinking tokens and parse errors appear above it), T=0.5 for synthesis
(the peak fact rate), 256 synthesis tokens (better than 512)."""

from __future__ import annotations

from docgemma.llm.base import NodeConfig
from docgemma.tools.imaging import IMAGE_TOOL_CONFIG

__all__ = ["HISTORY_TURNS", "MAX_RETRIES", "MAX_STEPS", "MAX_TOTAL_RETRIES", "NODE_CONFIG", "NodeConfig"]

NODE_CONFIG: dict[str, NodeConfig] = {
    "image_analysis": NodeConfig(0.3, 512),
    # The image tool's own setting, kept with the tool (tools/imaging.py); listed here to show the whole table.
    "image_tool": IMAGE_TOOL_CONFIG,
    "intent_classify": NodeConfig(0.0, 256),
    "tool_select_stage1": NodeConfig(0.0, 64),
    # Stage 2 default; a tool with longer arguments (a clinical note) sets ToolSpec.arg_max_tokens.
    "tool_select_stage2": NodeConfig(0.0, 128),
    "result_classify": NodeConfig(0.0, 128),
    "error_retry": NodeConfig(0.0, 64),
    "synthesize": NodeConfig(0.5, 256),
}

MAX_STEPS = 4
MAX_RETRIES = 2
MAX_TOTAL_RETRIES = 4
#: Conversation turns (user + assistant pairs) shown to the model: 2-4 earlier turns lift answer quality.
HISTORY_TURNS = 3

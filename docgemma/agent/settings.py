"""Per-node temperature and token caps (seed 002 §7), in one table."""

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
#: Conversation turns (user + assistant pairs) shown to the model: seed 002 §4 says 2-4.
HISTORY_TURNS = 3

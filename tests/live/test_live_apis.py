"""Smoke tests against the live public APIs. Deselected by default; run when online: pytest -m live"""

from __future__ import annotations

import pytest

from docgemma.config import Settings
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.registry import ToolContext, default_registry

pytestmark = pytest.mark.live
REGISTRY = bind_tools(default_registry(), knowledge_clients(Settings.from_env()))


@pytest.mark.parametrize(("tool", "args", "key"), [
    ("check_drug_safety", {"drug_name": "warfarin"}, "boxed_warning"),
    ("check_drug_interactions", {"drug_names": ["warfarin", "aspirin"]}, "interactions"),
    ("search_medical_literature", {"query": "SGLT2 inhibitors heart failure"}, "results"),
    ("find_clinical_trials", {"condition": "heart failure", "status": "recruiting"}, "results"),
])
def test_live(tool: str, args: dict[str, object], key: str) -> None:
    spec = REGISTRY[tool]
    out = spec.run(spec.args_model(**args), ToolContext())
    assert out["status"] == "success" and key in out["data"]

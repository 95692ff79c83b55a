"""One place per tool (issue 10 item 2, in progress): a tool's name is spelled only where the tool is defined.

The tools' own modules define them (``tools/registry.py`` with the ToolSpecs, ``tools/knowledge.py`` and
``tools/ehr_tools.py`` binding executors). The agent's deterministic rule tables still spell some names:
they are listed below as known debt, and this test fails when any other module starts spelling one, so the
list can only shrink. Flags on the ToolSpec (``writes``, ``needs_image``, ``patient_search``, ``lookup``,
``active_patient_after``, ``pre_write_check``) are how the rest of the code asks about a tool.
"""

from __future__ import annotations

import re
from pathlib import Path

from docgemma.tools.registry import default_registry

ROOT = Path(__file__).parents[2]
TOOL_MODULES = {"docgemma/tools/registry.py", "docgemma/tools/knowledge.py", "docgemma/tools/ehr_tools.py"}
#: Modules that still spell tool names (rule tables, the demo model, bench and golden fixtures): to be moved
#: onto the ToolSpecs. Do not add to this list.
KNOWN_DEBT = {
    "docgemma/agent/answer.py", "docgemma/agent/demo_llm.py", "docgemma/agent/extract.py",
    "docgemma/agent/nodes/tool_select.py", "docgemma/agent/patterns.py",
    "docgemma/agent/rules.py", "docgemma/bench.py",
}


def spelling_modules() -> set[str]:
    names = "|".join(re.escape(n) for n in default_registry().names)
    pattern = re.compile(rf"[\"']({names})[\"']")
    return {str(p.relative_to(ROOT)) for p in (ROOT / "docgemma").rglob("*.py") if pattern.search(p.read_text())}


def test_tool_names_are_spelled_only_by_the_tools_and_the_known_debt() -> None:
    assert spelling_modules() - TOOL_MODULES - KNOWN_DEBT == set()


def test_known_debt_only_shrinks() -> None:
    """A module that no longer spells a tool name must leave the list (so the list stays true)."""
    assert spelling_modules() >= KNOWN_DEBT


def test_tool_flags_replace_name_checks() -> None:
    registry = default_registry()
    assert [s.name for s in registry if s.patient_search] == ["search_patient"]
    assert {s.name for s in registry if s.active_patient_after} == {"search_patient", "get_patient_chart"}
    assert {s.name for s in registry if s.pre_write_check} == {"prescribe_medication", "add_allergy"}
    assert all(s.writes for s in registry if s.pre_write_check)
    assert {s.name for s in registry if s.lookup} == {"check_drug_safety", "check_drug_interactions",
                                                       "search_medical_literature", "find_clinical_trials"}

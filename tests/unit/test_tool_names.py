"""One place per tool: a tool's name is spelled only where the tool is defined.

Each tool's own module (``tools/catalog/<name>.py``) defines it, and is the only module that spells its name:
the registry lists the modules, and ``tools/binding.py`` binds each tool's executor as its ``SPEC`` declares. The rest of the code
asks about a tool by its flags (``writes``, ``needs_image``, ``patient_search``, ``lookup``, ``record``,
``active_patient_after``, ``pre_write_check``), its roles (``registry.first(Role.CHART)``) and the data on its
spec (task ``keywords``, ``extract``, ``example``, ``follow_up``).
"""

from __future__ import annotations

import re
from pathlib import Path

from docgemma.tools.registry import default_registry
from docgemma.tools.routing import Role

ROOT = Path(__file__).parents[2]
TOOL_MODULES = {f"docgemma/tools/catalog/{name}.py" for name in default_registry().names}


def spelling_modules(names: tuple[str, ...] | None = None) -> set[str]:
    names = names or default_registry().names
    pattern = re.compile(rf"[\"']({'|'.join(re.escape(n) for n in names)})[\"']")
    return {str(p.relative_to(ROOT)) for p in (ROOT / "docgemma").rglob("*.py") if pattern.search(p.read_text())}


def test_no_module_outside_the_tools_own_spells_a_tool_name() -> None:
    assert spelling_modules() - TOOL_MODULES == set()


def test_each_name_is_spelled_in_its_own_module_only() -> None:
    """The checker itself (the pattern matches a spelled name), and one module per tool."""
    for name in default_registry().names:
        assert spelling_modules((name,)) == {f"docgemma/tools/catalog/{name}.py"}


def test_tool_flags_replace_name_checks() -> None:
    registry = default_registry()
    assert [s.name for s in registry if s.patient_search] == ["search_patient"]
    # A search with one match, and every call about a patient's record (a read or a write for another patient's id
    # makes that patient the active one, and the page says so).
    assert {s.name for s in registry if s.active_patient_after} == \
        {s.name for s in registry if s.needs_patient or s.patient_search}
    assert {s.name for s in registry if s.pre_write_check} == {"prescribe_medication", "add_allergy",
                                                               "remove_allergy_label"}
    assert all(s.writes for s in registry if s.pre_write_check)
    assert {s.name for s in registry if s.lookup} == {"check_drug_safety", "check_drug_interactions",
                                                       "search_medical_literature", "find_clinical_trials"}


def test_roles_replace_name_lookups() -> None:
    """Each role the agent's rules ask for is played by one tool (the first one playing it)."""
    registry = default_registry()
    assert {role: getattr(registry.first(role), "name", None) for role in Role} == {
        Role.DRUG_SAFETY: "check_drug_safety", Role.INTERACTIONS: "check_drug_interactions",
        Role.CHART: "get_patient_chart", Role.RECORD_QUERY: "query_patient_data",
        Role.RECORD_HISTORY: "get_patient_timeline", Role.MEDICATION_ORDER: "prescribe_medication",
        Role.LITERATURE: "search_medical_literature", Role.CONNECTIONS: "explore_connections",
        Role.TRIALS: "find_clinical_trials", Role.ALLERGY_ENTRY: "add_allergy", Role.NOTE_ENTRY: "save_clinical_note",
        Role.ALLERGY_REMOVAL: "remove_allergy_label",
    }
    assert all(sum(role in s.roles for s in registry) == 1 for role in Role)
    assert [s.name for s in registry if s.needs_image] == ["analyze_medical_image"]

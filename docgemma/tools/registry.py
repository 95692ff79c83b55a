"""The tool registry: the single source of truth for tool names, clinical labels, prompt text and arguments.

Prompts, schemas (the ``Literal`` of tool names), the MCP server and the UI all read from here, and so do the
agent's deterministic rules: a spec carries its task keywords, its roles, its argument extractor and its
follow-up suggestions (``tools/routing.py``), so no module outside the tools layer spells a tool name. Each tool
is one module under ``tools/catalog/`` defining its ``SPEC``; :data:`CATALOG` lists them, one line per tool, in
the order prompts show them; tools of other distributions (``tools/plugins.py``) come after them in the app's
registry, :func:`installed_registry`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType

from docgemma.tools.catalog import (
    add_allergy,
    analyze_medical_image,
    check_drug_interactions,
    check_drug_safety,
    explore_connections,
    find_clinical_trials,
    get_patient_chart,
    get_patient_timeline,
    prescribe_medication,
    query_patient_data,
    remove_allergy_label,
    save_clinical_note,
    search_medical_literature,
    search_patient,
)
from docgemma.tools.plugins import installed_tools
from docgemma.tools.spec import Executor, Formatter, ToolContext, ToolRegistry, ToolSpec

__all__ = ["CATALOG", "Executor", "Formatter", "ToolContext", "ToolRegistry", "ToolSpec", "default_registry",
           "installed_registry"]

#: The tools' modules in registry order (the order of the prompts' tool list and of the golden reports).
CATALOG: tuple[ModuleType, ...] = (
    check_drug_safety,
    check_drug_interactions,
    search_medical_literature,
    find_clinical_trials,
    search_patient,
    get_patient_chart,
    query_patient_data,
    explore_connections,
    get_patient_timeline,
    prescribe_medication,
    add_allergy,
    remove_allergy_label,
    save_clinical_note,
    analyze_medical_image,
)


def default_registry(executors: Mapping[str, Executor] | None = None) -> ToolRegistry:
    """The ten v3 tools plus the three patient-data tools, with whichever executors are given."""
    registry = ToolRegistry(tuple(module.SPEC for module in CATALOG))
    return registry.with_executors(executors) if executors else registry


def installed_registry(extra: Sequence[ToolSpec] = ()) -> ToolRegistry:
    """The catalog, then the tools installed distributions name (``tools/plugins.py``), then ``extra`` (the
    assembly's own): the registry the app and the golden runner run. A name taken twice is an error."""
    return default_registry().with_tools(*installed_tools(), *extra)

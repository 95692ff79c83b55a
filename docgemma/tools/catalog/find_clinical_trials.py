"""find_clinical_trials: ClinicalTrials.gov, by condition, intervention, place, status, phase and age group."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from docgemma.tools import trial_query, trials
from docgemma.tools.args import ToolArgs
from docgemma.tools.lookup_tool import knowledge_lookup
from docgemma.tools.routing import Request, Role, TurnFacts
from docgemma.tools.spec import ToolSpec

AgeGroup = Literal["child", "adult", "older adult"]


class ClinicalTrialsArgs(ToolArgs):
    condition: str = Field(min_length=2, max_length=80, description="The disease or condition studied (no drug, "
                           "place or population words)")
    intervention: str | None = Field(default=None, max_length=80, description="Drug or treatment tested; alternatives "
                                     "joined with OR, e.g. 'belimumab OR voclosporin'")
    location: str | None = Field(default=None, max_length=60, description="City or country of a trial site")
    distance_km: int | None = Field(default=None, ge=1, le=2000, description="Only sites within this distance of the "
                                    "location (a city)")
    status: str | None = Field(default=None, max_length=80, description="Recruitment status: recruiting, not yet "
                               "recruiting, active, completed, terminated (or the API's values, e.g. RECRUITING)")
    phase: str | None = Field(default=None, max_length=20, description="e.g. 3, 2/3 (both), 2 or 3, early 1")
    age_group: AgeGroup | None = Field(default=None, description="Participants' age group")
    other_terms: str | None = Field(default=None, max_length=60, description="Other words that must match, e.g. a "
                                    "population such as 'immunocompromised'")


def trial_search(request: Request) -> dict[str, Any]:
    """``condition``, ``intervention``, ``location`` (``distance_km``), ``status``, ``phase``, ``age_group`` and
    ``other_terms`` (``tools/trial_query.py``)."""
    return trial_query.parse(request.query)


def follow_up(facts: TurnFacts) -> list[str]:
    """Trials on the topic the turn searched the literature for."""
    return ["Are there recruiting clinical trials on this topic?"] if Role.LITERATURE in facts.tried_roles else []


SPEC = ToolSpec(
    "find_clinical_trials",
    "Clinical Trials",
    "Search ClinicalTrials.gov for active, recruiting, or completed clinical trials for a "
    "specific condition or treatment, optionally near a place and by phase. Use when a clinician asks "
    "about experimental treatments, ongoing trials, or new therapies being studied.",
    ClinicalTrialsArgs,
    "Are there recruiting trials for triple-negative breast cancer?",
    arg_max_tokens=544,
    result_cap=2500,  # five trials, each with its conditions, interventions and nearest sites
    keywords=("trial", "trials", "recruiting", "experimental", "enrolling", "clinicaltrials.gov", "clinicaltrials"),
    extract=trial_search,
    model_fills=("intervention", "location", "distance_km", "status", "phase", "age_group", "other_terms"),
    follow_up=follow_up,
    **knowledge_lookup(Role.TRIALS, "trials", trials.find_clinical_trials, trials.format_trials),
)

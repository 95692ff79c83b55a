"""The tool registry: the single source of truth for tool names, clinical labels, prompt text and arguments.

Prompts, schemas (the ``Literal`` of tool names), the MCP server and the UI all read from here, and so do the
agent's deterministic rules: a spec carries its task keywords, its roles, its argument extractor and its
follow-up suggestions (``tools/routing.py``), so no module outside the tools layer spells a tool name. A tool
whose executor is not configured stays visible to the model (so routing is measured honestly) and returns
a ``not_configured`` error that flows through the error path.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from types import UnionType
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin

from pydantic import BaseModel

from docgemma.tools import args as A
from docgemma.tools import extract as X
from docgemma.tools import suggest
from docgemma.tools.active_patient import ActivePatientRule, chart_patient, record_patient, unique_match
from docgemma.tools.outcome import ToolOutcome, failure
from docgemma.tools.routing import Extractor, FollowUp, Request, Role, keyword_position
from docgemma.tools.write_checks import PreWriteCheck, allergy_check, prescription_check

if TYPE_CHECKING:
    from PIL.Image import Image

    from docgemma.llm.base import LLM

#: Words for a study: a literature search's, unless the message asks for studies that enrol patients
#: (``Role.TRIALS``).
STUDY_WORDS = ("studies", "study", "rct", "rcts")
#: Longest formatted tool result handed to a prompt (characters).
RESULT_CHAR_CAP = 1500


@dataclass(frozen=True)
class ToolContext:
    """What an executor may use besides its arguments."""

    image: Image | None = None
    llm: LLM | None = None
    #: Identifies one approved call (the pending action's id): a retried write with the same scope is a no-op.
    scope: str = ""
    #: The clinician's reason for approving a write despite a severe conflict (recorded with the write).
    override_reason: str = ""
    #: Who approved the write (the signed-in user's name; empty without a login) and in which conversation
    #: (the thread's id): both named in the write's Provenance.
    approved_by: str = ""
    conversation: str = ""


Executor = Callable[[BaseModel, ToolContext], ToolOutcome]
Formatter = Callable[[Any], str]


def compact_json(data: Any) -> str:
    """Default formatter: compact JSON (tools with richer data provide their own)."""
    return json.dumps(data, ensure_ascii=False, separators=(", ", ": "), default=str)


def _kind(annotation: Any) -> str:
    """How an argument's type is written in the tool list: list[str], int, bool or str (a choice is a str)."""
    options = [a for a in get_args(annotation) if a is not type(None)] if get_origin(annotation) in (Union, UnionType) \
        else [annotation]
    kind = options[0] if len(options) == 1 else str
    if get_origin(kind) is list:
        return "list[str]"
    return {int: "int", bool: "bool"}.get(kind, "str")


@dataclass(frozen=True)
class ToolSpec:
    """One tool: what the model is told, what the clinician sees, and how it runs."""

    name: str
    label: str
    full_desc: str
    args_model: type[BaseModel]
    example: str
    writes: bool = False
    needs_patient: bool = False
    needs_image: bool = False
    #: Reads or writes the patient record: a closed world (MCP ``openWorldHint=False``), unlike the public
    #: knowledge sources the other tools query.
    record: bool = False
    arg_max_tokens: int = 128
    #: Longest formatted result handed to a prompt (the chart summary needs more than a lookup).
    result_cap: int = RESULT_CHAR_CAP
    executor: Executor | None = None
    formatter: Formatter = compact_json
    #: Sets the conversation's active patient after a successful call (``tools/active_patient.py``).
    active_patient_after: ActivePatientRule | None = None
    #: Finds patients by name: its ``name`` argument is grounded in the message, several matches ask the clinician.
    patient_search: bool = False
    #: A knowledge lookup: a turn that used only this one tool gets the brief answer.
    lookup: bool = False
    #: A write tool's own safety review before the approval card (``tools/write_checks.py``): warnings from the
    #: patient's allergies and active orders. The patient check itself applies to every write.
    pre_write_check: PreWriteCheck | None = None
    #: Words that mean a request needs this tool (whole word, any case; code decides when the task has its tools). A write
    #: tool's words count only when the message asks for a write.
    keywords: tuple[str, ...] = ()
    #: Parts it plays in the agent's rules (``registry.first(role)``).
    roles: frozenset[Role] = frozenset()
    #: Its deterministic argument prefill (``tools/extract.py``); without one the model fills every argument.
    extract: Extractor | None = None
    #: Optional arguments the model is asked for too, whenever stage 2 asks it for a missing required one: the
    #: parts a request splits into (a trial's intervention and place besides its condition).
    model_fills: tuple[str, ...] = ()
    #: Next questions it could answer after a turn that did not call it (``tools/suggest.py``).
    follow_up: FollowUp | None = None

    def matches(self, query: str) -> bool:
        """True when ``query`` says one of the tool's keywords."""
        return self.mention(query) is not None

    def mention(self, query: str) -> int | None:
        """Where ``query`` first says one of the tool's keywords (None when it says none)."""
        return keyword_position(self.keywords, query)

    def prefill(self, request: Request) -> dict[str, Any]:
        """The arguments code can read off the request (possibly none)."""
        return self.extract(request) if self.extract else {}

    @property
    def signature(self) -> str:
        """``name(arg: type, ...)`` as written in the full_desc list."""
        parts = []
        for fname, info in self.args_model.model_fields.items():
            default = "" if info.is_required() else f" = {info.default}"
            parts.append(f"{fname}: {_kind(info.annotation)}{default}")
        return f"{self.name}({', '.join(parts)})"

    def run(self, args: BaseModel, context: ToolContext) -> ToolOutcome:
        """Execute, or report ``not_configured`` when no executor is bound."""
        if self.executor is None:
            return failure("not_configured")
        return self.executor(args, context)

    def format_result(self, data: Any) -> str:
        """``[Label]`` plus the formatted data, trimmed to ``result_cap`` characters."""
        cap = self.result_cap
        text = self.formatter(data)
        if len(text) > cap:
            text = text[: cap - 14].rstrip() + " …[truncated]"
        return f"[{self.label}]\n{text}"


@dataclass(frozen=True)
class ToolRegistry:
    """An ordered, immutable set of tools."""

    specs: tuple[ToolSpec, ...]
    _by_name: Mapping[str, ToolSpec] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {s.name: s for s in self.specs})

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self.specs)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> ToolSpec:
        return self._by_name[name]

    @property
    def names(self) -> tuple[str, ...]:
        """Tool names in registry order."""
        return tuple(s.name for s in self.specs)

    def first(self, role: Role) -> ToolSpec | None:
        """The first tool playing ``role``; None when no tool does."""
        return next((s for s in self.specs if role in s.roles), None)

    def with_tools(self, *specs: ToolSpec) -> ToolRegistry:
        """A copy with ``specs`` added after the others (a tool of a plug-in or a test); a taken name is an error."""
        names = [s.name for s in specs]
        clash = sorted({n for n in names if n in self or names.count(n) > 1})
        if clash:
            raise KeyError(f"tool name(s) registered twice: {', '.join(clash)}")
        return ToolRegistry((*self.specs, *specs))

    def label(self, name: str) -> str:
        """Clinical label of ``name``."""
        return self._by_name[name].label

    def tool_list(self) -> str:
        """The full_desc list used in TOOL_SELECT stage 1 (full descriptions beat short ones, 95% vs 80%)."""
        return "\n\n".join(f"- {s.signature} — {s.full_desc}" for s in self.specs)

    def with_pre_write_checks(self, checks: Mapping[str, PreWriteCheck]) -> ToolRegistry:
        """A copy with these write tools' pre-write checks (e.g. bound to a label-backed ingredient resolver)."""
        unknown = set(checks) - set(self.names)
        if unknown:
            raise KeyError(f"no such tool(s): {', '.join(sorted(unknown))}")
        return ToolRegistry(tuple(replace(s, pre_write_check=checks[s.name]) if s.name in checks else s
                                  for s in self.specs))

    def with_executors(self, executors: Mapping[str, Executor],
                       formatters: Mapping[str, Formatter] | None = None) -> ToolRegistry:
        """A copy with executors (and their result formatters) bound; unknown names are an error."""
        formatters = formatters or {}
        unknown = (set(executors) | set(formatters)) - set(self.names)
        if unknown:
            raise KeyError(f"no such tool(s): {', '.join(sorted(unknown))}")
        specs = []
        for spec in self.specs:
            if spec.name in executors:
                spec = replace(spec, executor=executors[spec.name])
            if spec.name in formatters:
                spec = replace(spec, formatter=formatters[spec.name])
            specs.append(spec)
        return ToolRegistry(tuple(specs))


V3_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "check_drug_safety",
        "Drug Safety Report",
        "Look up FDA boxed warnings, contraindications, and major safety alerts for a specific drug, or what "
        "its label says about pregnancy, breastfeeding, kidney or liver impairment, children, older adults, "
        "dosing or overdose. Use when a clinician asks about drug safety, warnings, or whether a drug is "
        "safe for a particular patient.",
        A.DrugSafetyArgs,
        "What are the FDA boxed warnings for amiodarone?",
        arg_max_tokens=256,
        result_cap=2400,
        lookup=True,
        keywords=(*X.SAFETY_WORDS, "black box", "black-box", "contraindications"),
        roles=frozenset({Role.DRUG_SAFETY}),
        extract=X.label_request,
        follow_up=suggest.drug_safety,
    ),
    ToolSpec(
        "check_drug_interactions",
        "Drug Interaction Check",
        "Check for known interactions between two or more drugs. Returns severity, mechanism, and "
        "clinical significance. Use when a clinician asks about combining medications or potential "
        "drug-drug interactions.",
        A.DrugInteractionArgs,
        "Can I give clarithromycin to a patient taking simvastatin?",
        arg_max_tokens=288,
        result_cap=7000,
        lookup=True,
        keywords=(*X.INTERACTION_WORDS, "ddi", "ddis", "drug-drug"),
        roles=frozenset({Role.INTERACTIONS}),
        extract=partial(X.drug_list, near=X.INTERACTION_WORDS),
        follow_up=suggest.interactions,
    ),
    ToolSpec(
        "search_medical_literature",
        "Medical Literature",
        "Search PubMed and medical literature databases for published studies, systematic reviews, "
        "and clinical evidence, optionally by study type and publication date. Use when a clinician asks "
        "about research, evidence, studies, or medical literature on a topic.",
        A.LiteratureSearchArgs,
        "Find recent studies on SGLT2 inhibitors in heart failure.",
        arg_max_tokens=320,
        lookup=True,
        keywords=(*STUDY_WORDS, "research", "evidence", "literature", "pubmed", "articles", "papers", "published",
                  "cochrane", "systematic review", "meta-analysis", "meta-analyses"),
        roles=frozenset({Role.LITERATURE}),
        extract=X.literature_search,
        model_fills=("publication_types", "since_year", "newest_first"),
        follow_up=suggest.literature,
    ),
    ToolSpec(
        "find_clinical_trials",
        "Clinical Trials",
        "Search ClinicalTrials.gov for active, recruiting, or completed clinical trials for a "
        "specific condition or treatment, optionally near a place and by phase. Use when a clinician asks "
        "about experimental treatments, ongoing trials, or new therapies being studied.",
        A.ClinicalTrialsArgs,
        "Are there recruiting trials for triple-negative breast cancer?",
        arg_max_tokens=544,
        result_cap=2500,  # five trials, each with its conditions, interventions and nearest sites
        lookup=True,
        keywords=("trial", "trials", "recruiting", "experimental", "enrolling"),
        roles=frozenset({Role.TRIALS}),
        extract=X.trial_search,
        model_fills=("intervention", "location", "distance_km", "status", "phase", "age_group", "other_terms"),
        follow_up=suggest.trials,
    ),
    ToolSpec(
        "search_patient",
        "Patient Search",
        "Search the electronic health record system for a patient by name. Returns matching patient "
        "IDs and basic demographics. Use when a clinician mentions a patient by name and needs to "
        "look them up.",
        A.PatientSearchArgs,
        "Look up patient Maria Garcia.",
        record=True,
        active_patient_after=unique_match,
        patient_search=True,
        extract=X.patient_name,
    ),
    ToolSpec(
        "get_patient_chart",
        "Patient Record",
        "Retrieve the full clinical summary for a patient, including diagnoses, medications, "
        "allergies, lab results, and vitals. Requires a patient ID (not a name). Use when a "
        "clinician wants to review a patient's record.",
        A.PatientChartArgs,
        "Show me the chart for patient abc-123.",
        needs_patient=True,
        result_cap=6500,
        record=True,
        active_patient_after=chart_patient,
        roles=frozenset({Role.CHART}),
        extract=X.patient_only,
        follow_up=suggest.chart,
    ),
    ToolSpec(
        "query_patient_data",
        "Patient Data Query",
        "Search one patient's record for specific data: lab results, vital signs, medications (current "
        "or past), conditions, procedures, immunizations, allergies or notes, optionally by name, status, "
        "category or date range. Understands concepts (e.g. 'kidney function' finds creatinine and eGFR). "
        "Use when a clinician asks for specific results, history or trends of a patient.",
        A.PatientDataQueryArgs,
        "What were her last kidney function results?",
        needs_patient=True,
        arg_max_tokens=352,
        result_cap=3000,
        record=True,
        active_patient_after=record_patient,
        roles=frozenset({Role.RECORD_QUERY}),
        extract=X.record_query,
    ),
    ToolSpec(
        "explore_connections",
        "Clinical Connections",
        "Show what is clinically connected to one item of a patient's record (a condition's treating "
        "medications and care plans, an encounter's observations and notes, what a medication was "
        "prescribed for). Requires the item's ID and type. Use when a clinician asks how findings relate.",
        A.ExploreConnectionsArgs,
        "What is connected to condition cond-123 in this patient's record?",
        needs_patient=True,
        arg_max_tokens=224,
        result_cap=3000,
        record=True,
        active_patient_after=record_patient,
        roles=frozenset({Role.CONNECTIONS}),
        extract=X.connection_item,
    ),
    ToolSpec(
        "get_patient_timeline",
        "Patient Timeline",
        "List a patient's encounters in a date range with what happened at each (diagnoses, "
        "prescriptions, results), optionally with the clinical notes. Use when a clinician asks what "
        "happened over a period or wants the visit history or previous notes.",
        A.PatientTimelineArgs,
        "What happened at her visits this year?",
        needs_patient=True,
        arg_max_tokens=192,
        result_cap=3500,
        record=True,
        active_patient_after=record_patient,
        roles=frozenset({Role.RECORD_HISTORY}),
        extract=X.timeline,
    ),
    ToolSpec(
        "prescribe_medication",
        "Prescription",
        "Create a new medication order for a patient in the EHR. Use when a clinician wants to "
        "prescribe, order, or start a medication for a specific patient.",
        A.PrescribeMedicationArgs,
        "Start lisinopril 10 mg once daily for patient abc-123.",
        writes=True,
        needs_patient=True,
        arg_max_tokens=512,
        record=True,
        active_patient_after=record_patient,
        pre_write_check=prescription_check,
        # "start" and "order" would be natural prescribe words too; they match questions ("is it safe to start X?") and would
        # force a write tool into a read-only question: an order verb counts only with a drug (MEDICATION_ORDER).
        keywords=("prescribe", "prescription"),
        roles=frozenset({Role.MEDICATION_ORDER}),
        extract=X.prescription,
    ),
    ToolSpec(
        "add_allergy",
        "Allergy Documentation",
        "Document an allergy or adverse reaction in a patient's record. Use when a clinician wants "
        "to record, document, or note an allergy.",
        A.AddAllergyArgs,
        "Record a penicillin allergy (hives) for patient abc-123.",
        writes=True,
        needs_patient=True,
        arg_max_tokens=288,
        record=True,
        active_patient_after=record_patient,
        pre_write_check=allergy_check,
        keywords=("allergy", "allergic"),
        roles=frozenset({Role.ALLERGY_ENTRY}),
        extract=X.allergy,
    ),
    ToolSpec(
        "save_clinical_note",
        "Clinical Note",
        "Save a clinical note (progress note, consult note, procedure note, etc.) to a patient's "
        "record. Use when a clinician wants to write, save, or document a clinical note.",
        A.ClinicalNoteArgs,
        "Save a progress note for patient abc-123: stable, continue current plan.",
        writes=True,
        needs_patient=True,
        arg_max_tokens=800,
        record=True,
        active_patient_after=record_patient,
        keywords=("note",),
        roles=frozenset({Role.NOTE_ENTRY}),
        extract=X.note,
    ),
    ToolSpec(
        "analyze_medical_image",
        "Image Analysis",
        "Analyze an attached medical image (X-ray, CT, MRI, histopathology slide, etc.) for findings "
        "relevant to the specified query. Use when a clinician shares a medical image and asks for "
        "analysis or interpretation.",
        A.ImageAnalysisArgs,
        "Is there a pneumothorax on this chest X-ray?",
        needs_image=True,
        extract=X.image_query,
    ),
)


def default_registry(executors: Mapping[str, Executor] | None = None) -> ToolRegistry:
    """The ten v3 tools plus the three patient-data tools, with whichever executors are given."""
    registry = ToolRegistry(V3_TOOLS)
    return registry.with_executors(executors) if executors else registry

"""check_drug_safety: a drug's FDA label warnings, or what the label says on one topic (pregnancy, kidneys…)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from docgemma.tools import label_query, openfda
from docgemma.tools.args import ToolArgs
from docgemma.tools.extract import CLAUSE_RE, LABEL_WORDS, SAFETY_WORDS, drugs_near, says
from docgemma.tools.lookup_tool import knowledge_lookup
from docgemma.tools.routing import Request, Role, about_first_drug
from docgemma.tools.spec import ToolSpec

#: What a label question is about → the label sections that answer it (``tools/label_sections.py``).
LabelTopic = Literal["pregnancy", "lactation", "renal impairment", "hepatic impairment", "children", "older adults",
                     "dosage", "overdose", "interactions"]


class DrugSafetyArgs(ToolArgs):
    drug_name: str = Field(min_length=2, max_length=60, description="Drug name, generic or brand (for a drug class "
                           "named with an example, the example)")
    topic: LabelTopic | None = Field(default=None, description="What the question is about: the label section that "
                                     "answers it is shown first; none for the general warnings")
    other_drugs: list[Annotated[str, StringConstraints(min_length=2, max_length=40)]] | None = Field(
        default=None, max_length=3, description="Further drugs the same question is asked about (each label looked up)")


#: A clause asking another tool: its topic words are not this label question's.
_OTHER_TOOL_RE = re.compile(r"\b(?:trials?|stud(?:y|ies)|literature|evidence|pubmed|interactions?|prescribe|allerg\w*|"
                            r"note|chart|record)\b", re.IGNORECASE)


def label_request(request: Request) -> dict[str, Any]:
    """``drug_name`` (and ``other_drugs``) and the ``topic`` of a label question: the drugs of the clause that
    asks about labels when a message names drugs elsewhere too; a class named with an example is the example."""
    drugs = list(request.entities["drug_mentions"])
    if len(drugs) > 1:
        drugs = drugs_near(request.query, LABEL_WORDS, drugs)
    # The topic of the clause that asks about the label; of the others only those that ask no other tool.
    clauses = [c for c in CLAUSE_RE.split(request.query) if c.strip()]
    asking = [c for c in clauses if says(c, LABEL_WORDS)] or clauses
    rest = [c for c in clauses if c not in asking and not _OTHER_TOOL_RE.search(c)]
    return label_query.parse(request.query, drugs, about=" ".join(asking + rest))


SPEC = ToolSpec(
    "check_drug_safety",
    "Drug Safety Report",
    "Look up FDA boxed warnings, contraindications, and major safety alerts for a specific drug, or what "
    "its label says about pregnancy, breastfeeding, kidney or liver impairment, children, older adults, "
    "dosing or overdose. Use when a clinician asks about drug safety, warnings, or whether a drug is "
    "safe for a particular patient.",
    DrugSafetyArgs,
    "What are the FDA boxed warnings for amiodarone?",
    arg_max_tokens=256,
    result_cap=2400,
    keywords=(*SAFETY_WORDS, "black box", "black-box", "contraindications"),
    extract=label_request,
    follow_up=about_first_drug("What are the FDA safety warnings for {drug}?"),
    **knowledge_lookup(Role.DRUG_SAFETY, "labels", openfda.check_drug_safety, openfda.format_safety),
)

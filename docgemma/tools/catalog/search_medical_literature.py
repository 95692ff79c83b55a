"""search_medical_literature: PubMed and Europe PMC, by concepts, study type and date."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from docgemma.tools import literature, literature_query
from docgemma.tools.args import ToolArgs
from docgemma.tools.extract import STUDY_WORDS
from docgemma.tools.lookup_tool import knowledge_lookup
from docgemma.tools.routing import Request, Role, about_first_drug
from docgemma.tools.spec import ToolSpec

PublicationType = Literal["meta-analysis", "systematic review", "randomized controlled trial", "guideline", "review"]


class LiteratureSearchArgs(ToolArgs):
    query: str = Field(min_length=3, max_length=110, description="The concepts searched for (drugs, conditions, "
                       "outcomes), without request words such as 'recent' or 'studies'")
    publication_types: list[PublicationType] | None = Field(
        default=None, max_length=3, description="Only these study types (PubMed [pt] filters)")
    since_year: int | None = Field(default=None, ge=1900, le=2100, description="Only articles published in or after "
                                   "this year ('recent': the last 5 years)")
    newest_first: bool = Field(default=False, description="Sort by publication date, newest first")


def literature_search(request: Request) -> dict[str, Any]:
    """``query`` (the concepts), ``publication_types``, ``since_year`` and ``newest_first``
    (``tools/literature_query.py``)."""
    return literature_query.parse(request.query)


SPEC = ToolSpec(
    "search_medical_literature",
    "Medical Literature",
    "Search PubMed and medical literature databases for published studies, systematic reviews, "
    "and clinical evidence, optionally by study type and publication date. Use when a clinician asks "
    "about research, evidence, studies, or medical literature on a topic.",
    LiteratureSearchArgs,
    "Find recent studies on SGLT2 inhibitors in heart failure.",
    arg_max_tokens=320,
    keywords=(*STUDY_WORDS, "research", "evidence", "literature", "pubmed", "articles", "papers", "published",
              "publications", "observational", "references", "lit search", "literature search",
              "cochrane", "systematic review", "meta-analysis", "meta-analyses"),
    extract=literature_search,
    model_fills=("publication_types", "since_year", "newest_first"),
    follow_up=about_first_drug("Find recent studies on {drug}"),
    **knowledge_lookup(Role.LITERATURE, "literature", literature.search_medical_literature, literature.format_articles),
)

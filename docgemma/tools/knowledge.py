"""Binds the knowledge tools (openFDA, literature, trials, imaging) to one shared HTTP client."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import httpx

from docgemma.config import Settings
from docgemma.tools import imaging, literature, openfda, trials
from docgemma.tools.http import HttpClient, hosts_of
from docgemma.tools.registry import Executor, Formatter, ToolRegistry


@dataclass
class KnowledgeTools:
    """Executors and formatters of the five knowledge tools, and the client they share."""

    http: HttpClient
    executors: dict[str, Executor]
    formatters: dict[str, Formatter]

    def bind(self, registry: ToolRegistry) -> ToolRegistry:
        """The registry with these tools bound."""
        return registry.with_executors(self.executors, self.formatters)


def knowledge_tools(settings: Settings, transport: httpx.BaseTransport | None = None) -> KnowledgeTools:
    """Build the tools; ``transport`` lets tests answer from recorded fixtures."""
    urls = (settings.openfda_url, settings.eutils_url, settings.europepmc_url, settings.ctgov_url)
    http = HttpClient(hosts_of(urls), deadline_s=settings.tool_timeout_s, transport=transport,
                      cache_max_entries=settings.http_cache_entries)
    fda = openfda.OpenFDA(http, settings.openfda_url, settings.openfda_api_key)
    lit = literature.Literature(http, settings.eutils_url, settings.europepmc_url, settings.ncbi_api_key,
                                settings.ncbi_email)
    ctgov = trials.Trials(http, settings.ctgov_url)
    return KnowledgeTools(
        http,
        executors={
            "check_drug_safety": partial(openfda.check_drug_safety, fda),
            "check_drug_interactions": partial(openfda.check_drug_interactions, fda),
            "search_medical_literature": partial(literature.search_medical_literature, lit),
            "find_clinical_trials": partial(trials.find_clinical_trials, ctgov),
            "analyze_medical_image": imaging.analyze_medical_image,
        },
        formatters={
            "check_drug_safety": openfda.format_safety,
            "check_drug_interactions": openfda.format_interactions,
            "search_medical_literature": literature.format_articles,
            "find_clinical_trials": trials.format_trials,
            "analyze_medical_image": imaging.format_analysis,
        },
    )

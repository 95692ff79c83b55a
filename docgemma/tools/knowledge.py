"""Binds the knowledge tools (openFDA, literature, trials, imaging; each in its ``tools/catalog/`` module) to
one shared HTTP client, and the write checks to an ingredient resolver that the FDA labels can confirm (the
checks themselves live with the write tools; the resolver in the ground floor cannot reach openFDA on its
own)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import httpx

from docgemma.clinical.ingredients import IngredientResolver
from docgemma.config import Settings
from docgemma.tools import interactions, literature, openfda, trials
from docgemma.tools.catalog import (
    add_allergy,
    analyze_medical_image,
    check_drug_interactions,
    check_drug_safety,
    find_clinical_trials,
    prescribe_medication,
    search_medical_literature,
)
from docgemma.tools.http import HttpClient, hosts_of
from docgemma.tools.spec import Executor, Formatter, ToolRegistry
from docgemma.tools.write_checks import PreWriteCheck


@dataclass
class KnowledgeTools:
    """Executors and formatters of the five knowledge tools, and the client they share."""

    http: HttpClient
    executors: dict[str, Executor]
    formatters: dict[str, Formatter]
    #: The ingredient resolver whose unknown products the FDA labels identify (cached per name).
    resolver: IngredientResolver | None = None
    #: The label client the prescription card reads interactions with the active orders from.
    labels: interactions.Labels | None = None

    def bind(self, registry: ToolRegistry) -> ToolRegistry:
        """The registry with these tools bound, and its write checks resolving products with the labels' help."""
        bound = registry.with_executors(self.executors, self.formatters)
        if self.resolver is None:
            return bound
        checks: dict[str, PreWriteCheck] = {
            prescribe_medication.SPEC.name: partial(prescribe_medication.prescription_check, resolver=self.resolver,
                                                    labels=self.labels),
            add_allergy.SPEC.name: partial(add_allergy.allergy_check, resolver=self.resolver),
        }
        return bound.with_pre_write_checks({k: v for k, v in checks.items() if k in bound})


def knowledge_tools(settings: Settings, transport: httpx.BaseTransport | None = None) -> KnowledgeTools:
    """Build the tools; ``transport`` lets tests answer from recorded fixtures."""
    urls = (settings.openfda_url, settings.eutils_url, settings.europepmc_url, settings.ctgov_url)
    http = HttpClient(hosts_of(urls), deadline_s=settings.tool_timeout_s, transport=transport,
                      cache_max_entries=settings.http_cache_entries)
    fda = openfda.OpenFDA(http, settings.openfda_url, settings.openfda_api_key)
    labels = interactions.Labels(http, settings.openfda_url, settings.openfda_api_key)
    lit = literature.Literature(http, settings.eutils_url, settings.europepmc_url, settings.ncbi_api_key,
                                settings.ncbi_email)
    ctgov = trials.Trials(http, settings.ctgov_url)
    built = ((check_drug_safety, check_drug_safety.executor(fda)),
             (check_drug_interactions, check_drug_interactions.executor(labels)),
             (search_medical_literature, search_medical_literature.executor(lit)),
             (find_clinical_trials, find_clinical_trials.executor(ctgov)),
             (analyze_medical_image, analyze_medical_image.EXECUTOR))
    return KnowledgeTools(
        http,
        executors={module.SPEC.name: executor for module, executor in built},
        formatters={module.SPEC.name: module.FORMATTER for module, _ in built},
        resolver=IngredientResolver(lookup=labels.facts),
        labels=labels,
    )

"""Binding the tools to what they need built at start-up, by each tool's own declaration
(:attr:`ToolSpec.binding <docgemma.tools.spec.ToolSpec.binding>`): the record, the FDA label client, the literature
and trial clients, and the ingredient resolver the write checks confirm products with. No module lists tools here:
a tool added to the registry (a catalog module, a plug-in's entry point, a test) is bound like the others."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import partial
from typing import Any

import httpx

from docgemma.clinical.ingredients import IngredientResolver
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.tools import interactions, literature, trials
from docgemma.tools.drug_labels import DrugLabels
from docgemma.tools.http import HttpClient, hosts_of
from docgemma.tools.spec import ToolRegistry, ToolSpec


@dataclass(frozen=True)
class ToolClients:
    """What the tools may need built at start-up, by the name a :class:`~docgemma.tools.spec.Binding` gives it;
    a client not built (None) leaves the tools that need it unbound (they answer ``not_configured``)."""

    #: The patient record (the record tools and the writes).
    record: Ehr | None = None
    #: The openFDA drug-label client: the drug-safety report, interactions, and the product facts the write
    #: checks confirm ingredients with.
    labels: DrugLabels | None = None
    literature: literature.Literature | None = None
    trials: trials.Trials | None = None
    #: Resolves a product's ingredients, the FDA labels identifying those the local table does not know.
    resolver: IngredientResolver | None = None
    #: The one HTTP client the knowledge clients share (closed with the app).
    http: HttpClient | None = None

    def get(self, name: str) -> Any:
        """The client ``name``; a name that is no client here is an error (a tool declaring a need nobody builds)."""
        if name not in {f.name for f in fields(self)}:
            raise KeyError(f"no start-up client named {name!r} (a tool's binding declares it)")
        return getattr(self, name)


def knowledge_clients(settings: Settings, transport: httpx.BaseTransport | None = None,
                      record: Ehr | None = None) -> ToolClients:
    """The clients of the knowledge tools on one shared HTTP client, and ``record``; ``transport`` lets tests
    answer from recorded fixtures."""
    urls = (settings.openfda_url, settings.eutils_url, settings.europepmc_url, settings.ctgov_url)
    http = HttpClient(hosts_of(urls), deadline_s=settings.tool_timeout_s, transport=transport,
                      cache_max_entries=settings.http_cache_entries)
    labels = DrugLabels(http, settings.openfda_url, settings.openfda_api_key)
    return ToolClients(
        record=record,
        labels=labels,
        literature=literature.Literature(http, settings.eutils_url, settings.europepmc_url, settings.ncbi_api_key,
                                         settings.ncbi_email),
        trials=trials.Trials(http, settings.ctgov_url),
        resolver=IngredientResolver(lookup=partial(interactions.label_facts, labels)),
        http=http,
    )


def bind_tools(registry: ToolRegistry, clients: ToolClients) -> ToolRegistry:
    """``registry`` with every tool bound as it declares: its executor and formatter built from the client it
    needs (left unbound when that client was not built) and its pre-write check given the clients it takes."""
    return ToolRegistry(tuple(_bound(spec, clients) for spec in registry))


def _bound(spec: ToolSpec, clients: ToolClients) -> ToolSpec:
    binding = spec.binding
    if binding is None:
        return spec
    taken = {name: client for name in binding.check_needs if (client := clients.get(name)) is not None}
    if taken and spec.pre_write_check is not None:
        spec = replace(spec, pre_write_check=partial(spec.pre_write_check, **taken))
    client = None if binding.needs is None else clients.get(binding.needs)
    if binding.needs is not None and client is None:
        return spec
    return replace(spec, executor=binding.executor(client), formatter=binding.formatter)

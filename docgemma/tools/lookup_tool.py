"""What every knowledge look-up declares alike, said once: a tool that answers from a public source (the FDA
labels, PubMed, ClinicalTrials.gov), plays one role in the rules, gets the brief answer when a turn used only it,
and is bound to the start-up client it needs. A catalog module spreads ``**knowledge_lookup(role, needs, run,
formatter)`` into its ``ToolSpec`` and adds only what is its own (label, description, arguments, limits, keywords,
extractor, follow-up)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from pydantic import BaseModel

from docgemma.tools.outcome import ToolOutcome
from docgemma.tools.routing import Role
from docgemma.tools.spec import Binding, Formatter, ToolContext, client_binding


class LookupSettings(TypedDict):
    """The ``ToolSpec`` fields the knowledge look-ups share (see :class:`~docgemma.tools.spec.ToolSpec`)."""

    lookup: bool
    roles: frozenset[Role]
    binding: Binding


def knowledge_lookup(role: Role, needs: str, run: Callable[[Any, BaseModel, ToolContext], ToolOutcome],
                     formatter: Formatter) -> LookupSettings:
    """A look-up playing ``role``, whose executor ``run(client, args, context)`` needs the start-up client
    ``needs`` (``"labels"``, ``"literature"``, ``"trials"``) and whose results ``formatter`` reads."""
    return LookupSettings(lookup=True, roles=frozenset({role}), binding=client_binding(needs, run, formatter))

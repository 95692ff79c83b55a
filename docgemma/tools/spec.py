"""What a tool is: :class:`ToolSpec` (what the model is told, what the clinician sees, how it runs), the
:class:`ToolContext` an executor may use, and :class:`ToolRegistry`, an ordered set of specs.

Each tool's own spec lives in its module under ``tools/catalog/``; ``tools/registry.py`` lists them in order.
A tool whose executor is not configured stays visible to the model (so routing is measured honestly) and returns
a ``not_configured`` error that flows through the error path.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from types import UnionType
from typing import TYPE_CHECKING, Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel

from docgemma.tools.active_patient import ActivePatientRule
from docgemma.tools.args import NOT_WRITTEN
from docgemma.tools.outcome import ToolOutcome, failure
from docgemma.tools.routing import Extractor, FollowUp, Request, Role, keyword_position
from docgemma.tools.write_checks import PreWriteCheck

if TYPE_CHECKING:
    from PIL.Image import Image

    from docgemma.llm.base import LLM

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
Client = TypeVar("Client")


def compact_json(data: Any) -> str:
    """Default formatter: compact JSON (tools with richer data provide their own)."""
    return json.dumps(data, ensure_ascii=False, separators=(", ", ": "), default=str)


@dataclass(frozen=True)
class Binding:
    """What a tool needs built at start-up, declared on its own spec, and how its executor is made from it.
    ``tools/binding.bind_tools`` reads the declaration where the clients are built: no table of tools elsewhere."""

    #: The start-up client its executor is built from (a field of ``tools/binding.ToolClients``: ``"record"``,
    #: ``"labels"``, ``"literature"``, ``"trials"``); None: nothing, the executor is ready as it is.
    needs: str | None
    #: Builds the executor from that client (from None when it needs nothing).
    executor: Callable[[Any], Executor]
    #: Its results as a prompt reads them, bound with the executor (an unbound tool's mocked results read as JSON).
    formatter: Formatter = compact_json
    #: The clients its pre-write check takes as keyword arguments, bound when they were built ("resolver", "labels").
    check_needs: tuple[str, ...] = ()


def client_binding(needs: str, run: Callable[[Client, BaseModel, ToolContext], ToolOutcome], formatter: Formatter,
                   check_needs: tuple[str, ...] = ()) -> Binding:
    """For a tool whose executor ``run(client, args, context)`` needs the start-up client ``needs``."""
    return Binding(needs, lambda client: partial(run, client), formatter, check_needs)


def ready_binding(executor: Executor, formatter: Formatter) -> Binding:
    """For a tool whose executor needs nothing built at start-up, but is bound there with its formatter (the
    image tool: the golden runner's registry mocks it and reads its results as JSON)."""
    return Binding(None, lambda _nothing: executor, formatter)


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
    #: Sets the conversation's active patient after a successful call (shared rule: ``tools/active_patient.py``).
    active_patient_after: ActivePatientRule | None = None
    #: Finds patients by name: its ``name`` argument is grounded in the message, several matches ask the clinician.
    patient_search: bool = False
    #: A knowledge lookup: a turn that used only this one tool gets the brief answer.
    lookup: bool = False
    #: A write tool's own safety review before the approval card (shared parts in ``tools/write_checks.py``):
    #: warnings from the patient's allergies and active orders. The patient check itself applies to every write.
    pre_write_check: PreWriteCheck | None = None
    #: Words that mean a request needs this tool (whole word, any case; code decides when the task has its tools). A write
    #: tool's words count only when the message asks for a write.
    keywords: tuple[str, ...] = ()
    #: Parts it plays in the agent's rules (``registry.first(role)``).
    roles: frozenset[Role] = frozenset()
    #: Its deterministic argument prefill (shared helpers in ``tools/extract.py``); without one the model fills
    #: every argument.
    extract: Extractor | None = None
    #: Optional arguments the model is asked for too, whenever stage 2 asks it for a missing required one: the
    #: parts a request splits into (a trial's intervention and place besides its condition).
    model_fills: tuple[str, ...] = ()
    #: Next questions it could answer after a turn that did not call it.
    follow_up: FollowUp | None = None
    #: What it needs built at start-up and how its executor is made from it (``tools/binding.bind_tools``).
    binding: Binding | None = None
    #: A write tool's FHIR resource type: where an approved write is looked up by its idempotency key.
    written: str = ""
    #: A write that changes an entry already on record (``record_tool.record_update``) rather than adding one: MCP
    #: says so (``destructiveHint``).
    updates: bool = False

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
            if fname in NOT_WRITTEN:  # code's to fill, never a model's (``tools.args.UNREAD``)
                continue
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

"""The tool families each declare what they share once: every write through ``record_tool.record_write`` (one
executor: draft, ``record_io.write``, the confirmation), every record read through ``record_read``, every
knowledge look-up through ``lookup_tool.knowledge_lookup``; a first-drug follow-up through ``about_first_drug``."""

from __future__ import annotations

from docgemma.tools.record_io import format_write
from docgemma.tools.registry import default_registry
from docgemma.tools.routing import TurnFacts, about_first_drug


def test_every_write_tool_has_the_shared_executor_confirmation_and_one_entry_role() -> None:
    writes = [s for s in default_registry() if s.writes]
    assert len(writes) == 4  # three creates (record_tool.record_write) and one update (record_tool.record_update)
    for spec in writes:
        assert spec.binding is not None and spec.binding.needs == "record"
        assert spec.binding.formatter is format_write and spec.written and len(spec.roles) == 1
        assert spec.needs_patient and spec.record and spec.active_patient_after is not None


def test_every_record_read_and_lookup_plays_one_role_and_is_bound_to_its_client() -> None:
    reads = [s for s in default_registry() if s.record and not s.writes and not s.patient_search]
    lookups = [s for s in default_registry() if s.lookup]
    assert len(reads) == 4 and len(lookups) == 4
    for spec in reads + lookups:
        assert len(spec.roles) == 1 and spec.binding is not None
    assert {s.binding.needs for s in reads if s.binding} == {"record"}
    assert {s.binding.needs for s in lookups if s.binding} == {"labels", "literature", "trials"}


def test_a_first_drug_follow_up_names_the_first_drug_and_nothing_without_one() -> None:
    ask = about_first_drug("Find recent studies on {drug}")
    assert ask(TurnFacts(("warfarin", "amiodarone"), None, frozenset())) == ["Find recent studies on warfarin"]
    assert ask(TurnFacts((), "Maria Garcia", frozenset())) == []

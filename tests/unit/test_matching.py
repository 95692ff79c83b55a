"""The one matcher for golden-format expectations: the golden runner and the experiments score alike."""

from __future__ import annotations

from docgemma.eval.experiments.suites import stage2, synthesize, tool_select
from docgemma.eval.matching import PREVIOUS_SEARCH, args_match, matches


def test_lists_compare_as_case_insensitive_sets() -> None:
    assert matches(["warfarin", "aspirin"], ["Aspirin", "WARFARIN"])
    assert not matches(["warfarin", "aspirin"], ["warfarin"])
    assert not matches(["warfarin", "aspirin"], ["warfarin", "aspirin", "ibuprofen"])  # an extra drug is another check
    assert not matches(["warfarin"], "warfarin")


def test_strings_are_substrings_with_alternatives_and_the_previous_search_is_an_id() -> None:
    assert matches("metformin|glucophage", "Glucophage XR")
    assert not matches("metformin", None)
    assert matches(PREVIOUS_SEARCH, "pat-1", previous_search="pat-1")
    assert not matches(PREVIOUS_SEARCH, "pat-2", previous_search="pat-1")
    assert matches(3, 3) and not matches(3, "3")


def test_arguments_match_when_every_expected_one_does() -> None:
    assert args_match({"drug_names": ["a", "b"]}, {"drug_names": ["B", "A"], "extra": 1})
    assert not args_match({"drug_names": ["a", "b"]}, {"drug_names": ["a", "b", "c"]})


def test_the_experiments_score_with_the_same_matcher() -> None:
    assert stage2.args_match is args_match and tool_select.args_match is args_match
    assert synthesize.matches is matches

"""The one matcher for golden-format expectations, used by the golden runner and the node-level experiments."""

from __future__ import annotations

from typing import Any

#: An expected argument value meaning "the id the session's last ``search_patient`` returned".
PREVIOUS_SEARCH = "<from_previous_search_result>"


def matches(expected: Any, produced: Any, previous_search: str | None = None) -> bool:
    """Does ``produced`` meet the expectation ``expected`` (the golden case-file contract)?

    * a string: a case-insensitive substring of ``produced``, with ``a|b`` listing alternatives (a model may say
      "warfarin sodium" for "warfarin");
    * a list: the same items as ``produced``, compared as case-insensitive sets (order free, nothing missing and
      nothing extra): an extra drug in an interaction check, or an extra term in a search, is a different
      request, so a subset does not pass. The golden runner always compared this way and the experiments' lists
      (the drug pairs of two tool-selection cases) are pairs the cases name exactly: the experiments' subset test,
      dropped here, gave the same records on every suite (rules and the demo model) and on the committed
      embedded-model runs of those two cases;
    * :data:`PREVIOUS_SEARCH`: equal to ``previous_search``;
    * anything else: equal.
    """
    if expected == PREVIOUS_SEARCH:
        return bool(produced == previous_search)
    if isinstance(expected, list):
        return isinstance(produced, list) and {str(x).lower() for x in expected} == {str(x).lower() for x in produced}
    if isinstance(expected, str):
        return isinstance(produced, str) and any(alt.lower() in produced.lower() for alt in expected.split("|"))
    return bool(expected == produced)


def args_match(expected: dict[str, Any], produced: dict[str, Any], previous_search: str | None = None) -> bool:
    """Every expected argument present in ``produced`` and matching (extra produced arguments are free)."""
    return all(matches(v, produced.get(k), previous_search) for k, v in expected.items())

"""The experiment suites, by name."""

from __future__ import annotations

from docgemma.eval.experiments.core import Suite


def all_suites() -> dict[str, Suite]:
    """Every suite (imported lazily: building them reads the registry and the datasets)."""
    from docgemma.eval.experiments.suites import anti_patterns, intent, result, retry, stage2, synthesize, tool_select

    suites = (tool_select.SUITE, intent.SUITE, stage2.SUITE, result.SUITE, retry.SUITE, anti_patterns.SUITE,
              synthesize.SUITE)
    return {s.name: s for s in suites}


SUITE_NAMES = ("tool_select", "intent_classify", "stage2_args", "result_classify", "retry_strategy", "anti_patterns",
               "synthesize")

"""The design study's figures, measured on MedGemma 4B (docs/design-notes.md), next to which each
variant's result is reported. Keys: (suite, variant[, category]). The strings are report text: the
section marks in them point into the study and are printed as they are."""

from __future__ import annotations

REFERENCE: dict[tuple[str, ...], str] = {
    ("tool_select", "full_desc_1shot"): "95% exact, 100% acceptable (§12; Part II §16)",
    ("tool_select", "short_desc"): "80% (§13; Part II §16)",
    ("tool_select", "names_only"): "> short_desc (§13: short_desc 'worse than no descriptions')",
    ("tool_select", "0shot"): "below 1-shot (§12: 1-shot matched is the sweet spot)",
    ("tool_select", "3shot"): ">3 shots = same as 0-shot (§13)",
    ("tool_select", "prefix_off"): "prefix adds +5% (§4)",
    ("tool_select", "two_stage"): "90% tool, 100% acceptable (§4; Part II §17)",
    ("tool_select", "joint"): "80% tool (§4; Part II §17)",
    ("tool_select", "joint_critical_last"): "arg accuracy 88% → 21% reversed (§12; Part II §20)",
    ("tool_select", "boolean_probe"): "25% (§12; Part II §21)",
    ("tool_select", "reason_then_select"): "55% vs 80% baseline (§12; Part II §22)",
    ("tool_select", "rule"): "(not in seed 002: this project's rules)",
    ("intent_classify", "project"): "binary intent handled well (§4; no single figure)",
    ("intent_classify", "t0.3"): "+3.2% parse errors at T=0.3 (§13; Part III §30)",
    ("intent_classify", "bare_prompt"): "domain framing helps: 9.0 vs lower (§4; Part I §4)",
    ("stage2_args", "with_hints"): "94% arg accuracy with full_desc (§16); 91% 1-shot (§12)",
    ("stage2_args", "without_hints"): "misses name 50%, drug_name 43.8% without hints (§4; Part II §24)",
    ("stage2_args", "critical_last"): "21% (vs 88%) (§13; Part II §20)",
    ("result_classify", "project"): "94.1% (§12; Part III §29)",
    ("retry_strategy", "project"): "92% (§12; Part III §35)",
    ("anti_patterns", "model", "sufficiency"): "0% on sufficient cases (§13; Part III §34)",
    ("anti_patterns", "model", "ask_user"): "0% (§13; Part III §30)",
    ("anti_patterns", "model", "skip"): "0% (§12; Part III §35)",
    ("anti_patterns", "model", "plan"): "0-10% (§13; Part III §31)",
    ("synthesize", "t0.5_256"): "fact rate 90% at T=0.5 (§7; Part IV §43); 0% source leak with context (§12)",
    ("synthesize", "t0.0"): "fact rate 80-87% at other temperatures (§7)",
    ("synthesize", "t0.3"): "fact rate 80-87% at other temperatures (§7)",
    ("synthesize", "t0.7"): "fact rate 80-87% at other temperatures (§7)",
    ("synthesize", "t1.0"): "fact rate 80-87% at other temperatures (§7)",
    ("synthesize", "tokens_512"): "quality 9.4 vs 9.7 at 256 (§7; Part IV §46)",
    ("synthesize", "structured"): "8.3/10, 2x words, 40% source leakage (§13; Part IV §44)",
    ("synthesize", "raw_errors"): "4.8/10 vs 10/10 pre-formatted (§13; Part IV §48)",
    ("synthesize", "thinking_prefix"): "13% empty output (§13; Part IV §42)",
}


#: The same figures as numbers, only where the study's figure measures what the ``accuracy`` column measures
#: (plotted as a marker next to the bar). Ranges use their upper end.
NUMERIC: dict[tuple[str, ...], float] = {
    ("tool_select", "full_desc_1shot"): 0.95,
    ("tool_select", "short_desc"): 0.80,
    ("tool_select", "two_stage"): 0.90,
    ("tool_select", "joint"): 0.80,
    ("tool_select", "boolean_probe"): 0.25,
    ("tool_select", "reason_then_select"): 0.55,
    ("stage2_args", "with_hints"): 0.94,
    ("stage2_args", "critical_last"): 0.21,
    ("result_classify", "project"): 0.941,
    ("retry_strategy", "project"): 0.92,
    ("anti_patterns", "model", "sufficiency"): 0.0,
    ("anti_patterns", "model", "ask_user"): 0.0,
    ("anti_patterns", "model", "skip"): 0.0,
    ("anti_patterns", "model", "plan"): 0.10,
}


def numeric(suite: str, variant: str, category: str | None = None) -> float | None:
    """Seed 002's figure as a number comparable with ``accuracy``, or None."""
    key = (suite, variant) if category is None else (suite, variant, category)
    return NUMERIC.get(key)


def reference(suite: str, variant: str, category: str | None = None) -> str:
    """Seed 002's figure for this row, or an empty string."""
    if category is not None:
        return REFERENCE.get((suite, variant, category), "")
    return REFERENCE.get((suite, variant), "")

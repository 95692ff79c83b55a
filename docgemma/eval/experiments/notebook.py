"""Thin helpers the notebooks call (``notebooks/``, built by ``scripts/build_notebooks.py``): parameters from
the environment (so CI can run a tiny subset), one model load per notebook, a suite run with its report,
and a per-case heatmap."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docgemma.config import Settings
from docgemma.llm.base import LLM

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class NotebookParams:
    """A notebook's parameters: ``DOCGEMMA_NB_BACKEND``, ``DOCGEMMA_NB_LIMIT`` (0 = every case),
    ``DOCGEMMA_NB_VARIANTS`` (comma-separated, empty = all), ``DOCGEMMA_NB_OUT``."""

    backend: str
    limit: int | None
    variants: list[str] | None
    out: Path


def params(default_limit: int = 5) -> NotebookParams:
    """Parameters from the environment, with the notebook's defaults."""
    limit = int(os.environ.get("DOCGEMMA_NB_LIMIT", str(default_limit)))
    variants = [v for v in os.environ.get("DOCGEMMA_NB_VARIANTS", "").split(",") if v]
    return NotebookParams(backend=os.environ.get("DOCGEMMA_NB_BACKEND", "transformers"), limit=limit or None,
                          variants=variants or None, out=Path(os.environ.get("DOCGEMMA_NB_OUT", "experiments_out")))


def load_model(backend: str) -> LLM | None:
    """The backend's model (``rules`` = no model: only the deterministic variants run)."""
    if backend == "rules":
        return None
    from docgemma.runtime import load_llm

    settings = Settings.from_env()
    return load_llm(Settings(**{**settings.__dict__, "backend": backend}))


@dataclass
class SuiteRun:
    """What a notebook shows after a run."""

    frame: pd.DataFrame
    records: list[dict[str, Any]]
    figures: list[Path]
    report: Path


def run(suite_name: str, llm: LLM | None, *, limit: int | None, variants: list[str] | None, out: Path) -> SuiteRun:
    """Run (or resume) a suite into ``out/suite_name`` and write its report."""
    from docgemma.eval.experiments.report import table, write_report
    from docgemma.eval.experiments.runner import load_records, plan, run_suite
    from docgemma.eval.experiments.suites import all_suites

    suite = all_suites()[suite_name]
    directory = out / suite_name
    jsonl = directory / "calls.jsonl"
    command = f"notebooks ({suite_name}, {llm.name if llm else 'rules'}, limit {limit or 'all'})"
    for _ in run_suite(suite, llm, jsonl, limit=limit, variants=variants, command=command):
        pass
    wanted = {(v.name, c["id"]) for v, c in plan(suite, limit, variants)}
    records = [r for r in load_records(jsonl) if (r["variant"], r["case"]) in wanted]
    report = write_report(records, suite_name, suite.description, command, directory)
    heatmap(records, directory / f"{suite_name}_cases.png")
    return SuiteRun(table(records), records, sorted(directory.glob(f"{suite_name}_*.png")), report)


def heatmap(records: list[dict[str, Any]], path: Path) -> Path:
    """Right (green) / wrong (red) per variant and case: where the variants disagree."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = list(dict.fromkeys(r["variant"] for r in records))
    cases = list(dict.fromkeys(r["case"] for r in records))
    grid = [[float("nan")] * len(cases) for _ in variants]
    for r in records:
        grid[variants.index(r["variant"])][cases.index(r["case"])] = 1.0 if r["correct"] else 0.0
    fig, ax = plt.subplots(figsize=(max(5, 0.35 * len(cases) + 3), max(2.5, 0.35 * len(variants) + 1.5)))
    ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(cases)), cases, rotation=90, fontsize=7)
    ax.set_yticks(range(len(variants)), variants, fontsize=8)
    ax.set_title("per case: green = right, red = wrong")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

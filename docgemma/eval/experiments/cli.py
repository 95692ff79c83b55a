"""``python -m docgemma experiment SUITE --backend B [--limit N] [--out DIR]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from docgemma.config import BACKENDS, Settings


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``experiment`` subcommand."""
    from docgemma.eval.experiments.suites import SUITE_NAMES

    parser = sub.add_parser("experiment", help="a node-level experiment suite (JSONL, table, plots, report)")
    parser.add_argument("suite", choices=[*SUITE_NAMES, "all"])
    parser.add_argument("--backend", default="transformers", choices=[*BACKENDS, "rules"],
                        help="model backend; 'rules' runs only the deterministic variants (no model)")
    parser.add_argument("--limit", type=int, help="first N cases per variant")
    parser.add_argument("--variants", help="comma-separated variant names (default: all)")
    parser.add_argument("--out", help="output directory (default: experiments_out/SUITE)")
    parser.add_argument("--judge-model", help="synthesize only: a judge model served by DOCGEMMA_OPENAI_BASE_URL")
    parser.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run the suite(s), resuming from an existing calls.jsonl, then write the report."""
    from docgemma.eval.experiments.report import write_report
    from docgemma.eval.experiments.runner import load_records, plan, run_suite
    from docgemma.eval.experiments.suites import SUITE_NAMES, all_suites

    llm = None
    if args.backend != "rules":
        from docgemma.runtime import load_llm

        llm = load_llm(Settings(**{**settings.__dict__, "backend": args.backend}))
    if args.judge_model:
        from docgemma.eval.experiments.suites import synthesize
        from docgemma.llm.openai_backend import OpenAICompatLLM

        synthesize.JUDGE["model"] = OpenAICompatLLM(settings.openai_base_url.rstrip("/"), args.judge_model,
                                                    settings.openai_api_key)
    suites = all_suites()
    names = SUITE_NAMES if args.suite == "all" else (args.suite,)
    variants = [v for v in args.variants.split(",") if v] if args.variants else None
    command = "python -m docgemma " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["experiment"] else \
        f"python -m docgemma experiment {args.suite} --backend {args.backend}" + (f" --limit {args.limit}" if args.limit else "")
    for name in names:
        suite = suites[name]
        out = Path(args.out or "experiments_out") / name if args.suite == "all" or not args.out else Path(args.out)
        jsonl = out / "calls.jsonl"
        for _ in run_suite(suite, llm, jsonl, limit=args.limit, variants=variants, progress=not args.no_progress,
                           command=command):
            pass
        wanted = {(v.name, c["id"]) for v, c in plan(suite, args.limit, variants)}
        records = [r for r in load_records(jsonl) if (r["variant"], r["case"]) in wanted]
        if not records:
            sys.stdout.write(f"{name}: nothing to report (no trials ran)\n")
            continue
        report = write_report(records, name, suite.description, command, out)
        sys.stdout.write(f"{name}: {len(records)} trials → {report}\n")
        sys.stdout.write((out / f"{name}.md").read_text(encoding="utf-8") + "\n")
    return 0

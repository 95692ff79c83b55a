"""Every figure rebuilt from the code (issue 47): one command reruns each cheap bench and rewrites its results file.

    python scripts/figures.py            # rerun the cheap benches here: bench/results/ rewritten in place
    python scripts/figures.py --check    # rerun them on a copy of this tree; fail on a figure that moved (CI)
    python scripts/figures.py --list     # what is rerun, and the results files left to their own commands

"Cheap" means no model, no browser, no server and no clock in the figures the documents state: the rule layer and
the learned router on every set written apart, the pharmacist's, dose and allergy checks on their held-out and
generated sets, the golden sessions in oracle mode, the Kaggle time estimate. Together they take about ten minutes
on two cores. ``--check`` then runs ``tests/unit/test_figures.py`` against the rerun's results: a figure in the
README, the writeup, the notebook or a page that differs from what the bench prints now fails, and so does a
results file the rerun rewrote into something the committed one does not hold (a stale file nobody cites yet).

What a document states from a slower or machine-bound bench (timings, the embedded model end to end, a browser,
a GPU estimate) is checked against its committed results file only; ``--check`` says which of those files are older
than the code they measure (:data:`MEASURES`), and fails on it with ``--strict-age``. First passes and "before"
files are records of a past commit and are never rerun.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path("bench") / "results"
#: The sets written apart that the router bench measures (their results: results_router_router_families_<stem>).
FAMILY_SETS = ("router_families_dev", *(f"router_families_heldout_v{k}" for k in range(2, 11)))
#: The sets whose "search first, then the action" turns are followed through the app (bench_router_then).
THEN_SETS = tuple(f"router_families_heldout_v{k}" for k in range(5, 11))


@dataclass(frozen=True)
class Rerun:
    """One bench command (arguments after ``python``), the results files it rewrites, and where its stdout goes
    when the command prints its results rather than writing them."""

    argv: tuple[str, ...]
    writes: tuple[str, ...]
    stdout_to: str = ""


def reruns() -> tuple[Rerun, ...]:
    """The cheap benches, in the order they run (the allergy forms' cases first: its evaluation reads them)."""
    fixed = (
        Rerun(("bench/bench_pharmacist.py",), ("results_pharmacist_heldout.json",)),
        Rerun(("bench/bench_kaggle_time.py",), ("results_kaggle_time.json",)),
        Rerun(("bench/bench_dose_orders.py",), ("results_dose_orders.json", "results_dose_orders.md")),
        Rerun(("bench/bench_allergy_heldout.py",), ("results_allergy_heldout.json",)),
        Rerun(("bench/bench_allergy_forms.py", "--cases", "bench/results/.allergy_form_cases.json"), ()),
        Rerun(("bench/bench_allergy_forms.py", "--evaluate", "bench/results/.allergy_form_cases.json",
               "--out", "bench/results/results_allergy_forms.json"), ("results_allergy_forms.json",)),
        Rerun(("-m", "docgemma", "golden", "golden_tests/clinical_sessions.json"), ("golden_oracle/clinical_sessions.txt",),
              stdout_to="golden_oracle/clinical_sessions.txt"),
        *(Rerun(("bench/bench_rules.py", path, "--split", split, "--backend", "transformers"),
                (f"results_rules_{split}.json", f"results_rules_{split}.md"))
          for path, split in (("golden_tests/heldout_dev.json", "dev"), ("golden_tests/heldout_test.json", "test"),
                              ("bench/data/heldout_final.json", "final"))),
        Rerun(("bench/bench_router.py",), ("results_router.json", "results_router.md")),
        Rerun(("bench/bench_router.py", "--split", "dev", "--no-golden"), ("results_router_dev.json", "results_router_dev.md")),
        Rerun(("bench/bench_router.py", "--set", "bench/data/issue26_last.json"),
              ("results_router_issue26_last.json", "results_router_issue26_last.md")),
        # Issue 44: the n-gram reader beside all-MiniLM-L6-v2 with a head (about 2 min on 2 cores; its timings are
        # clocks, left out of the comparison like every "_ms" figure).
        Rerun(("bench/bench_readers.py",), ("results_readers.json", "results_readers.md")),
    )
    families = tuple(Rerun(("bench/bench_router.py", "--families", f"bench/data/{name}.json", "--no-golden"),
                           (f"results_router_{name}.json", f"results_router_{name}.md")) for name in FAMILY_SETS)
    then = tuple(Rerun(("bench/bench_router_then.py", "--families", f"bench/data/{name}.json"),
                       (f"results_router_then_{name.removeprefix('router_families_')}.json",
                        f"results_router_then_{name.removeprefix('router_families_')}.md")) for name in THEN_SETS)
    return fixed + families + then


#: The results files a document cites that are not rerun (a model end to end, a browser, servers, clocks), each with
#: the code its figures depend on: ``--check`` fails when one of these paths changed in a commit after the last one
#: that wrote the results file, so a figure is never older than what it measures. Timings are held to the code that
#: is timed (the bench itself and the module measured), not to every change in the app, or every commit would make
#: them stale; first passes and "before" files are a past commit's by definition and are not listed.
MEASURES: dict[str, tuple[str, ...]] = {
    "results_ui.json": ("bench/bench_ui.py", "app.py", "docgemma/ui/shutdown.py", "docgemma/serve.py"),
    "results_deploy.json": ("bench/bench_deploy.py",),
    "results_backends.json": ("bench/bench_backends.py", "docgemma/llm/transformers_backend.py",
                              "docgemma/llm/llamacpp_backend.py"),
    "results_constrained.json": ("bench/bench_constrained.py", "docgemma/llm/json_constraint.py"),
    "results_ehr_scale.json": ("bench/bench_ehr.py", "docgemma/ehr/store.py", "docgemma/ehr/search.py"),
    "results_writes.json": ("bench/bench_writes.py", "docgemma/agent/approval.py"),
    "results_tools.json": ("bench/bench_tools.py", "docgemma/http_client.py"),
    "results_images.json": ("bench/bench_images.py", "docgemma/images.py", "docgemma/image_store.py"),
    "results_agent.json": ("docgemma/eval/bench.py",),
    "results_routes.json": ("docgemma/eval/bench_routes.py", "docgemma/eval/metering.py"),
    "results_walkthrough.json": ("scripts/walkthrough.py",),
    "results_fresh_machine.json": ("bench/bench_fresh_machine.py",),
    "results_restart.json": ("bench/bench_restart.py", "scripts/dev.sh", "docgemma/llm/transformers_backend.py"),
}


def run(tree: Path, rerun: Rerun) -> float:
    """Run one bench in ``tree`` (its own code first on the path); seconds taken. A failing bench stops the run."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    started = time.perf_counter()
    out = subprocess.run([sys.executable, *rerun.argv], cwd=tree, env=env, text=True, capture_output=True, check=False)
    if out.returncode != 0:
        sys.stderr.write(out.stdout[-4000:] + out.stderr[-4000:])
        raise SystemExit(f"figures: `python {' '.join(rerun.argv)}` failed (exit {out.returncode}); nothing is checked")
    if rerun.stdout_to:
        (tree / RESULTS / rerun.stdout_to).write_text(out.stdout)
    return time.perf_counter() - started


def copy_tree(dest: Path) -> Path:
    """The files git knows here (committed, changed and new, not ignored), copied to ``dest``: the rerun writes its
    results there and leaves this tree alone."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


def regenerate(tree: Path, benches: Sequence[Rerun]) -> None:
    total = 0.0
    for i, rerun in enumerate(benches, 1):
        seconds = run(tree, rerun)
        total += seconds
        print(f"[{i}/{len(benches)}] {seconds:5.1f} s  python {' '.join(rerun.argv)}", flush=True)
    (tree / RESULTS / ".allergy_form_cases.json").unlink(missing_ok=True)
    print(f"figures: {len(benches)} benches rerun in {total / 60:.1f} min", flush=True)


def check_figures(results: Path) -> int:
    """``tests/unit/test_figures.py`` against the rerun's results (its documents are this tree's)."""
    env = {**os.environ, "DOCGEMMA_FIGURES_RESULTS": str(results)}
    return subprocess.run([sys.executable, "-m", "pytest", "tests/unit/test_figures.py", "-q", "-p", "no:cacheprovider",
                           "-n", "0", "-k", "each_stated_figure"], cwd=ROOT, env=env, check=False).returncode


def moved_results(rerun_results: Path, benches: Sequence[Rerun]) -> list[str]:
    """Results files the rerun rewrote with other figures than the committed ones hold (what changes from run to
    run, the command's date and commit, timings, is left out by :func:`same`)."""
    moved = []
    for name in sorted({w for b in benches for w in b.writes}):
        committed, rerun = ROOT / RESULTS / name, rerun_results / name
        if not committed.exists() or not same(committed, rerun):
            moved.append(name)
    return moved


#: Keys whose values differ from one run to the next on the same code: when and where it ran, and clock times.
VOLATILE = ("command", "commit", "date", "seconds", "tree", "load", "_ms", "_s_p", "ms_p", "wall_s")


def _steady(value: object) -> object:
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if not any(mark in k for mark in VOLATILE)}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def same(committed: Path, rerun: Path) -> bool:
    """Whether two results files hold the same figures: JSON compared without its volatile keys; a Markdown or text
    report is the JSON's rendering (or, for the golden sessions, compared line by line without timings)."""
    if committed.suffix == ".json":
        return _steady(json.loads(committed.read_text())) == _steady(json.loads(rerun.read_text()))
    if committed.suffix == ".md":
        return True  # rendered from the JSON beside it, which is compared
    def lines(path: Path) -> list[str]:
        return [line for line in path.read_text().splitlines() if " s" not in line and "seconds" not in line]
    return lines(committed) == lines(rerun)


def stale_by_age(root: Path = ROOT) -> list[str]:
    """Results files (of :data:`MEASURES`) last written before a later change to the code they measure."""
    def last_commit_time(*paths: str) -> int:
        out = subprocess.run(["git", "log", "-1", "--format=%ct", "--", *paths], cwd=root, check=True,
                             capture_output=True, text=True).stdout.strip()
        return int(out or 0)
    stale = []
    for name, code in MEASURES.items():
        written, changed = last_commit_time(str(RESULTS / name)), last_commit_time(*code)
        if changed > written:
            stale.append(f"{name}: written before the last change to {', '.join(code)}; rerun its command "
                         "(bench/README.md)")
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="rerun on a copy and fail on a moved or stale figure")
    parser.add_argument("--list", action="store_true", help="list the reruns and the files checked by age")
    parser.add_argument("--only", help="only the reruns whose command contains this text (a quick look)")
    parser.add_argument("--strict-age", action="store_true",
                        help="also fail when a results file that is not rerun is older than the code it measures")
    args = parser.parse_args(argv)
    benches = [b for b in reruns() if not args.only or args.only in " ".join(b.argv)]
    if args.list:
        for b in benches:
            print(f"rerun: python {' '.join(b.argv)} -> {', '.join(b.writes) or '(cases)'}")
        for name, code in MEASURES.items():
            print(f"by age: {name} <- {', '.join(code)}")
        return 0
    if not args.check:
        regenerate(ROOT, benches)
        return 0
    with tempfile.TemporaryDirectory(prefix="docgemma-figures-") as tmp:
        tree = copy_tree(Path(tmp))
        regenerate(tree, benches)
        failed = check_figures(tree / RESULTS)
        moved = moved_results(tree / RESULTS, benches)
    for name in moved:
        print(f"figures: bench/results/{name} is stale: a rerun holds other figures (run `python scripts/figures.py` "
              "and commit what it writes)", file=sys.stderr)
    # Not rerun here (a model end to end, a browser, servers, clocks on an idle machine): said, and fatal only when
    # asked, because a loaded CI machine cannot remeasure them.
    aged = stale_by_age()
    for line in aged:
        print(f"figures: dated: {line}", file=sys.stderr)
    if failed or moved or (aged and args.strict_age):
        print("figures: FAILED (a document states a figure its bench no longer prints, or a results file is stale)",
              file=sys.stderr)
        return 1
    print("figures: every stated figure is what its bench prints now")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

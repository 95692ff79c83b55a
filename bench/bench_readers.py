"""Two readers of a clinician's turn compared (issue 44): the hashed n-gram features the router reads now, and a
pretrained sentence encoder (all-MiniLM-L6-v2, frozen) with a small trained head, the SetFit way without its
contrastive fine-tuning step; and both together (the two feature sets concatenated, one head).

    python bench/bench_readers.py            # bench/results/results_readers.json and .md

Each reader gets the same head, trained the same way: a multinomial logistic regression fitted by full-batch Adam
from zero weights (the trainer of ``docgemma/eval/train_router.py``: its epochs, step and L2), on the same turns, read
as INPUT_ASSEMBLY reads them (the masked message and the context flags; the encoder's head sees the flags as seven
0/1 inputs beside the 384-d vector). The n-gram reader here is retrained in every fold, never the shipped weights
(those were trained on sets measured here). Two kinds of split, each keeping template families apart:

* **families**: the corpus's own split by family (``router_corpus.splits``): trained on its train families and the
  families written for training (``router_families_written.json``, ``bench/data/router_families_dev.json``), the
  threshold chosen on its dev families, measured on its test families;
* **leave one set out** over the nine sets written apart (``bench/data/router_families_heldout_v{2..10}.json``): each
  set in turn is measured, trained on the corpus's families and the other eight sets, less one family in five of
  those eight (seeded) that are held apart with the corpus's dev families to choose the threshold.

Figures, per reader: **accuracy** (the most probable label is the turn's action); **sure decisions**: a turn is sure
when the top label's probability exceeds the second's by at least a margin, the lowest margin at which at least
99.5 % of the held-apart families' sure turns are right; their coverage and precision on the measured families;
**with the rules**: the same where the rules decided and agree with the reader's top label (how the app uses a
reader: ``docgemma/agent/decision.py``), its margin chosen the same way; and the **decision time** of one turn on
this CPU (one torch thread: the masked text and flags to the probabilities, the encoder's forward pass included;
p50 and p95 over 200 turns of each turn's best of three reads, and of its first read, with the load average).
The app's routing is not changed by this bench.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import shlex
import subprocess
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from docgemma.agent import encoder  # noqa: E402  (the checkout's own package, after the path insert)
from docgemma.agent.router_model import DIMENSIONS, features  # noqa: E402
from docgemma.eval.router_corpus import MEASURED, Turn, generate, load_families  # noqa: E402
from docgemma.eval.train_router import EPOCHS, L2, Example, examples  # noqa: E402

SETS = tuple(f"router_families_heldout_v{k}" for k in range(2, 11))
DEV_SET = "router_families_dev"
#: Turns per family (the corpus's 40 would take the encoder minutes on two cores; every family still counts).
PER_FAMILY = 8
READERS = ("ngram", "minilm", "both")
FLAGS = ("active", "image", "named", "other_patient", "patient_id", "drug1", "drugs2")
TARGET_PRECISION = 0.995
SEED = 44
LATENCY_TURNS = 200
LATENCY_TRIES = 3


@dataclass(frozen=True)
class Row:
    """A turn read as the router reads it, with where it comes from (``group``: corpus:<split> or a set's name)."""

    example: Example
    group: str


def corpus_rows() -> list[Row]:
    """The corpus's turns, less the families of the sets measured here (the trainer adds those to the corpus)."""
    measured = {f.name for f in load_families(MEASURED)}
    turns = [t for t in generate(per_family=PER_FAMILY) if t.family not in measured]
    return [Row(e, f"corpus:{e.split}") for e in examples(turns)]


def set_rows(name: str) -> list[Row]:
    """One set's turns (written apart, generated like the corpus's)."""
    turns: list[Turn] = generate(per_family=PER_FAMILY, families=load_families(HERE / "data" / f"{name}.json"))
    return [Row(e, name) for e in examples(turns)]


@dataclass(frozen=True)
class Fold:
    """Indices of the rows trained on, held apart (to choose the margin) and measured."""

    name: str
    train: list[int]
    calibrate: list[int]
    test: list[int]


def folds(rows: Sequence[Row]) -> list[Fold]:
    """The corpus's family split, then one fold per set left out (families apart: see the module docstring)."""
    groups = [r.group for r in rows]
    fixed = [i for i, g in enumerate(groups) if g in ("corpus:train", DEV_SET)]
    dev = [i for i, g in enumerate(groups) if g == "corpus:dev"]
    out = [Fold("families", fixed, dev, [i for i, g in enumerate(groups) if g == "corpus:test"])]
    rng = random.Random(SEED)
    held = {name: set(rng.sample(sorted({r.example.family for r in rows if r.group == name}),
                                 k=len({r.example.family for r in rows if r.group == name}) // 5)) for name in SETS}
    for name in SETS:
        others = [i for i, g in enumerate(groups) if g in SETS and g != name]
        apart = [i for i in others if rows[i].example.family in held[groups[i]]]
        kept = [i for i in others if rows[i].example.family not in held[groups[i]]]
        corpus_test = [i for i, g in enumerate(groups) if g == "corpus:test"]
        out.append(Fold(name, fixed + corpus_test + kept, dev + apart, [i for i, g in enumerate(groups) if g == name]))
    return out


def flag_matrix(rows: Sequence[Row]) -> np.ndarray:
    return np.array([[float(f in r.example.flags) for f in FLAGS] for r in rows])


def embed(rows: Sequence[Row], model: encoder.SentenceEncoder) -> np.ndarray:
    """Each row's sentence vector, rounded to 4 decimals (so a CPU's last-bit differences do not move a figure)."""
    texts = sorted({r.example.text for r in rows}, key=lambda t: (len(t), t))
    vectors = model.encode(texts, batch_size=32)
    at = {t: i for i, t in enumerate(texts)}
    return np.round(vectors[[at[r.example.text] for r in rows]].astype(np.float64), 4)


@dataclass
class Inputs:
    """What a reader's head reads: the hashed n-grams (CSR parts: row starts, buckets, values) and/or dense columns."""

    sparse: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    dense: np.ndarray | None


@functools.cache
def _features(text: str, flags: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """A turn's hashed features, computed once per run (every fold reads every turn again)."""
    return features(text, flags)


def reader_inputs(reader: str, rows: Sequence[Row], vectors: np.ndarray, index: list[int]) -> Inputs:
    sparse = dense = None
    if reader in ("ngram", "both"):
        parts = [_features(rows[i].example.text, rows[i].example.flags) for i in index]
        starts = np.cumsum([0] + [len(c) for c, _v in parts])
        sparse = (starts, np.concatenate([c for c, _v in parts]), np.concatenate([v for _c, v in parts]).astype(np.float64))
    if reader in ("minilm", "both"):
        subset = [rows[i] for i in index]
        dense = vectors[index] if reader == "both" else np.hstack([vectors[index], flag_matrix(subset)])
    return Inputs(sparse, dense)


def _csr(starts: np.ndarray, cols: np.ndarray, values: np.ndarray, width: int) -> Any:
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "CSR support is in beta": the two products used here are not
        return torch.sparse_csr_tensor(torch.from_numpy(starts), torch.from_numpy(cols), torch.from_numpy(values),
                                       (len(starts) - 1, width), check_invariants=False)


@dataclass
class Head:
    """A fitted head: weights over the hashed buckets and/or the dense columns, and the bias."""

    sparse: np.ndarray | None
    dense: np.ndarray | None
    bias: np.ndarray

    def logits(self, x: Inputs) -> np.ndarray:
        out = np.tile(self.bias, (len(x.dense) if x.dense is not None else len(x.sparse[0]) - 1, 1))  # type: ignore[index]
        if x.sparse is not None and self.sparse is not None:
            starts, cols, values = x.sparse
            out += np.add.reduceat(self.sparse[cols] * values[:, None], starts[:-1], axis=0)
        if x.dense is not None and self.dense is not None:
            out += x.dense @ self.dense
        return out


def fit(x: Inputs, y: np.ndarray, n_labels: int, epochs: int = EPOCHS) -> Head:
    """Full-batch Adam on the mean cross-entropy from zero weights, L2 on the weights (train_router.fit's settings).
    The gradient is written out (softmax minus the truth, through the features); only the buckets the training
    turns use are fitted (the others' gradient is zero, so they stay zero)."""
    import torch

    truth = torch.nn.functional.one_hot(torch.from_numpy(y), n_labels).to(torch.float64)
    params, sparse, used = [], None, np.zeros(0, dtype=np.int64)
    if x.sparse is not None:
        starts, cols, values = x.sparse
        used, compact = np.unique(cols, return_inverse=True)
        sparse = _csr(starts, compact.astype(np.int64), values, len(used))
        order = np.argsort(compact, kind="stable")
        row_of = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
        t_starts = np.searchsorted(compact[order], np.arange(len(used) + 1))
        transposed = _csr(t_starts, row_of[order].astype(np.int64), values[order], len(y))
        params.append(torch.zeros((len(used), n_labels), dtype=torch.float64))
    dense = torch.from_numpy(x.dense) if x.dense is not None else None
    if dense is not None:
        params.append(torch.zeros((dense.shape[1], n_labels), dtype=torch.float64))
    bias = torch.zeros(n_labels, dtype=torch.float64)
    optimiser = torch.optim.Adam([{"params": params, "weight_decay": L2}, {"params": [bias], "weight_decay": 0.0}],
                                 lr=0.05, betas=(0.9, 0.999), eps=1e-8)
    for _ in range(epochs):
        z = bias.expand(len(y), n_labels).clone()
        z += sparse @ params[0] if sparse is not None else 0
        z += dense @ params[-1] if dense is not None else 0
        g = (torch.softmax(z, dim=1) - truth) / len(y)
        if sparse is not None:
            params[0].grad = transposed @ g
        if dense is not None:
            params[-1].grad = dense.T @ g
        bias.grad = g.sum(dim=0)
        optimiser.step()
    full = None
    if x.sparse is not None:
        full = np.zeros((DIMENSIONS, n_labels))
        full[used] = params[0].numpy()
    return Head(full, params[-1].numpy().copy() if dense is not None else None, bias.numpy().copy())


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class Read:
    """A reader's reading of some rows: the top label, the margin over the second, and whether it is right."""

    top: list[str]
    margin: np.ndarray
    right: np.ndarray
    rule_agrees: np.ndarray


def read(head: Head, x: Inputs, rows: Sequence[Row], labels: tuple[str, ...]) -> Read:
    p = softmax(head.logits(x))
    order = np.sort(p, axis=1)
    top = [labels[k] for k in p.argmax(axis=1)]
    return Read(top, np.round(order[:, -1] - order[:, -2], 6), np.array([t == r.example.label for t, r in zip(top, rows,
                                                                                                          strict=True)]),
                np.array([r.example.rule is not None and r.example.rule == t for t, r in zip(top, rows, strict=True)]))


def margin_for(margins: np.ndarray, right: np.ndarray, target: float = TARGET_PRECISION) -> float:
    """The lowest margin at which the share of right turns among those at or above it is at least ``target``
    (above every margin, so nothing is sure, when none reaches it)."""
    best = 1.01
    for m in sorted(set(margins.tolist()), reverse=True):
        chosen = margins >= m
        if right[chosen].mean() >= target:
            best = m
    return round(float(best), 6)


def _rate(ok: int, n: int) -> float | None:
    return round(ok / n, 4) if n else None


def measure(calibrate: Read, test: Read) -> dict[str, Any]:
    """Accuracy, and the sure decisions alone and with the rules, at margins chosen on the held-apart turns."""
    alone = margin_for(calibrate.margin, calibrate.right)
    agreed = calibrate.rule_agrees
    with_rules = margin_for(calibrate.margin[agreed], calibrate.right[agreed]) if agreed.any() else 1.01
    sure = test.margin >= alone
    sure_rules = test.rule_agrees & (test.margin >= with_rules)
    n = len(test.top)
    return {"turns": n, "right": int(test.right.sum()), "accuracy": _rate(int(test.right.sum()), n),
            "margin": alone, "sure": int(sure.sum()), "sure_right": int(test.right[sure].sum()),
            "sure_coverage": _rate(int(sure.sum()), n), "sure_precision": _rate(int(test.right[sure].sum()), int(sure.sum())),
            "margin_with_rules": with_rules, "sure_with_rules": int(sure_rules.sum()),
            "sure_with_rules_right": int(test.right[sure_rules].sum()),
            "sure_with_rules_coverage": _rate(int(sure_rules.sum()), n),
            "sure_with_rules_precision": _rate(int(test.right[sure_rules].sum()), int(sure_rules.sum()))}


def run_fold(fold: Fold, rows: Sequence[Row], vectors: np.ndarray, labels: tuple[str, ...]) -> dict[str, Any]:
    """Every reader trained on the fold's train rows, its margin chosen on the held-apart ones, measured on the test."""
    out: dict[str, Any] = {"families": {part: len({rows[i].example.family for i in idx}) for part, idx in
                                        (("train", fold.train), ("calibrate", fold.calibrate), ("test", fold.test))}}
    y = np.array([labels.index(rows[i].example.label) for i in fold.train])
    for reader in READERS:
        head = fit(reader_inputs(reader, rows, vectors, fold.train), y, len(labels))
        reads = [read(head, reader_inputs(reader, rows, vectors, idx), [rows[i] for i in idx], labels)
                 for idx in (fold.calibrate, fold.test)]
        out[reader] = measure(*reads)
        out.setdefault("_heads", {})[reader] = head
    return out


def pooled(per_fold: list[dict[str, Any]]) -> dict[str, Any]:
    """The leave-one-set-out folds' counts summed (each set's own margin)."""
    out = {}
    for reader in READERS:
        s = {k: sum(f[reader][k] for f in per_fold) for k in ("turns", "right", "sure", "sure_right", "sure_with_rules",
                                                                "sure_with_rules_right")}
        out[reader] = {**s, "accuracy": _rate(s["right"], s["turns"]), "sure_coverage": _rate(s["sure"], s["turns"]),
                       "sure_precision": _rate(s["sure_right"], s["sure"]),
                       "sure_with_rules_coverage": _rate(s["sure_with_rules"], s["turns"]),
                       "sure_with_rules_precision": _rate(s["sure_with_rules_right"], s["sure_with_rules"])}
    return out


def _decide(reader: str, head: Head, row: Row, model: encoder.SentenceEncoder) -> float:
    """One turn decided by one reader as the app would (masked text and flags to probabilities): milliseconds."""
    start = time.perf_counter()
    z = head.bias.copy()
    if head.sparse is not None:
        index, values = features(row.example.text, row.example.flags)
        z += values @ head.sparse[index]
    if head.dense is not None:
        vector = model.encode([row.example.text])[0].astype(np.float64)
        if reader == "minilm":
            vector = np.concatenate([vector, flag_matrix([row])[0]])
        z += vector @ head.dense
    softmax(z[None, :])
    return (time.perf_counter() - start) * 1000


def latency(heads: dict[str, Head], rows: Sequence[Row], model: encoder.SentenceEncoder) -> dict[str, Any]:
    """One turn at a time, each read ``LATENCY_TRIES`` times by every reader: p50 and p95 over the turns of each
    turn's best time (what the work costs; a shared machine's scheduler adds the rest), and of its first time."""
    sample = list(rows)[:LATENCY_TURNS]
    model.encode([sample[0].example.text])  # the first call pays for torch's lazy set-up, not a turn
    # Interleaved (each try of a turn reads it with every reader in turn), so a busy moment falls on all of them.
    tries: dict[str, list[list[float]]] = {reader: [] for reader in heads}
    for r in sample:
        times = [[_decide(reader, head, r, model) for reader, head in heads.items()] for _ in range(LATENCY_TRIES)]
        for k, reader in enumerate(heads):
            tries[reader].append([t[k] for t in times])
    out = {}
    for reader, per_turn in tries.items():
        best, first = sorted(min(t) for t in per_turn), sorted(t[0] for t in per_turn)
        out[reader] = {"latency_ms_p50": round(best[len(best) // 2], 2),
                       "latency_ms_p95": round(best[int(0.95 * len(best))], 2),
                       "first_try_ms_p50": round(first[len(first) // 2], 2),
                       "first_try_ms_p95": round(first[int(0.95 * len(first))], 2)}
    return out


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.1%}"


def _table(title: str, figs: dict[str, Any], families: dict[str, int] | None = None) -> list[str]:
    lines = [f"## {title}", ""]
    if families:
        lines += [f"Families: {families['train']} trained on, {families['calibrate']} held apart for the margin, "
                  f"{families['test']} measured.", ""]
    lines += ["| reader | turns | accuracy | sure: coverage / precision | with the rules: coverage / precision |",
              "|---|---|---|---|---|"]
    for reader in READERS:
        f = figs[reader]
        lines.append(f"| {reader} | {f['turns']} | {_pct(f['accuracy'])} | {_pct(f['sure_coverage'])} / "
                     f"{_pct(f['sure_precision'])} | {_pct(f['sure_with_rules_coverage'])} / "
                     f"{_pct(f['sure_with_rules_precision'])} |")
    return [*lines, ""]


def markdown(out: dict[str, Any]) -> str:
    lines = ["# Readers compared: hashed n-grams, MiniLM with a head, both", "",
             f"Command: `{out['command']}` (commit {out['commit']}, {out['date']}). {out['settings']['turns']} turns, "
             f"{out['settings']['per_family']} per family; sure: margin over the second label chosen on held-apart "
             f"families for ≥ {TARGET_PRECISION:.1%} precision.", ""]
    lines += _table("Corpus families held out (the corpus's own split)", out["families"], out["families"]["families"])
    lines += _table("Leave one set out, the nine written-apart sets pooled", out["leave_one_set_out"])
    for name, fold in out["sets"].items():
        lines += _table(f"Left out: `{name}`", fold, fold["families"])
    lines += ["## Decision time of one turn (this CPU, one torch thread)", "",
              f"{LATENCY_TURNS} turns, each read {LATENCY_TRIES} times: p50 / p95 of each turn's best time, and of its "
              f"first (load average {out['load']['average']} at the start on {out['load']['cpus']} CPUs).", "",
              "| reader | best of 3: p50 / p95 ms | first try: p50 / p95 ms |", "|---|---|---|"]
    lines += [f"| {r} | {v['latency_ms_p50']} / {v['latency_ms_p95']} | {v['first_try_ms_p50']} / {v['first_try_ms_p95']} |"
              for r, v in out["latency"].items()]
    return "\n".join(lines) + "\n"


def _strip(fold: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fold.items() if k != "_heads"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)  # the decision reads one turn on one thread; and a shared 2-core machine stays usable
    started = time.perf_counter()
    model = encoder.shared()
    rows = corpus_rows() + [r for name in (DEV_SET, *SETS) for r in set_rows(name)]
    labels = tuple(sorted({r.example.label for r in rows}))
    vectors = embed(rows, model)
    results = {f.name: run_fold(f, rows, vectors, labels) for f in folds(rows)}
    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip() or "unknown"
    family_fold = folds(rows)[0]
    out: dict[str, Any] = {
        "command": "python bench/bench_readers.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
        "commit": commit, "date": time.strftime("%Y-%m-%d"),
        "settings": {"turns": len(rows), "per_family": PER_FAMILY, "target_precision": TARGET_PRECISION,
                     "encoder": f"{encoder.DISTRIBUTION}=={encoder.VERSION}", "sha256": encoder.SAFETENSORS_SHA256},
        "families": _strip(results["families"]),
        "leave_one_set_out": pooled([results[name] for name in SETS]),
        "sets": {name: _strip(results[name]) for name in SETS},
        "load": {"average": round(os.getloadavg()[0], 2), "cpus": os.cpu_count()},
        "latency": latency(results["families"]["_heads"], [rows[i] for i in family_fold.test], model)}
    out["seconds"] = round(time.perf_counter() - started, 1)
    text = markdown(out)
    if not args.no_save:
        (HERE / "results" / "results_readers.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        (HERE / "results" / "results_readers.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""bench/bench_readers.py (issue 44): every fold keeps template families apart, and the margin is chosen as said."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from docgemma.eval.router_corpus import MEASURED, generate, load_families
from docgemma.eval.train_router import Example

ROOT = Path(__file__).parents[2]
_SPEC = importlib.util.spec_from_file_location("bench_readers", ROOT / "bench" / "bench_readers.py")
assert _SPEC is not None and _SPEC.loader is not None
bench = importlib.util.module_from_spec(_SPEC)
sys.modules["bench_readers"] = bench  # (its dataclasses look their module up)
_SPEC.loader.exec_module(bench)


@pytest.fixture(scope="module")
def rows() -> list:
    """The bench's turns (2 per family), labelled and grouped as the bench groups them, without the rules' reading
    (which the split does not look at)."""
    measured = {f.name for f in load_families(MEASURED)}
    out = [bench.Row(Example(t.text, (), t.label, None, t.family, t.split), f"corpus:{t.split}")
           for t in generate(per_family=2) if t.family not in measured]
    for name in (bench.DEV_SET, *bench.SETS):
        families = load_families(bench.HERE / "data" / f"{name}.json")
        out += [bench.Row(Example(t.text, (), t.label, None, t.family, t.split), name)
                for t in generate(per_family=2, families=families)]
    return out


def test_no_family_is_both_trained_on_and_measured(rows: list) -> None:
    folds = bench.folds(rows)
    assert [f.name for f in folds] == ["families", *bench.SETS]
    for fold in folds:
        train, calibrate, test = ({rows[i].example.family for i in idx} for idx in (fold.train, fold.calibrate, fold.test))
        assert test and train and calibrate, fold.name
        assert not train & test, (fold.name, sorted(train & test)[:5])
        assert not calibrate & test and not calibrate & train, fold.name
    for fold, name in zip(folds[1:], bench.SETS, strict=True):
        assert {rows[i].group for i in fold.test} == {name}
        assert name not in {rows[i].group for i in fold.train + fold.calibrate}


def test_a_family_name_belongs_to_one_group(rows: list) -> None:
    groups: dict[str, set[str]] = {}
    for r in rows:
        groups.setdefault(r.example.family, set()).add(r.group)
    assert all(len(g) == 1 for g in groups.values())


def test_the_margin_is_the_lowest_that_keeps_the_precision() -> None:
    margins = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    right = np.array([True, True, True, False, True])
    assert bench.margin_for(margins, right, target=1.0) == 0.7
    assert bench.margin_for(margins, right, target=0.8) == 0.5
    assert bench.margin_for(margins, np.array([False] * 5), target=0.995) == 1.01


def test_the_bench_trains_the_n_grams_as_train_router_does(rows: list) -> None:
    """The bench's head trainer (the gradient written out, sparse products) gives train_router.fit's weights."""
    from docgemma.eval.train_router import fit

    sample = rows[::10]
    flagged = [bench.Row(Example(r.example.text, ("active",) if i % 2 else (), r.example.label, None, r.example.family,
                                 r.example.split), r.group) for i, r in enumerate(sample)]
    labels = tuple(sorted({r.example.label for r in flagged}))
    y = np.array([labels.index(r.example.label) for r in flagged])
    head = bench.fit(bench.reader_inputs("ngram", flagged, np.zeros((len(flagged), 1)), list(range(len(flagged)))),
                     y, len(labels), epochs=60)
    w, b = fit([r.example for r in flagged], labels, epochs=60)
    assert head.sparse is not None and len(flagged) > 120
    assert np.abs(head.sparse - w).max() < 1e-9 and np.abs(head.bias - b).max() < 1e-9

"""Train the learned router (:mod:`docgemma.agent.router_model`) from the generated corpus, reproducibly.

    python -m docgemma.eval.train_router            # rebuilds docgemma/agent/router_weights.npz

The corpus (:mod:`docgemma.eval.router_corpus`, fixed seed) is read as INPUT_ASSEMBLY would read each turn (the
message's entities, the demo roster's patients, the active patient, an image), a multinomial logistic regression
is fitted on the training families by full-batch Adam from zero weights (deterministic), its temperature is
fitted on the dev families, and the sure-threshold is the lowest probability at which every dev turn where the
rules and the router agree is right (never below :data:`MIN_THRESHOLD`). The test families are not read here.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from docgemma.agent import rules
from docgemma.agent.decision import context_flags, label_of, masked
from docgemma.agent.patterns import PATIENT_REF_RE, request_part
from docgemma.agent.router_model import DIMENSIONS, RouterModel, features
from docgemma.agent.state import NEW_TURN, AgentState, PatientRef, turn_defaults
from docgemma.clinical.entities import extract_entities
from docgemma.clinical.roster import KnownPatient, Roster, with_known_patients
from docgemma.eval.golden import load_cases
from docgemma.eval.oracle import expected_tools
from docgemma.eval.router_corpus import Turn, demo_patients, generate
from docgemma.tools.registry import ToolRegistry, default_registry

MIN_THRESHOLD = 0.5
GOLDEN = Path(__file__).resolve().parents[2] / "golden_tests"
EPOCHS = 250
L2 = 1e-5


def demo_roster() -> Roster:
    """The demo record's roster, as ``tools/patient_roster`` would read it."""
    return Roster(tuple(KnownPatient(id=p["id"], name=p["name"], given=(p["name"].split()[0],), family=p["family"],
                                     identifiers=(p["mrn"],)) for p in demo_patients()))


def turn_state(text: str, *, active: PatientRef | None = None, image: bool = False,
               roster: Roster | None = None) -> AgentState:
    """The state INTENT_CLASSIFY reads for a message (entities with the roster's patients, the active patient)."""
    entities = extract_entities(text, has_image=image)
    if roster is not None:
        entities = with_known_patients(entities, request_part(text), roster)
    fresh = {k: (v[1:] if isinstance(v, list) and v[:1] == [NEW_TURN] else v) for k, v in turn_defaults().items()}
    state: dict[str, Any] = {**fresh, "user_query": text, "extracted_entities": entities,
                             "active_patient": active, "conversation": []}
    return state  # type: ignore[return-value]


def corpus_state(turn: Turn, roster: Roster) -> AgentState:
    """A corpus turn's state: its active patient (by name, from the demo roster) and its image."""
    known = {p.name: p for p in roster.patients}
    current = known.get(turn.active_name)
    active = PatientRef(id=current.id, name=current.name) if current else None
    return turn_state(turn.text, active=active, image=turn.image, roster=roster)


@dataclass(frozen=True)
class Example:
    """A turn as the router and the rules read it."""

    text: str
    flags: tuple[str, ...]
    label: str
    rule: str | None
    family: str
    split: str


def examples(turns: list[Turn], registry: ToolRegistry | None = None) -> list[Example]:
    """Each turn with its context flags and the rules' decision."""
    registry = registry or default_registry()
    roster = demo_roster()
    out = []
    for turn in turns:
        state = corpus_state(turn, roster)
        out.append(Example(masked(state), tuple(context_flags(state)), turn.label,
                           label_of(rules.decide(state, registry)), turn.family, turn.split))
    return out


#: The project's own example sets, read as extra training turns (never the held-out test sets: heldout_test.json and
#: clinician_phrasing.json are only measured).
TRAINING_SETS = ("seed002_unit", "seed002_integration", "seed002_regression", "clinical_sessions", "page_examples",
                 "heldout_dev")


def golden_examples(registry: ToolRegistry | None = None) -> list[Example]:
    """The training sets' turns (label: the expected intent and first tool). A turn after a session's first, or one
    that refers to a patient by pronoun, is read with a demo patient active."""
    registry = registry or default_registry()
    roster, out = demo_roster(), []
    active = PatientRef(id=roster.patients[2].id, name=roster.patients[2].name)
    for name in TRAINING_SETS:
        for session in load_cases(GOLDEN / f"{name}.json"):
            for index, turn in enumerate(session.turns):
                if "expected_intent" not in turn:
                    continue
                tools = expected_tools(turn)
                text = str(turn["user_input"])
                current = active if index > 0 or PATIENT_REF_RE.search(text) else None
                state = turn_state(text, active=current, image=bool(turn.get("has_image")), roster=roster)
                label = tools[0] if turn["expected_intent"] == "TOOL_NEEDED" and tools else "DIRECT"
                out.append(Example(masked(state), tuple(context_flags(state)), label,
                                   label_of(rules.decide(state, registry)), f"golden:{name}", "train"))
    return out


def design(rows: list[Example]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sparse design matrix as (row of each entry, bucket, value)."""
    parts = [features(r.text, r.flags) for r in rows]
    row = np.concatenate([np.full(len(i), n, dtype=np.int64) for n, (i, _v) in enumerate(parts)])
    return row, np.concatenate([i for i, _v in parts]), np.concatenate([v for _i, v in parts])


def _logits(x: tuple[np.ndarray, np.ndarray, np.ndarray], n: int, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    row, col, val = x
    out = np.zeros((n, w.shape[1]), dtype=np.float64)
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    out[row[starts]] = np.add.reduceat(w[col] * val[:, None], starts, axis=0)
    return out + b


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def fit(rows: list[Example], labels: tuple[str, ...], epochs: int = EPOCHS, l2: float = L2) -> tuple[np.ndarray, np.ndarray]:
    """Weights and bias by full-batch Adam on the cross-entropy with a small L2 (deterministic: zero start)."""
    x = design(rows)
    row, col, val = x
    y = np.zeros((len(rows), len(labels)))
    y[np.arange(len(rows)), [labels.index(r.label) for r in rows]] = 1.0
    order = np.argsort(col, kind="stable")
    sorted_col = col[order]
    starts = np.flatnonzero(np.r_[True, sorted_col[1:] != sorted_col[:-1]])
    w, b = np.zeros((DIMENSIONS, len(labels))), np.zeros(len(labels))
    moments = [np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b)]
    for step in range(1, epochs + 1):
        g = (_softmax(_logits(x, len(rows), w, b)) - y) / len(rows)
        gw = np.zeros_like(w)
        gw[sorted_col[starts]] = np.add.reduceat((g[row] * val[:, None])[order], starts, axis=0)
        gw += l2 * w
        for param, grad, m, v in ((w, gw, moments[0], moments[1]), (b, g.sum(axis=0), moments[2], moments[3])):
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad * grad
            param -= 0.05 * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    return w, b


def temperature(model: RouterModel, rows: list[Example]) -> float:
    """The temperature that minimises the dev families' negative log-likelihood (grid 0.3 to 5)."""
    x = design(rows)
    z = _logits(x, len(rows), model.weights.astype(np.float64), model.bias.astype(np.float64))
    truth = np.array([model.labels.index(r.label) for r in rows])
    grid = np.round(np.arange(0.3, 5.01, 0.05), 2)
    losses = [-np.log(_softmax(z / t)[np.arange(len(rows)), truth] + 1e-12).mean() for t in grid]
    return float(grid[int(np.argmin(losses))])


def threshold(model: RouterModel, rows: list[Example]) -> float:
    """The lowest probability at which every dev turn where rule and router agree is right."""
    wrong = [0.0]
    for r in rows:
        top, p = model.ranked(r.text, r.flags, k=1)[0]
        if r.rule is not None and top == r.rule and r.rule != r.label:
            wrong.append(p)
    return round(max(MIN_THRESHOLD, max(wrong) + 0.01), 2)


def train(turns: list[Turn] | None = None, epochs: int = EPOCHS) -> RouterModel:
    """The router trained on the corpus's train families, calibrated on its dev families."""
    rows = examples(turns if turns is not None else generate()) + golden_examples()
    labels = tuple(sorted({r.label for r in rows}))
    train_rows = [r for r in rows if r.split == "train"]
    dev_rows = [r for r in rows if r.split == "dev"]
    w, b = fit(train_rows, labels, epochs)
    # Rounded as saved, so the calibration is fitted to the weights the product reads.
    model = RouterModel(labels, w.astype(np.float16), b.astype(np.float32))
    model = RouterModel(labels, model.weights, model.bias, temperature=temperature(model, dev_rows))
    return RouterModel(labels, model.weights, model.bias, model.temperature, threshold(model, dev_rows))


def main(argv: list[str] | None = None) -> int:
    """Train and save the shipped weights."""
    model = train()
    model.save()
    sys.stdout.write(f"router saved: {len(model.labels)} labels, temperature {model.temperature}, "
                     f"threshold {model.threshold}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

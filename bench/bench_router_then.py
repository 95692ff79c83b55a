"""What a sure decision that begins with the patient search goes on to do, measured on families written apart.

    python bench/bench_router_then.py --families bench/data/router_families_heldout_v5.json

``bench/bench_router.py`` scores a turn by its **first** tool. A request about a patient named who is not the
active one ("any allergies recorded for maria garcia?") begins with the patient search by design (the patient is
found first, never the active one read in their place), and the action asked for follows in the same turn. A set
whose author labelled such turns by the action asked for counts every one of them wrong by first tool.

This bench runs each sure turn whose first tool is the search and whose label is another action through the app
(the embedded record, the rules-only demo model, the record's patient list: as ``python -m docgemma chat`` runs)
and reads what the turn did:

* **then the action**: the labelled tool ran after the search, or its approval card waits;
* **asked which patient**: the search found several patients of that name and asked (nothing else is done);
* **no such patient**: the search found none (nothing else is done);
* **stopped**: the search found the patient and nothing followed, or another action followed.

Results go to ``bench/results/results_router_then_<set>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench_router import _run, _save  # noqa: E402  (the bench folder's own module)

from docgemma.agent import decision  # noqa: E402
from docgemma.agent.assistant import Assistant  # noqa: E402
from docgemma.agent.demo_llm import demo_llm  # noqa: E402
from docgemma.agent.events import ApprovalRequest, TurnDone  # noqa: E402
from docgemma.ehr.service import Ehr  # noqa: E402
from docgemma.eval.router_corpus import Turn, generate, load_families  # noqa: E402
from docgemma.eval.train_router import corpus_state, demo_roster  # noqa: E402
from docgemma.tools.binding import ToolClients, bind_tools  # noqa: E402
from docgemma.tools.patient_roster import record_roster  # noqa: E402
from docgemma.tools.registry import default_registry  # noqa: E402
from docgemma.workspace import Workspace  # noqa: E402

OUTCOMES = ("then the action", "asked which patient", "no such patient", "stopped")


def _space(record: Path) -> Workspace:
    """The app's assistant on the embedded record with the rules-only demo model (no model call on a sure turn)."""
    ehr = Ehr.embedded(record)
    registry = bind_tools(default_registry(), ToolClients(record=ehr))
    return Workspace(Assistant(demo_llm(), registry, patient_context=ehr.patient_context,
                               patient_roster=record_roster(ehr)), ehr)


def outcome(space: Workspace, thread: str, turn: Turn) -> tuple[str, list[str]]:
    """What the turn did after the search: one of :data:`OUTCOMES`, and the tools (a card as ``card:<tool>``)."""
    known = {p.name: p for p in demo_roster().patients}
    if turn.active_name:
        patient = known[turn.active_name]
        space.select_patient(thread, {"id": patient.id, "name": patient.name})
    events = list(space.turn(thread, turn.text))
    results = [e.result for e in events if isinstance(e, TurnDone)]
    cards = [f"card:{e.request['tool']}" for e in events if isinstance(e, ApprovalRequest)]
    tools = [t["tool"] for r in results for t in r.tools] + cards
    if turn.label in tools or f"card:{turn.label}" in tools:
        return "then the action", tools
    if any(r.clarification for r in results):
        return "asked which patient", tools
    searches = [t for r in results for t in r.tools if t["tool"] == "search_patient"]
    if searches and all(t["status"] != "success" for t in searches):
        return "no such patient", tools
    return "stopped", tools


def rows(path: Path) -> list[dict[str, Any]]:
    """Each sure turn of the families that begins with the search and is labelled with another action."""
    registry, roster = default_registry(), demo_roster()
    search = next(s.name for s in registry if s.patient_search)
    out = []
    with tempfile.TemporaryDirectory() as folder:
        space = _space(Path(folder) / "record.sqlite")
        for i, turn in enumerate(generate(families=load_families(path))):
            decided = decision.decide(corpus_state(turn, roster), registry)
            if not decided["sure"] or decided["label"] != search or turn.label == search:
                continue
            done, tools = outcome(space, f"then-{i}", turn)
            out.append({"input": turn.text, "label": turn.label, "outcome": done, "tools": tools})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", type=Path, required=True)
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args(argv)
    found = rows(args.families)
    counts = Counter(r["outcome"] for r in found)
    run = _run(argv)
    run["command"] = run["command"].replace("bench_router.py", "bench_router_then.py")
    out = {**run, "set": args.families.name, "turns": len(found), "outcomes": {name: counts.get(name, 0) for name in OUTCOMES},
           "rows": found}  # every outcome, none left out for having no turn
    text = [f"# What a sure decision that begins with the patient search goes on to do: `{args.families.name}`", "",
            f"Command: `{out['command']}` (commit {out['commit']}, {out['date']})", "",
            f"Sure turns whose first tool is the patient search, labelled with another action: {len(found)}", "",
            "| outcome | turns |", "|---|---|"]
    text += [f"| {name} | {counts.get(name, 0)} |" for name in OUTCOMES]
    text += ["", "Stopped:", ""] + [f"- `{r['input']}` — asked for {r['label']}; did {r['tools']}"
                                    for r in found if r["outcome"] == "stopped"]
    body = "\n".join(text) + "\n"
    if not args.no_save:
        _save(f"results_router_then_{args.families.stem.removeprefix('router_families_')}", out, body)
    sys.stdout.write(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

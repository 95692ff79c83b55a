"""The lowest versions requirements.txt allows of the model stack, as exact pins (one per line).

    python scripts/floors.py        # transformers==5.18 accelerate==1.1 …

``bash scripts/dev.sh floors`` installs these in a second virtual environment and runs the backend's tests
(``-m floors``) there, so a lower bound in requirements.txt is a version that was tested, not a guess.
torch is not among them: the platforms bring their own, and CI keeps the CPU wheel of the main environment.
"""

from __future__ import annotations

import sys
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
#: What loads and runs a model on the transformers backend.
MODEL_STACK = ("transformers", "accelerate", "bitsandbytes", "llguidance")


def floors(text: str) -> dict[str, str]:
    """``{name: lowest allowed version}`` of the model stack in a requirements file's text."""
    found: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#")[0].strip()
        if not line or line.startswith("-"):
            continue
        req = Requirement(line)
        if req.name in MODEL_STACK and (req.marker is None or req.marker.evaluate()):
            (lower,) = [s.version for s in req.specifier if s.operator == ">="]
            found[req.name] = lower
    missing = set(MODEL_STACK) - set(found)
    if missing:
        raise SystemExit(f"requirements.txt has no lower bound for {', '.join(sorted(missing))}")
    return found


def main() -> int:
    print(" ".join(f"{name}=={version}" for name, version in floors((ROOT / "requirements.txt").read_text()).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

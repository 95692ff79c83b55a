"""What Kaggle needs to run the notebook by itself, built from the repository. Run from the root:

    python scripts/kaggle_bundle.py --owner NAME     # build/kaggle/{dataset,kernel}/, ready to upload (see below)
    python scripts/kaggle_bundle.py --check          # exits 1 if the committed metadata differs from what this builds

Writes the two metadata files (committed, for the default owner) to ``kaggle_submission/``:

* ``dataset-metadata.json``: the project's code as a Kaggle dataset (``DATASET_SLUG``);
* ``kernel-metadata.json``: the notebook, GPU T4 and internet on, with that dataset in ``dataset_sources`` and
  MedGemma from Kaggle Models in ``model_sources`` (``username/model-slug/framework/variation-slug/version-number``,
  the form of Kaggle's ``docs/kernels_metadata.md``), so Kaggle attaches both: nothing is added by hand.

and, unless ``--check``, the two upload folders under ``--out`` (``build/kaggle``, git-ignored):

* ``dataset/``: ``dataset-metadata.json`` and ``docgemma-connect.zip``, the files ``git ls-files`` lists (the work
  tree's copies; the recorded media left out) under one top folder. Kaggle unpacks an uploaded archive; the
  notebook also unpacks it itself if it finds the archive instead.
* ``kernel/``: ``kernel-metadata.json`` and the notebook.

Then: ``kaggle datasets create -p build/kaggle/dataset`` (later ``kaggle datasets version -p build/kaggle/dataset -m
"…"``) and ``kaggle kernels push -p build/kaggle/kernel`` (``kaggle_submission/README.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SUBMISSION = ROOT / "kaggle_submission"
NOTEBOOK = SUBMISSION / "docgemma_kaggle.ipynb"

#: The owner written into the committed metadata; ``--owner`` (or ``KAGGLE_USERNAME``) for a real upload.
DEFAULT_OWNER = "docgemma"
#: The code dataset's slug: Kaggle mounts it at ``/kaggle/input/<slug>/`` (``/kaggle/input/datasets/<owner>/<slug>/``
#: in its newer layout); the notebook's settings cell names the same slug (``DOCGEMMA_KAGGLE_DATASET``).
DATASET_SLUG = "docgemma-connect-code"
DATASET_TITLE = "DocGemma Connect code"
#: Kaggle derives a kernel's slug from its title (lower case, dashes for spaces): the two must agree.
KERNEL_TITLE = "DocGemma Connect"
KERNEL_SLUG = "docgemma-connect"
#: MedGemma 1.5 4B IT on Kaggle Models, Transformers weights; mounted at
#: ``/kaggle/input/medgemma/transformers/medgemma-1.5-4b-it/1/``.
MEDGEMMA_SOURCE = "google/medgemma/transformers/medgemma-1.5-4b-it/1"
#: Two T4s (Kaggle's "GPU T4 x2"); without it a GPU kernel may be given a P100, which Kaggle's torch cannot use.
MACHINE_SHAPE = "NvidiaTeslaT4"
ARCHIVE = "docgemma-connect.zip"
#: Recorded media: the walkthrough and screenshots are for reading on GitHub, not for running.
LEFT_OUT = (".mp4", ".png", ".gif", ".webm")


def dataset_metadata(owner: str) -> dict[str, Any]:
    return {
        "title": DATASET_TITLE,
        "subtitle": "The DocGemma Connect project, for its Kaggle notebook",
        "description": "The code of DocGemma Connect (a clinical decision-support agent on MedGemma 1.5 4B), "
                       "its synthetic demo record and tests, as the Kaggle notebook attaches it. Built by "
                       "scripts/kaggle_bundle.py from the repository's tracked files.",
        "id": f"{owner}/{DATASET_SLUG}",
        "licenses": [{"name": "apache-2.0"}],
        "keywords": ["healthcare", "nlp"],
    }


def kernel_metadata(owner: str) -> dict[str, Any]:
    return {
        "id": f"{owner}/{KERNEL_SLUG}",
        "title": KERNEL_TITLE,
        "code_file": NOTEBOOK.name,
        "language": "python",
        "kernel_type": "notebook",
        # Booleans as strings, as Kaggle's docs/kernels_metadata.md writes them.
        "is_private": "false",
        "enable_gpu": "true",
        "enable_tpu": "false",
        "enable_internet": "true",
        "dataset_sources": [f"{owner}/{DATASET_SLUG}"],
        "competition_sources": [],
        "kernel_sources": [],
        "model_sources": [MEDGEMMA_SOURCE],
        "machine_shape": MACHINE_SHAPE,
    }


def text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


def tracked_files(root: Path = ROOT) -> list[str]:
    """The repository's files as a dataset holds them: tracked and new files, not ignored ones, no media."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=root,
                            capture_output=True, check=True).stdout.decode().split("\0")
    return sorted(name for name in listed if name and (root / name).is_file() and not name.endswith(LEFT_OUT))


def write_archive(target: Path, root: Path = ROOT, top: str = "docgemma-connect") -> int:
    """``target``: a zip of :func:`tracked_files` under ``top/``; returns how many files it holds."""
    names = tracked_files(root)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in names:
            archive.write(root / name, f"{top}/{name}")
    return len(names)


def committed() -> dict[Path, str]:
    return {SUBMISSION / "dataset-metadata.json": text(dataset_metadata(DEFAULT_OWNER)),
            SUBMISSION / "kernel-metadata.json": text(kernel_metadata(DEFAULT_OWNER))}


def build(out: Path, owner: str) -> None:
    dataset, kernel = out / "dataset", out / "kernel"
    for folder in (dataset, kernel):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    (dataset / "dataset-metadata.json").write_text(text(dataset_metadata(owner)))
    count = write_archive(dataset / ARCHIVE)
    (kernel / "kernel-metadata.json").write_text(text(kernel_metadata(owner)))
    shutil.copy2(NOTEBOOK, kernel / NOTEBOOK.name)
    size = (dataset / ARCHIVE).stat().st_size / 2**20
    print(f"{dataset}: {ARCHIVE} ({count} files, {size:.1f} MiB) and dataset-metadata.json ({owner}/{DATASET_SLUG})")
    print(f"{kernel}: {NOTEBOOK.name} and kernel-metadata.json ({owner}/{KERNEL_SLUG}, model {MEDGEMMA_SOURCE})")
    print(f"then: kaggle datasets create -p {dataset}   # later: kaggle datasets version -p {dataset} -m 'update'")
    print(f"      kaggle kernels push -p {kernel}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--owner", default=os.environ.get("KAGGLE_USERNAME") or DEFAULT_OWNER,
                        help=f"your Kaggle username (default: $KAGGLE_USERNAME, else {DEFAULT_OWNER!r})")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "kaggle")
    parser.add_argument("--check", action="store_true", help="fail if the committed metadata is out of date")
    args = parser.parse_args()
    stale = [path for path, content in committed().items()
             if not path.exists() or path.read_text(encoding="utf-8") != content]
    if args.check:
        for path in stale:
            print(f"out of date: {path.relative_to(ROOT)} (run python scripts/kaggle_bundle.py)")
        return 1 if stale else 0
    for path, content in committed().items():
        path.write_text(content, encoding="utf-8")
    build(args.out, args.owner)
    return 0


if __name__ == "__main__":
    sys.exit(main())

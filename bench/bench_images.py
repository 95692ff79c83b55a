"""Uploads: peak memory (RSS) of decoding the largest accepted image, what happens to bigger ones, and how
much one image turn adds to the conversation checkpoint (SQLite).

Each decode runs in a fresh subprocess: the figure is that process's peak RSS (``ru_maxrss``) minus its
RSS after the imports, so earlier cases cannot hide a later one's peak. The images are written row by row
(never held in memory here): uniform PNGs, which is what a "decompression bomb" is, and at the pixel cap
the worst case per pixel (8-bit RGBA, 4 bytes a pixel before the RGB conversion).

The same script runs against an older checkout (``--label before`` with ``PYTHONPATH`` at that tree): it
only uses ``decode_image(filename, data, max_bytes)`` and ``Assistant.run_turn(thread, text,
{"filename", "data"})``, which both versions have. Results are merged into ``results_images.json`` under
the label.

    python bench/bench_images.py --label after
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout this script sits in
#: Pixel cap of the current code (50 MP): a 7071×7071 image is the largest square one accepted.
AT_CAP = 7071
#: (name, width, height, PNG colour type, channels, bit depth)
CASES = [
    ("rgba_7071x7071_at_cap", AT_CAP, AT_CAP, 6, 4, 8),
    ("grey1bit_7071x7071_at_cap", AT_CAP, AT_CAP, 0, 1, 1),
    ("grey1bit_7100x7100_just_over_cap", 7100, 7100, 0, 1, 1),
    ("grey1bit_12000x12000_issue", 12000, 12000, 0, 1, 1),
    ("rgba_12000x12000", 12000, 12000, 6, 4, 8),
    ("rgba_13370x13370_under_pil_limit", 13370, 13370, 6, 4, 8),  # 178.8 MP: the most the old code accepted
    ("grey1bit_14000x14000_issue", 14000, 14000, 0, 1, 1),
]

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from docgemma.images import decode_image
import PIL.Image, pydicom, numpy  # imported before the baseline, as in the app
path = Path(sys.argv[1])
data = path.read_bytes()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
try:
    image = decode_image(path.name, data, 20 * 1024 * 1024)
    outcome = {"accepted": True, "decoded_size": list(image.size)}
except Exception as exc:
    outcome = {"accepted": False, "error": f"{type(exc).__name__}: {exc}"}
outcome["seconds"] = round(time.perf_counter() - start, 2)
outcome["peak_rss_mb"] = round((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024, 1)
print(json.dumps(outcome))
"""


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def write_png(path: Path, width: int, height: int, colour_type: int, channels: int, depth: int) -> int:
    """A uniform PNG written row by row; returns its size in bytes."""
    row = b"\x00" + b"\x00" * ((width * channels * depth + 7) // 8)
    compressor = zlib.compressobj(9)
    with path.open("wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n")
        out.write(_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour_type, 0, 0, 0)))
        parts = [compressor.compress(row) for _ in range(height)]
        parts.append(compressor.flush())
        out.write(_chunk(b"IDAT", b"".join(parts)))
        out.write(_chunk(b"IEND", b""))
    return path.stat().st_size


def decode_cases(workdir: Path) -> list[dict[str, Any]]:
    results = []
    for name, width, height, colour_type, channels, depth in CASES:
        path = workdir / f"{name}.png"
        size = write_png(path, width, height, colour_type, channels, depth)
        run = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, check=False,
                             cwd=HERE.parent)
        if run.returncode != 0:
            last = run.stderr.strip().splitlines()[-1][:200] if run.stderr.strip() else ""
            outcome: dict[str, Any] = {"accepted": False, "error": f"process died ({run.returncode}): {last}"}
        else:
            outcome = json.loads(run.stdout.strip().splitlines()[-1])
        results.append({"case": name, "pixels_mp": round(width * height / 1e6, 1), "file_kb": round(size / 1024),
                        **outcome})
        path.unlink()
        print(f"{name:<36} {results[-1]}", file=sys.stderr)
    return results


def checkpoint_growth(workdir: Path) -> dict[str, Any]:
    """Bytes one image turn adds to conversations.sqlite (a 5 MB PNG of noise, which does not compress)."""
    import io

    import numpy as np
    from langgraph.checkpoint.sqlite import SqliteSaver
    from PIL import Image

    from docgemma.agent.assistant import Assistant
    from docgemma.agent.demo_llm import demo_llm
    from docgemma.config import Settings
    from docgemma.tools.registry import default_registry

    pixels = np.random.default_rng(0).integers(0, 256, (1300, 1300, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG", compress_level=1)
    image = buffer.getvalue()
    db = workdir / "conversations.sqlite"
    connection = sqlite3.connect(db, check_same_thread=False)
    saver = SqliteSaver(connection)
    saver.setup()

    def size() -> int:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the saver writes ahead: fold the log in first
        return db.stat().st_size

    assistant = Assistant(demo_llm(), default_registry(), saver, Settings(data_dir=workdir))
    assistant.run_turn("t", "What is hypertension?")
    before = size()
    assistant.run_turn("t", "What does this image show?", {"filename": "scan.png", "data": image})  # type: ignore[typeddict-item]
    after_one = size()
    assistant.run_turn("t", "And this one?", {"filename": "scan.png", "data": image})  # type: ignore[typeddict-item]
    after_two = size()
    return {"image_bytes": len(image), "db_bytes_before": before, "growth_first_image_turn": after_one - before,
            "growth_two_image_turns": after_two - before}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="after", help="key under which the results are stored")
    parser.add_argument("--out", default=str(HERE / "results" / "results_images.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-images-") as tmp:
        decodes = decode_cases(Path(tmp))
        checkpoint = checkpoint_growth(Path(tmp))
    accepted = [r for r in decodes if r["accepted"]]
    largest = max(accepted, key=lambda r: (r["pixels_mp"], r["peak_rss_mb"])) if accepted else None
    result = {
        "largest_accepted": largest and {k: largest[k] for k in ("case", "pixels_mp", "peak_rss_mb")},
        "max_peak_rss_mb_over_cases": max(r["peak_rss_mb"] for r in decodes if "peak_rss_mb" in r),
        "decode": decodes,
        "checkpoint": checkpoint,
    }
    out = Path(args.out)
    merged = json.loads(out.read_text()) if out.exists() else {}
    merged[args.label] = result
    out.write_text(json.dumps(merged, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Command line: ``python -m docgemma {chat,serve,golden,mcp,ehr,bench,experiment}``."""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from pathlib import Path

from docgemma.config import BACKENDS, ConfigError, Settings


def _chat(args: argparse.Namespace, settings: Settings) -> int:
    from docgemma.runtime import build_assistant
    from docgemma.ui.text import render_timeline

    assistant = build_assistant(settings)
    attachment = None
    if args.image:
        path = Path(args.image)
        attachment = {"filename": path.name, "data": path.read_bytes()}
    thread = args.thread or f"cli-{uuid.uuid4().hex[:8]}"
    events = assistant.stream_turn(thread, args.message, attachment)  # type: ignore[arg-type]
    while True:
        request = None
        for event in events:
            if event["type"] == "token":
                sys.stdout.write(event["text"])
                sys.stdout.flush()
            elif event["type"] == "approval":
                request = event["request"]
            elif event["type"] == "done":
                result = event["result"]
                print("\n\n" + render_timeline(result))
                return 0
        if request is None:
            return 1
        print(f"\n\nApproval needed:\n{request['preview']}")
        for warning in request.get("warnings", []):
            print(f"WARNING: {warning}")
        decision = args.approve
        if decision is None:
            decision = "approve" if sys.stdin.isatty() and input("Approve? [y/N] ").strip().lower() == "y" else "reject"
        events = assistant.stream_resume(thread, {"action": decision})


def _golden(args: argparse.Namespace, settings: Settings) -> int:
    from docgemma.golden import run_file

    llm = None
    if args.backend != "oracle":
        from docgemma.llm import make_llm

        llm = make_llm(Settings(**{**settings.__dict__, "backend": args.backend}))
    code = 0
    for file in args.files:
        if args.out:
            with open(args.out, "a", encoding="utf-8") as out:
                code |= run_file(Path(file), llm, out)
        else:
            code |= run_file(Path(file), llm)
    return code


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from docgemma.ui.app import launch

    launch(settings)
    return 0


def _mcp(args: argparse.Namespace, settings: Settings) -> int:
    from docgemma.runtime import build_registry
    from docgemma.tools.mcp_server import serve

    serve(build_registry(settings, in_process=True), args.transport, host=args.host, port=args.port,
          allow_writes=args.allow_writes)
    return 0


def _ehr(args: argparse.Namespace, settings: Settings) -> int:
    if args.ehr_command == "serve":
        from docgemma.ehr.server import serve

        serve(settings.data_dir / "record.sqlite", port=args.port)
        return 0
    from docgemma.ehr.load import load
    from docgemma.runtime import build_ehr

    counts = load(build_ehr(settings).client, Path(args.path))
    for kind, n in sorted(counts.items()):
        print(f"{kind:<24}{n:>8}")
    print(f"{'total':<24}{sum(counts.values()):>8}")
    return 0


def _bench(args: argparse.Namespace, settings: Settings) -> int:
    from docgemma.bench import main as bench_main

    return bench_main(json_output=args.json, with_model=not args.no_model)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(prog="python -m docgemma", description="DocGemma Connect")
    sub = parser.add_subparsers(dest="command", required=True)
    chat = sub.add_parser("chat", help="one turn in the terminal: the answer, then the reasoning timeline")
    chat.add_argument("message")
    chat.add_argument("--image", help="PNG, JPEG or DICOM file to attach")
    chat.add_argument("--thread", help="conversation id (continue an earlier conversation)")
    chat.add_argument("--approve", choices=["approve", "reject"], help="answer to a write approval")
    sub.add_parser("serve", help="the web app (same as python app.py)")
    golden = sub.add_parser("golden", help="run golden case files")
    golden.add_argument("files", nargs="+")
    golden.add_argument("--backend", default="oracle", choices=["oracle", *BACKENDS],
                        help="oracle (labels from the cases), or a model backend")
    golden.add_argument("--out", help="append one JSON line per turn to this file")
    mcp = sub.add_parser("mcp", help="serve the tool registry over MCP")
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    mcp.add_argument("--host", default="127.0.0.1")
    mcp.add_argument("--port", type=int, default=8765)
    mcp.add_argument("--allow-writes", action="store_true",
                     help="also expose the write tools (only for a caller that asks the clinician first)")
    ehr = sub.add_parser("ehr", help="the embedded FHIR record")
    ehr_sub = ehr.add_subparsers(dest="ehr_command", required=True)
    ehr_serve = ehr_sub.add_parser("serve", help="serve the embedded record as FHIR R4 REST on loopback")
    ehr_serve.add_argument("--port", type=int, default=8090)
    ehr_load = ehr_sub.add_parser("load", help="import Synthea bundles (*.json) and bulk NDJSON (*.ndjson)")
    ehr_load.add_argument("path")
    bench = sub.add_parser("bench", help="benchmarks (see bench/README.md)")
    bench.add_argument("--json", action="store_true")
    bench.add_argument("--no-model", action="store_true", help="skip the measurements that load the CPU model")
    from docgemma.experiments.cli import add_parser as add_experiment
    from docgemma.experiments.cli import run as experiment

    add_experiment(sub)
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        parser.error(str(exc))
    logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s")
    handlers = {"chat": _chat, "serve": _serve, "golden": _golden, "mcp": _mcp, "ehr": _ehr, "bench": _bench,
                "experiment": experiment}
    return handlers[args.command](args, settings)


if __name__ == "__main__":
    sys.exit(main())

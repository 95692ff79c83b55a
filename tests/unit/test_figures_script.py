"""``scripts/figures.py`` (issue 47): the one command that reruns every cheap bench, and the checks it makes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import figures  # noqa: E402


def test_each_rerun_is_a_command_here_and_rewrites_a_file_the_documents_read() -> None:
    for rerun in figures.reruns():
        script = rerun.argv[0]
        assert script == "-m" or (ROOT / script).is_file(), script
        for name in rerun.writes:
            assert (ROOT / "bench" / "results" / name).is_file(), name
    for name, code in figures.MEASURES.items():
        assert (ROOT / "bench" / "results" / name).is_file(), name
        assert code and all((ROOT / path).exists() for path in code), (name, code)


def test_a_rerun_that_moves_a_figure_is_reported_and_one_that_only_retimes_is_not(tmp_path: Path) -> None:
    committed = tmp_path / "committed.json"
    committed.write_text(json.dumps({"commit": "abc", "date": "2026-11-28", "refused": 62, "decide_ms_p50": 5.4,
                                     "rows": [{"seconds": 3.1, "written": 29, "wall_s": 8.6}]}))
    retimed = tmp_path / "retimed.json"
    # a run's wall-clock seconds (bench_rules' "wall_s") retime it: the fresh-clone CI reported three results stale
    retimed.write_text(json.dumps({"commit": "def", "date": "2026-12-02", "refused": 62, "decide_ms_p50": 2.6,
                                   "rows": [{"seconds": 9.9, "written": 29, "wall_s": 6.4}]}))
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps({"commit": "def", "date": "2026-12-02", "refused": 62, "decide_ms_p50": 5.4,
                                 "rows": [{"seconds": 3.1, "written": 28}]}))
    assert figures.same(committed, retimed)
    assert not figures.same(committed, moved)


def _git(repo: Path, *args: str, when: str = "2026-11-01T00:00:00") -> None:
    env = {"PATH": "/usr/bin:/bin", "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def test_a_results_file_older_than_the_code_it_measures_is_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / "bench" / "results").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "bench" / "bench_x.py").write_text("print(1)\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "bench")
    (repo / "bench" / "results" / "results_x.json").write_text("{}")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "results", when="2026-11-02T00:00:00")
    monkeypatch.setattr(figures, "MEASURES", {"results_x.json": ("bench/bench_x.py",)})
    assert figures.stale_by_age(repo) == []
    (repo / "bench" / "bench_x.py").write_text("print(2)\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "change", when="2026-11-03T00:00:00")
    (stale,) = figures.stale_by_age(repo)
    assert stale.startswith("results_x.json: written before the last change to bench/bench_x.py")


def test_ci_fails_on_a_results_file_older_than_its_code() -> None:
    # Issue 47: a figure is never older than what it measures. CI's figures phase passes --strict-age, so a dated
    # results file (scripts/figures.py MEASURES) fails it rather than being only said.
    dev = (Path(__file__).resolve().parents[2] / "scripts" / "dev.sh").read_text()
    assert "python scripts/figures.py --check --strict-age" in dev

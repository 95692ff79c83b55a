"""Tables (pandas: CSV + markdown), plots (matplotlib, Agg) and the markdown report of a run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from docgemma.eval.experiments.seed002 import numeric, reference

if TYPE_CHECKING:
    import pandas as pd

#: Optional per-trial score columns, averaged when a suite produces them.
SCORE_COLUMNS = ("exact", "args_correct", "tool_hint_correct", "decided", "n_suitable", "fact_rate", "leak", "empty",
                 "from_memory", "words", "judge_score")


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as exc:  # pragma: no cover - pandas is a runtime requirement
        raise ImportError("the experiment tables need pandas: pip install pandas") from exc
    return pandas


def table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per variant (per category when the suite has categories), in the suite's variant order."""
    pd = _pandas()
    frame = pd.DataFrame(records)
    keys = ["variant"] + (["category"] if "category" in frame.columns else [])
    order = list(dict.fromkeys(frame["variant"]))
    rows = []
    for key, group in frame.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row["n"] = len(group)
        row["accuracy"] = group["correct"].mean()
        for column in SCORE_COLUMNS:
            if column in group.columns and group[column].notna().any():
                row[column] = group[column].astype(float).mean()
        if "decided" in group.columns and group["decided"].notna().any():
            decided = group[group["decided"].fillna(False).astype(bool)]
            row["accuracy_when_decided"] = decided["correct"].mean() if len(decided) else float("nan")
        row["parse_errors"] = int(group["parse_error"].sum())
        row["llm_calls"] = group["llm_calls"].mean()
        row["prompt_tokens"] = group["prompt_tokens"].mean()
        row["latency_s"] = group["latency_s"].mean()
        suite = str(group["suite"].iloc[0])
        category = str(key[1]) if len(key) > 1 else None
        row["seed002"] = reference(suite, str(key[0]), category)
        row["seed002_value"] = numeric(suite, str(key[0]), category)
        rows.append(row)
    result = pd.DataFrame(rows)
    result = result[[c for c in result.columns if c not in ("seed002", "seed002_value")] + ["seed002", "seed002_value"]]
    result["_order"] = result["variant"].map(order.index)
    return result.sort_values(["_order", *keys[1:]]).drop(columns="_order").reset_index(drop=True)


def markdown(frame: pd.DataFrame) -> str:
    """A GitHub markdown table (no tabulate dependency)."""
    def cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            return "" if value != value else f"{value:.2f}"
        return str(value).replace("|", "\\|")
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def plots(frame: pd.DataFrame, suite: str, out: Path) -> list[Path]:
    """Accuracy by variant (the design study's figure as a marker where it is a percentage), latency by variant,
    and the suite's own view (temperature curve, model vs rule)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{v} ({c})" if "category" in frame.columns else str(v)
              for v, c in zip(frame["variant"], frame.get("category", frame["variant"]), strict=True)]
    paths = [_accuracy_plot(plt, frame, suite, labels, out), _latency_plot(plt, frame, suite, labels, out)]
    if suite == "synthesize" and "fact_rate" in frame.columns:
        temps = frame[frame["variant"].str.match(r"^t\d")]
        if len(temps):
            paths.append(_temperature_plot(plt, temps, out))
    if "category" in frame.columns:
        paths.append(_model_vs_rule_plot(plt, frame, suite, out))
    return paths


def _save(plt: Any, fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _accuracy_plot(plt: Any, frame: pd.DataFrame, suite: str, labels: list[str], out: Path) -> Path:
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(frame) + 2), 4))
    ax.bar(range(len(frame)), frame["accuracy"], color="#4c72b0", label="this run")
    marked = [(i, v) for i, v in enumerate(frame["seed002_value"]) if v == v and v is not None]
    for n, (i, value) in enumerate(marked):
        ax.plot(i, value, marker="_", markersize=22, mew=3, color="#c44e52",
                label="seed 002 (MedGemma 4B)" if n == 0 else None)
    ax.set_xticks(range(len(frame)), labels, rotation=35, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy")
    ax.set_title(f"{suite}: accuracy by variant")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return _save(plt, fig, out / f"{suite}_accuracy.png")


def _latency_plot(plt: Any, frame: pd.DataFrame, suite: str, labels: list[str], out: Path) -> Path:
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(frame) + 2), 3.5))
    ax.bar(range(len(frame)), frame["latency_s"], color="#55a868")
    ax.set_xticks(range(len(frame)), labels, rotation=35, ha="right")
    ax.set_ylabel("seconds per trial")
    ax.set_title(f"{suite}: latency by variant")
    return _save(plt, fig, out / f"{suite}_latency.png")


def _temperature_plot(plt: Any, temps: pd.DataFrame, out: Path) -> Path:
    xs = [float(str(v)[1:].split("_")[0]) for v in temps["variant"]]
    points = sorted(zip(xs, temps["fact_rate"], strict=True))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label="this run")
    ax.plot([0.5], [0.90], marker="*", markersize=14, color="#c44e52", linestyle="",
            label="seed 002 peak (T=0.5, 90%)")
    ax.set_xlabel("temperature")
    ax.set_ylabel("fact rate")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    ax.set_title("synthesize: fact rate by temperature")
    return _save(plt, fig, out / "synthesize_temperature.png")


def _model_vs_rule_plot(plt: Any, frame: pd.DataFrame, suite: str, out: Path) -> Path:
    pivot = frame.pivot_table(index="category", columns="variant", values="accuracy")
    ax = pivot.plot.bar(figsize=(6, 3.5), rot=0, color=["#c44e52", "#4c72b0"][: len(pivot.columns)])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy")
    ax.set_title("model vs rule on the decisions code owns")
    return _save(plt, ax.figure, out / f"{suite}_model_vs_rule.png")


def write_report(records: list[dict[str, Any]], suite_name: str, description: str, command: str, out: Path) -> Path:
    """CSV, markdown table, plots and ``report.md`` in ``out``; returns the report's path."""
    frame = table(records)
    models = sorted({str(r.get("model", "?")) for r in records if r.get("uses_model")}) or ["none (rules only)"]
    model_name = "; ".join(models)
    # The commands that produced the rows (a resumed or regenerated run may have several).
    commands = sorted({str(r["command"]) for r in records if r.get("command")}) or [command]
    frame.to_csv(out / f"{suite_name}.csv", index=False)
    md_table = markdown(frame)
    (out / f"{suite_name}.md").write_text(md_table + "\n", encoding="utf-8")
    figures = plots(frame, suite_name, out)
    lines = [
        f"# Experiment: {suite_name}", "",
        f"Model: **{model_name}**. Produced by: " + "; ".join(f"`{c}`" for c in commands) + ".", "",
        description, "",
        "Each row is one variant over the same cases (`n`); `accuracy` is the share scored correct; the "
        "`seed002` column is the figure seed 002 reports for MedGemma 4B (section given). A small CPU model's "
        "figures are expected to be far below MedGemma's: compare the *ordering* of variants, and rerun on a "
        "GPU with MedGemma for the real comparison.", "",
        md_table, "",
    ]
    lines += [f"![{p.stem}]({p.name})\n" for p in figures]
    lines += ["Every call is in `calls.jsonl` (variant, case, prompt tokens, output, latency, correct)."]
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path

"""Judge-versus-human agreement (docs/judge.md, "Measured agreement").

Per field: the agreement fraction, the constant-answer baseline (the agreement of
always answering the holdout's most common value, so a judge that always says
``medium`` cannot look accurate), Cohen's kappa and a confusion matrix.
A ``failure_mode`` of null is a class of its own.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from strands_robots.dataset.hub import accepts_repo_id
from strands_robots.episode_labels import checks
from strands_robots.episode_labels.document import query_document
from strands_robots.episode_labels.review import review_is_current
from strands_robots.episode_labels.vocab import FAILURE_MODES, QUALITY_GRADES, did_you_mean
from strands_robots.errors import LabelValidationError

_NULL = "null"  # how a null failure_mode is spelled in confusion matrices


def cohen_kappa(judge: list[Any], human: list[Any]) -> float | None:
    """Cohen's kappa of two equally long label lists; None when expected agreement is 1.

    ``kappa = (p_o - p_e) / (1 - p_e)``, ``p_e = sum_k p_judge(k) * p_human(k)``.
    """
    n = len(judge)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(judge, human, strict=True)) / n
    cj, ch = Counter(judge), Counter(human)
    expected = sum(cj[k] * ch[k] for k in set(cj) | set(ch)) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def _baseline(human: list[Any]) -> float | None:
    return Counter(human).most_common(1)[0][1] / len(human) if human else None


def _confusion(judge: list[Any], human: list[Any], classes: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """``matrix[human][judge]`` counts over ``classes``."""
    matrix = {h: dict.fromkeys(classes, 0) for h in classes}
    for j, h in zip(judge, human, strict=True):
        matrix[h][j] += 1
    return matrix


def _check_holdout(human_labels: Any) -> dict[int, dict[str, Any]]:
    if not isinstance(human_labels, dict) or not human_labels:
        raise LabelValidationError(
            "measure_agreement: human_labels must be a non-empty mapping of episode -> "
            "{'quality': ..., 'failure_mode': ...}."
        )
    holdout: dict[int, dict[str, Any]] = {}
    for raw_key, value in human_labels.items():
        key = int(raw_key) if isinstance(raw_key, str) and raw_key.isdigit() else raw_key
        index = checks.episode_index(key, f"human_labels key {raw_key!r}")
        if not isinstance(value, dict):
            raise LabelValidationError(f"human_labels[{raw_key!r}] must be a dict with quality and/or failure_mode.")
        unknown = set(value) - {"quality", "failure_mode"}
        if unknown or not value:
            raise LabelValidationError(
                f"human_labels[{raw_key!r}] must hold 'quality' and/or 'failure_mode' only, got {sorted(value)}."
            )
        entry: dict[str, Any] = {}
        if "quality" in value:
            grade = value["quality"]
            if not isinstance(grade, str) or grade not in QUALITY_GRADES:
                raise LabelValidationError(
                    f"measure_agreement: human_labels[{raw_key!r}] must be a dict with 'quality' in {QUALITY_GRADES}."
                    f"{did_you_mean(grade, QUALITY_GRADES)}"
                )
            entry["quality"] = grade
        if "failure_mode" in value:
            mode = value["failure_mode"]
            if mode is not None and (not isinstance(mode, str) or mode not in FAILURE_MODES):
                raise LabelValidationError(
                    f"measure_agreement: human_labels[{raw_key!r}]['failure_mode'] must be None or one of "
                    f"{FAILURE_MODES}, got {mode!r}. A tag outside the vocabulary never equals the judge's, so "
                    f"scoring it would understate the agreement.{did_you_mean(mode, FAILURE_MODES)}"
                )
            entry["failure_mode"] = mode
        holdout[index] = entry
    return holdout


def holdout_from_reviews(document: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Human grades from current review blocks: quality (and failure_mode with it)."""
    holdout: dict[int, dict[str, Any]] = {}
    for key, record in document["episodes"].items():
        if not review_is_current(record):
            continue
        review = record["review"]
        entry: dict[str, Any] = {}
        if review.get("quality") is not None:
            entry["quality"] = review["quality"]
            entry["failure_mode"] = review.get("failure_mode")
        elif review.get("failure_mode") is not None:
            entry["failure_mode"] = review["failure_mode"]
        if entry:
            holdout[int(key)] = entry
    return holdout


@accepts_repo_id
def measure_agreement(
    root: str | Path,
    human_labels: dict[Any, dict[str, Any]] | None = None,
    *,
    labels_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Compare the judge's labels with a human holdout.

    Args:
        root: Dataset root.
        human_labels: ``{episode: {"quality": ..., "failure_mode": ...}}`` (either field
            may be absent; JSON string keys accepted). ``None`` uses the human grades in
            current review blocks.
        labels_dir: Directory of the sidecar (default ``root``).

    Returns:
        ``episodes_compared``, ``quality_agreement``, ``quality_baseline``,
        ``quality_kappa``, ``quality_confusion`` (``[human][judge]`` counts),
        ``failure_mode_agreement``, ``failure_mode_baseline``, ``failure_mode_kappa``,
        ``failure_mode_confusion`` (null spelled ``"null"``), ``disagreements``
        (``{episode, field, judge, human}`` rows) and ``missing`` (holdout episodes
        with no judge block: reported, not scored; at least one holdout episode must
        be judged). A field no holdout entry carries has None values.

    Raises:
        LabelValidationError: empty or malformed holdout, or out-of-vocabulary values;
            no review grades when ``human_labels`` is None; no holdout episode has a judge
            block (agreement over nothing is not a measurement).
    """

    def compute(document: dict[str, Any]) -> dict[str, Any]:
        if human_labels is None:
            holdout = holdout_from_reviews(document)
            if not holdout:
                raise LabelValidationError(
                    "no human_labels given and no current review carries a grade; pass a holdout (CLI: "
                    "strands-labels agreement ROOT HUMAN.json) or grade episodes with review_episode(..., "
                    "decision='grade_only', quality=...) (CLI: strands-labels resolve ROOT EP --decision "
                    "grade_only --quality medium --reviewer NAME)."
                )
        else:
            holdout = _check_holdout(human_labels)
        columns: dict[str, tuple[list[Any], list[Any]]] = {"quality": ([], []), "failure_mode": ([], [])}
        disagreements, missing, compared = [], [], 0
        for index in sorted(holdout):
            record = document["episodes"].get(str(index)) or {}
            judge = record.get("judge")
            if not judge:
                missing.append(index)
                continue
            compared += 1
            for field, human_value in holdout[index].items():
                judge_value = judge.get(field)
                columns[field][0].append(judge_value)
                columns[field][1].append(human_value)
                if judge_value != human_value:
                    disagreements.append({"episode": index, "field": field, "judge": judge_value, "human": human_value})
        if compared == 0:
            raise LabelValidationError(
                f"measure_agreement: no holdout episode carries a judge annotation (holdout episodes {missing}); "
                "agreement over nothing is not a measurement. Annotate the holdout first (strands-labels judge "
                "ROOT --episodes ...) or pass a holdout of judged episodes."
            )
        result: dict[str, Any] = {"episodes_compared": compared}
        for field, classes in (("quality", QUALITY_GRADES), ("failure_mode", (_NULL, *FAILURE_MODES))):
            judged, human = columns[field]
            if field == "failure_mode":
                judged = [_NULL if v is None else v for v in judged]
                human = [_NULL if v is None else v for v in human]
            n = len(human)
            result[f"{field}_agreement"] = sum(a == b for a, b in zip(judged, human, strict=True)) / n if n else None
            result[f"{field}_baseline"] = _baseline(human)
            result[f"{field}_kappa"] = cohen_kappa(judged, human) if n else None
            result[f"{field}_confusion"] = _confusion(judged, human, classes) if n else None
        result["disagreements"] = disagreements
        result["missing"] = missing
        return result

    return query_document(root, compute, labels_dir)

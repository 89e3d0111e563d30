"""Judge-versus-human agreement (docs/judge.md, "Agreement with human labels").

Per field: the agreement fraction, the constant-answer baseline (the agreement of
always answering the holdout's most common value, so a judge that always says
``medium`` cannot look accurate), Cohen's kappa and a confusion matrix.
A ``failure_mode`` of null is a class of its own.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from strands_robots.episode_labels import checks
from strands_robots.episode_labels.document import query_document
from strands_robots.episode_labels.review import human_grade
from strands_robots.episode_labels.vocab import FAILURE_MODES, QUALITY_GRADES
from strands_robots.errors import LabelValidationError, did_you_mean, quoted
from strands_robots.storage.textfile import read_user_text

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


def _confusion(judge: list[Any], human: list[Any], classes: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """``matrix[human][judge]`` counts over ``classes``."""
    matrix = {h: dict.fromkeys(classes, 0) for h in classes}
    for j, h in zip(judge, human, strict=True):
        matrix[h][j] += 1
    return matrix


def _check_holdout(
    human_labels: Any, *, source: str | None = None, lines: dict[str, int] | None = None
) -> dict[int, dict[str, Any]]:
    """The holdout with int keys, every entry checked.

    ``source`` (a file a person passed) and ``lines`` (key -> line of the file) make every
    refusal name the file and the line instead of ``human_labels[...]``.
    """
    example = '{"3": {"quality": "high", "failure_mode": null}, "7": {"quality": "low"}}'
    if not isinstance(human_labels, dict) or not human_labels:
        if source is not None:
            raise LabelValidationError(
                f"{source} must hold a non-empty JSON object of episode -> human label, e.g. {example} "
                "(docs/judge.md, Agreement with human labels)."
            )
        raise LabelValidationError(
            "measure_agreement: human_labels must be a non-empty mapping of episode -> "
            "{'quality': ..., 'failure_mode': ...}."
        )
    holdout: dict[int, dict[str, Any]] = {}
    for raw_key, value in human_labels.items():
        here = None if source is None else f"{source} line {(lines or {}).get(str(raw_key), '?')}, episode {raw_key}"
        key = int(raw_key) if isinstance(raw_key, str) and raw_key.isdecimal() else raw_key
        index = checks.episode_index(key, f"human_labels key {raw_key!r}" if here is None else f"{here}: the key")
        label = f"human_labels[{raw_key!r}]" if here is None else f"{here}: the label"
        if not isinstance(value, dict):
            raise LabelValidationError(
                f"{label} must be a dict (a JSON object) with quality and/or failure_mode, e.g. "
                f'{{"quality": "high"}}; got {quoted(value)}.'
            )
        if not value or set(value) - {"quality", "failure_mode"}:
            raise LabelValidationError(
                f"{label} holds 'quality' and/or 'failure_mode' only, got {sorted(value)}; e.g. "
                f'{{"quality": "medium", "failure_mode": "near_miss"}}.'
            )
        entry: dict[str, Any] = {}
        if "quality" in value:
            grade = value["quality"]
            if not isinstance(grade, str) or grade not in QUALITY_GRADES:
                if here is not None:
                    raise LabelValidationError(
                        f"{here}: quality {grade!r} is not one of {', '.join(QUALITY_GRADES)}."
                        f"{did_you_mean(grade, QUALITY_GRADES)}"
                    )
                raise LabelValidationError(
                    f"measure_agreement: human_labels[{raw_key!r}] must be a dict with 'quality' in {QUALITY_GRADES}."
                    f"{did_you_mean(grade, QUALITY_GRADES)}"
                )
            entry["quality"] = grade
        if "failure_mode" in value:
            mode = value["failure_mode"]
            if mode is not None and (not isinstance(mode, str) or mode not in FAILURE_MODES):
                if here is not None:
                    raise LabelValidationError(
                        f"{here}: failure_mode {mode!r} is not null or one of {', '.join(FAILURE_MODES)}."
                        f"{did_you_mean(mode, FAILURE_MODES)} A tag outside the vocabulary never equals the judge's."
                    )
                raise LabelValidationError(
                    f"measure_agreement: human_labels[{raw_key!r}]['failure_mode'] must be None or one of "
                    f"{FAILURE_MODES}, got {mode!r}. A tag outside the vocabulary never equals the judge's, so "
                    f"scoring it would understate the agreement.{did_you_mean(mode, FAILURE_MODES)}"
                )
            entry["failure_mode"] = mode
        holdout[index] = entry
    return holdout


def _key_lines(text: str) -> dict[str, int]:
    """Line (1-based) of each key of the top-level JSON object in ``text`` (valid JSON)."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")

    def skip(i: int) -> int:
        match = ws.match(text, i)
        return match.end() if match else i

    i = skip(0)
    lines: dict[str, int] = {}
    if not text.startswith("{", i):
        return lines
    i = skip(i + 1)
    while text.startswith('"', i):
        key, end = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
        lines.setdefault(key, text.count("\n", 0, i) + 1)
        i = skip(skip(end) + 1)  # past ':'
        _, i = decoder.raw_decode(text, i)
        i = skip(i)
        if not text.startswith(",", i):
            break
        i = skip(i + 1)
    return lines


def read_human_labels(path: str | Path) -> dict[int, dict[str, Any]]:
    """Read a human-labels file (docs/judge.md, "Agreement with human labels").

    The file is one JSON object: episode index (as a string key) -> ``{"quality": ...,
    "failure_mode": ...}``, either field optional (a label without ``failure_mode`` is
    compared on quality only; ``"failure_mode": null`` says "no failure").

    Returns:
        The checked holdout, ``{episode: {"quality"?, "failure_mode"?}}``, ready for
        :func:`measure_agreement`.

    Raises:
        InputFileError: missing, a directory, not UTF-8, unreadable.
        LabelValidationError: not JSON, or a bad entry; the message names the file and
            the line of the entry.
    """
    path = Path(path)
    text = read_user_text(path, what="the human-labels file", kind="human-labels JSON file")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LabelValidationError(
            f"{path} is not valid JSON ({exc}); it holds one object of episode -> human label "
            "(docs/judge.md, Agreement with human labels)."
        ) from exc
    return _check_holdout(document, source=str(path), lines=_key_lines(text))


def holdout_from_reviews(document: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Human grades from review blocks (:func:`~.review.human_grade`): quality, and failure_mode where the
    review names one.

    A review that grades quality without a failure mode (``resolve --decision grade_only
    --quality medium``) is compared on quality only: it says nothing about the failure mode.
    """
    holdout: dict[int, dict[str, Any]] = {}
    for key, record in document["episodes"].items():
        grade = human_grade(record)
        if grade is None:
            continue
        entry = {field: value for field, value in grade.items() if value is not None}  # a grade alone: quality only
        if entry:
            holdout[int(key)] = entry
    return holdout


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
            result[f"{field}_baseline"] = Counter(human).most_common(1)[0][1] / n if n else None
            result[f"{field}_kappa"] = cohen_kappa(judged, human) if n else None
            result[f"{field}_confusion"] = _confusion(judged, human, classes) if n else None
        result["disagreements"] = disagreements
        result["missing"] = missing
        return result

    return query_document(root, compute, labels_dir)

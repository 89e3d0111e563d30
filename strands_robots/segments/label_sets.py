"""Label sets of your own: a file of labels becomes a template set (docs/segments.md, "Label sets of
your own": the file shapes and the limits on names and labels).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from strands_robots.arguments import plain_message
from strands_robots.errors import LabelValidationError
from strands_robots.segments.lexicon import operation_of
from strands_robots.segments.templates import (
    COHORTS,
    OPERATIONS,
    TASK_COMPLETE,
    Form,
    Template,
    register_cohort,
)
from strands_robots.storage.textfile import read_user_text

MAX_LABELS = 500
MAX_LABEL_CHARS = 100
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
_RESERVED = set("{}[]<>")


def _label(value: str) -> str:
    text = " ".join(value.split())
    if not text:
        raise ValueError("it is empty")
    if len(text) > MAX_LABEL_CHARS:
        raise ValueError(f"it has {len(text)} characters (at most {MAX_LABEL_CHARS})")
    if _RESERVED & set(text) or any(ord(c) < 32 for c in text):
        raise ValueError("it contains one of { } [ ] < > or a control character; write it as plain words")
    if text.lower() in (TASK_COMPLETE.lower(), "task complete"):
        raise ValueError(f"{TASK_COMPLETE} is in every set already; leave it out")
    return text


def _name(value: str) -> str:
    if not _NAME.fullmatch(value):
        raise ValueError("a set name is 1-40 letters, digits, '_', '.', '-', starting with a letter or digit")
    if value in COHORTS:
        raise ValueError(f"it is a built-in template set ({', '.join(COHORTS)}); pick another name")
    return value


def _unique(labels: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for label in labels:
        if label.lower() in seen:
            raise ValueError(f"{label!r} repeats {seen[label.lower()]!r} (labels are unique ignoring case)")
        seen[label.lower()] = label
    return labels


class LabelSet(BaseModel):
    """A user-defined label set: its name (the cohort) and its labels, in order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, AfterValidator(_name)]
    labels: Annotated[
        list[Annotated[str, AfterValidator(_label)]],
        Field(min_length=1, max_length=MAX_LABELS),
        AfterValidator(_unique),
    ]

    def templates(self) -> tuple[Template, ...]:
        """One slot-less template per label, in the cohort :attr:`name`."""
        return tuple(
            Template(
                id=f"{self.name}:{label}",
                operation=operation if (operation := operation_of(label.lower())) in OPERATIONS else "custom",
                surface=label,
                slots=(),
                forms=(Form(label),),
                examples=(label,),
                note=f"From the label set {self.name!r}.",
                cohorts=(self.name,),
            )
            for label in self.labels
        )


_EXAMPLE = '["reach", "grasp the cup", "wipe"] or {"name": "kitchen", "labels": ["reach", "grasp the cup"]}'
_KIND = "label set file (a JSON list or object, or one label per line)"


def _refusal(path: Path | str, exc: ValidationError, data: Any) -> LabelValidationError:
    problem = exc.errors(include_url=False)[0]
    message = plain_message(str(problem.get("msg", "invalid")))
    loc = [p for p in problem.get("loc", ()) if not (isinstance(p, str) and p.startswith("function-"))]
    where = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in loc).replace(".[", "[")
    shown = ""
    if len(loc) >= 2 and loc[0] == "labels" and isinstance(loc[1], int) and isinstance(data, dict):
        shown = f" ({data['labels'][loc[1]]!r})"
    return LabelValidationError(
        f"the label set {path} is refused: {where or 'the file'}{shown}: {message}. Fix the file; it holds {_EXAMPLE}, "
        "or plain text with one label per line."
    )


def parse_label_set(data: Any, *, source: str | Path = "label set", default_name: str | None = None) -> LabelSet:
    """A :class:`LabelSet` from a parsed document (a list of labels or ``{"name", "labels"}``).

    Raises:
        LabelValidationError: another shape, a bad name or label (names it and the remedy).
    """
    if isinstance(data, list):
        if default_name is None:
            raise LabelValidationError(f"the label set {source} is a bare list; give it a name: {_EXAMPLE}.")
        data = {"name": default_name, "labels": data}
    if not isinstance(data, dict):
        raise LabelValidationError(
            f"the label set {source} holds a JSON {type(data).__name__}; it must be a list of labels or an object: "
            f"{_EXAMPLE}."
        )
    try:
        return LabelSet.model_validate(data, strict=True)
    except ValidationError as exc:
        raise _refusal(source, exc, data) from None


def load_label_set(path: str | Path) -> LabelSet:
    """Read a label set file (JSON list, JSON object, or one label per line).

    Raises:
        InputFileError: the file does not exist, is a directory, is not UTF-8 or cannot be
            read (a :class:`LabelValidationError`; see :mod:`strands_robots.storage.textfile`).
        LabelValidationError: bad JSON, another shape, or a bad name or label.
    """
    path = Path(path)
    text = read_user_text(path, what="the label set file", kind=_KIND)
    default = re.sub(r"[^A-Za-z0-9_.-]+", "-", path.stem).strip("-._") or None
    if text.lstrip().startswith(("[", "{")) or path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LabelValidationError(
                f"the label set file {path} is not valid JSON ({exc}); it holds {_EXAMPLE}."
            ) from exc
    else:
        data = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return parse_label_set(data, source=path, default_name=default)


def register_label_set(label_set: LabelSet | str | Path) -> LabelSet:
    """Make a label set (or the file of one) a template set of this process.

    It replaces an earlier set of the same name. Returns the set (its ``name`` is the
    cohort to pass to the segment APIs and page).

    Raises:
        LabelValidationError: see :func:`load_label_set`.
    """
    if not isinstance(label_set, LabelSet):
        label_set = load_label_set(label_set)
    register_cohort(label_set.name, label_set.templates())
    return label_set


__all__ = ["LabelSet", "load_label_set", "parse_label_set", "register_label_set"]

"""Fixed vocabularies of the judge block (docs/sidecar-format.md, "judge").

Fixed so filters match on identity: a grade or tag outside these tuples is refused
everywhere (writers, readers, holdouts).
"""

from __future__ import annotations

from strands_robots.storage.side_files import LABELS

SCHEMA_VERSION = 1
#: The name strands-robots 0.5.3 exports for :data:`SCHEMA_VERSION`.
LABEL_SCHEMA_VERSION = SCHEMA_VERSION
SIDECAR_FILENAME = LABELS

QUALITY_GRADES: tuple[str, ...] = ("low", "medium", "high")

#: ``near_miss`` and ``wrong_but_lucky`` are legal on a successful episode on purpose:
#: they mark a success worth excluding from training data.
FAILURE_MODES: tuple[str, ...] = (
    "jerky_motion",
    "near_miss",
    "camera_occlusion",
    "wrong_but_lucky",
    "drift",
    "collision",
    "incomplete",
    "other",
)

#: Human review decisions (docs/sidecar-format.md, "review").
REVIEW_DECISIONS: tuple[str, ...] = ("uphold_verdict", "overrule_verdict", "grade_only")

QUALITY_RANK = {grade: rank for rank, grade in enumerate(QUALITY_GRADES)}
#: The label rules' drop reasons, in the order they are checked (the filter rule:
#: :mod:`strands_robots.episode_labels.filter_rule`).
LABEL_DROP_REASONS: tuple[str, ...] = ("unjudged", "no verdict", "failed", "overruled", "below quality", "disputed")

MAX_NOTE_CHARS = 10_000

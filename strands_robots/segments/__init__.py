"""Subtask segmentation with typed templates (docs/segments.md).

An episode's segmentation is a list of half-open ``[start, end)`` frame intervals that
cover every frame with no gap or overlap, each carrying one template instance. See
``docs/segments.md``.

- :mod:`.templates`: the registry as data (``TEMPLATES``).
- :mod:`.parse`: ``parse_label`` / ``render`` / ``make_instance``.
- :mod:`.normalize`: ``normalize_official_label``.
- :mod:`.validate`, :mod:`.rules`, :mod:`.findings`: ``validate_segmentation``;
  :mod:`.checks`: ``validate_episode`` (inputs from the dataset).
- :mod:`.store`: ``episode_segments.json`` (save, get, history, list, reference).
- :mod:`.pool`: label pool and reference examples; :mod:`.navigate`: base-motion prefill.
- :mod:`.imports`, :mod:`.export`, :mod:`.convert`, :mod:`.remap`.
"""

from strands_robots.segments.checks import validate_episode
from strands_robots.segments.convert import segments_to_subtasks
from strands_robots.segments.export import export_segmentations
from strands_robots.segments.findings import BLOCKING_KINDS, FINDING_KINDS, Finding
from strands_robots.segments.imports import ImportReport, import_segmentations
from strands_robots.segments.navigate import episode_base_velocity, find_base_velocity_feature, prefill_navigate
from strands_robots.segments.normalize import Normalized, normalize_official_label
from strands_robots.segments.parse import LabelParseError, TemplateInstance, make_instance, parse_label, render
from strands_robots.segments.pool import label_pool, reference_examples, template_choices
from strands_robots.segments.remap import remap
from strands_robots.segments.store import (
    SIDECAR_FILENAME,
    SaveResult,
    SegmentationRefused,
    check_readable,
    get_segmentation,
    list_segmentations,
    mark_reference,
    save_segmentation,
    segmentation_history,
    segments_path,
    stale_segmentations,
)
from strands_robots.segments.templates import COHORTS, OPERATIONS, TASK_COMPLETE, TEMPLATES, Template
from strands_robots.segments.validate import validate_segmentation

__all__ = [
    "BLOCKING_KINDS",
    "COHORTS",
    "FINDING_KINDS",
    "OPERATIONS",
    "SIDECAR_FILENAME",
    "TASK_COMPLETE",
    "TEMPLATES",
    "Finding",
    "ImportReport",
    "LabelParseError",
    "Normalized",
    "SaveResult",
    "SegmentationRefused",
    "Template",
    "TemplateInstance",
    "episode_base_velocity",
    "export_segmentations",
    "find_base_velocity_feature",
    "get_segmentation",
    "import_segmentations",
    "label_pool",
    "list_segmentations",
    "make_instance",
    "mark_reference",
    "normalize_official_label",
    "parse_label",
    "prefill_navigate",
    "reference_examples",
    "remap",
    "check_readable",
    "stale_segmentations",
    "render",
    "save_segmentation",
    "segmentation_history",
    "segments_path",
    "segments_to_subtasks",
    "template_choices",
    "validate_episode",
    "validate_segmentation",
]

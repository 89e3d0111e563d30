"""Subtask segmentation with typed templates (docs/segments.md; docs/architecture.md names each module)."""

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

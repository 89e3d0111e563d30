"""``meta/info.json``: parse and validate the dataset header.

Source of the rules: docs/dataset.md and the LeRobot v3.0 / v2.1 layouts as
written by ``lerobot`` itself (``../shared/datasets/lerobot-written-v30-video``).
"""

from __future__ import annotations

import json
import os
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from strands_robots.arguments import FPS, number_argument
from strands_robots.dataset.keys import INFO_JSON
from strands_robots.dataset.problems import HEADER, VERSION, Problem
from strands_robots.errors import DatasetError, UnsupportedVersionError, clipped, quoted

#: Default path templates when ``info.json`` has none (LeRobot's own defaults).
V3_DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
V3_VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
V2_DATA_PATH = "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"
V2_VIDEO_PATH = "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4"

#: Header counts cross-checked against the episodes metadata (problems, never raised).
TOTAL_KEYS = ("total_episodes", "total_frames", "total_tasks", "total_videos", "total_chunks")

#: Camera feature dtypes: ``video`` is stored in mp4 files, ``image`` as bytes in the parquet.
CAMERA_DTYPES = ("video", "image")


_VERSION_RE = re.compile(r"^v(\d+)\.(\d+)$")


@dataclass(frozen=True)
class DatasetInfo:
    """The validated header of one dataset.

    Attributes:
        raw: The parsed ``meta/info.json`` document, unchanged.
        codebase_version: Declared version (``"v3.0"``, ``"v3.1"``, ``"v2.1"``, ...) or, when
            the header has none, the version of the layout found on disk.
        major: 3 or 2.
        fps: Frames per second (> 0).
        features: Feature key -> feature spec (``dtype``, ``shape``, ``names``, ...).
        data_path: Path template of the data parquet files.
        video_path: Path template of the mp4 files (the header's, else LeRobot's default).
        chunks_size: Episodes per chunk directory (v2 path templates), or None.
        robot_type: ``robot_type`` from the header, or None.
        totals: The header counts that are valid integers (``total_episodes``, ...).
        problems: Header findings that do not stop reading (see ``problems.py``).
    """

    raw: dict[str, Any]
    codebase_version: str
    major: int
    fps: int | float
    features: dict[str, dict[str, Any]]
    data_path: str
    video_path: str
    chunks_size: int | None
    robot_type: str | None
    totals: dict[str, int] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()

    @property
    def camera_keys(self) -> tuple[str, ...]:
        """Sorted keys of every feature whose dtype is ``video`` or ``image``."""
        return tuple(sorted(k for k, f in self.features.items() if f.get("dtype") in CAMERA_DTYPES))

    @property
    def video_keys(self) -> tuple[str, ...]:
        """Sorted keys of the ``video`` features (stored as mp4)."""
        return tuple(sorted(k for k, f in self.features.items() if f.get("dtype") == "video"))


def load_info_document(root: Path) -> dict[str, Any]:
    """Read ``root/meta/info.json``.

    Raises:
        DatasetError: The file is missing, is not JSON, or is not a JSON object.
    """
    path = root / INFO_JSON
    if not os.path.isfile(path):  # False for a name too long to look up (Path.is_file raises there)
        raise DatasetError(
            f"{clipped(root)} is not a LeRobot dataset: {clipped(path)} not found. Pass the dataset root "
            "(the directory that holds meta/, data/ and videos/)."
        )
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path} is not valid JSON ({exc}); restore it from the dataset's source.") from exc
    if not isinstance(doc, dict):
        raise DatasetError(f"{path} holds a {type(doc).__name__}, not a JSON object; restore it.")
    return doc


def parse_version(value: Any, root: Path) -> tuple[str, int, tuple[Problem, ...]]:
    """Resolve ``codebase_version`` to ``(version, major, problems)``.

    A missing version is read from the layout: ``meta/episodes/*/*.parquet`` means v3.0
    (what the docs' toy example writes), ``meta/episodes.jsonl`` means v2.1.

    Raises:
        UnsupportedVersionError: Any version other than ``v3.*``, ``v2.1``, ``v2.0``, or no
            version and no recognisable layout.
    """
    if value is None:
        if any((root / "meta" / "episodes").glob("*/*.parquet")):
            version = "v3.0"
        elif (root / "meta" / "episodes.jsonl").is_file():
            version = "v2.1"
        elif not any((root / "data").glob("**/*.parquet")):
            raise UnsupportedVersionError(
                f"No data parquet under {root}/data and no episodes metadata (meta/episodes/*/*.parquet or "
                "meta/episodes.jsonl): the dataset holds no episode to read; restore its files (re-download it)."
            )
        else:
            raise UnsupportedVersionError(
                f"{root}/meta/info.json declares no codebase_version and the layout is neither v3.0 "
                "(meta/episodes/*/*.parquet) nor v2.1 (meta/episodes.jsonl); add the version to info.json."
            )
        note = Problem(
            VERSION,
            f"meta/info.json declares no codebase_version; read as {version} from the layout. "
            f'Add "codebase_version": "{version}" to the header.',
        )
        return version, int(version[1]), (note,)
    match = _VERSION_RE.match(value) if isinstance(value, str) else None
    if match is not None:
        major, minor = int(match.group(1)), int(match.group(2))
        if major == 3 or (major == 2 and minor in (0, 1)):
            return value, major, ()
    raise UnsupportedVersionError(
        f"{root}: codebase_version {quoted(value)} is not supported (this reader knows v3.*, v2.1 and v2.0). "
        "Convert the dataset with LeRobot's conversion scripts (e.g. lerobot's convert_dataset_v21_to_v30) "
        "or open it with a reader for that version."
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def feature_names(feature: dict[str, Any] | None) -> tuple[str, ...]:
    """Flatten a feature's ``names`` into one tuple of strings.

    LeRobot writes ``names`` as a flat list (``["x", "y"]``), a nested list (``[["x", "y"]]``,
    the g1 dataset), a dict (``{"motors": ["x", "y"]}``, older datasets) or null. Nested
    lists and dict values are flattened in order; null or absent gives ``()``.
    """
    return tuple(_flat(feature.get("names"))) if feature else ()


def _flat(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        node = list(node.values())
    if isinstance(node, list | tuple):
        for value in node:
            yield from _flat(value)
    elif node is not None:
        yield str(node)


def _check_counts(doc: dict[str, Any], path: Path) -> tuple[dict[str, int], list[Problem]]:
    totals: dict[str, int] = {}
    problems: list[Problem] = []
    for key in (*TOTAL_KEYS, "data_files_size_in_mb", "video_files_size_in_mb"):
        if key not in doc:
            continue
        value = doc[key]
        if _is_int(value) and value >= 0:
            if key in TOTAL_KEYS:
                totals[key] = value
            continue
        kind = "a boolean" if isinstance(value, bool) else f"{type(value).__name__} {quoted(value)}"
        problems.append(
            Problem(
                HEADER,
                f"meta/info.json: {key} is {kind}, not a non-negative integer; ignored. "
                "Rewrite the header count from the episodes metadata.",
            )
        )
    return totals, problems


def parse_info(doc: dict[str, Any], root: Path) -> DatasetInfo:
    """Validate a header document (see :func:`load_info_document`).

    Raises:
        UnsupportedVersionError: See :func:`parse_version`.
        DatasetError: ``fps`` missing, not a number or not > 0; ``features`` not an object or a feature not an object;
            a v2 ``chunks_size`` that is not a positive integer; a path template that is
            not a string or uses unknown placeholders.
    """
    path = root / INFO_JSON
    version, major, version_problems = parse_version(doc.get("codebase_version"), root)
    fps: Any = doc.get("fps")  # the limits of every fps argument (arguments.FPS), kept as written (30 stays an int)
    number_argument(
        fps,
        lambda _: DatasetError(
            f"{path}: fps is {quoted(fps)}; it must be a positive number of frames per second "
            '(e.g. "fps": 30). Fix the header.'
        ),
        FPS,
    )
    features = doc.get("features", {})
    if features is None:
        features = {}
    if not isinstance(features, dict) or not all(isinstance(v, dict) for v in features.values()):
        raise DatasetError(f"{path}: features must be an object of feature objects; fix the header.")
    totals, problems = _check_counts(doc, path)

    chunks_size = doc.get("chunks_size")
    if chunks_size is not None and not (_is_int(chunks_size) and chunks_size > 0):
        if major == 2:
            raise DatasetError(
                f"{path}: chunks_size is {quoted(chunks_size)}; v2 file paths need a positive integer "
                '(LeRobot writes "chunks_size": 1000). Fix the header.'
            )
        problems.append(Problem(HEADER, f"meta/info.json: chunks_size is {quoted(chunks_size)}; ignored."))
        chunks_size = None
    if major == 2 and chunks_size is None:
        chunks_size = 1000

    default_data, default_video = (V3_DATA_PATH, V3_VIDEO_PATH) if major == 3 else (V2_DATA_PATH, V2_VIDEO_PATH)
    data_path = doc.get("data_path") or default_data
    video_path = doc.get("video_path") or default_video
    for name, template, default in (("data_path", data_path, default_data), ("video_path", video_path, default_video)):
        _check_template(name, template, major, default, path)

    robot_type = doc.get("robot_type")
    return DatasetInfo(
        raw=doc,
        codebase_version=version,
        major=major,
        fps=fps,
        features=features,
        data_path=data_path,
        video_path=video_path,
        chunks_size=chunks_size,
        robot_type=robot_type if isinstance(robot_type, str) else None,
        totals=totals,
        problems=(*version_problems, *problems),
    )


#: The fields each major version's path templates may name (what LeRobot fills in).
TEMPLATE_FIELDS = {
    3: ("chunk_index", "file_index", "video_key"),
    2: ("episode_chunk", "episode_index", "video_key"),
}
#: Format spec of a number field: none, ``d`` or a zero-padded width (LeRobot writes ``03d`` and ``06d``).
_NUMBER_SPEC = re.compile(r"(0?[1-9][0-9]?)?d")
#: Widest number field accepted (an int64 has at most 19 digits and a sign).
MAX_TEMPLATE_WIDTH = 20


def _template_problem(template: str, major: int) -> str | None:
    """Why a path template is not one this reader fills, or None (see :func:`_check_template`)."""
    fields = TEMPLATE_FIELDS[major]
    try:
        pieces = list(string.Formatter().parse(template))
    except ValueError as exc:  # an unmatched brace
        return f"is not a format template ({exc})"
    for _literal, name, spec, conversion in pieces:
        if name is None:
            continue
        if name not in fields:
            return f"names the field {quoted(name)}; this v{major} reader fills only {', '.join(fields)}"
        if conversion is not None:
            return f"converts {name} with !{conversion}; LeRobot writes no conversion"
        if name == "video_key":
            if spec:
                return f"formats video_key with {quoted(spec)}; LeRobot writes {{video_key}} as is"
            continue
        width = spec[:-1].lstrip("0") if spec and _NUMBER_SPEC.fullmatch(spec) else None
        if spec and (width is None or int(width or 0) > MAX_TEMPLATE_WIDTH):
            return (
                f"formats {name} with {quoted(spec)}; only d or a zero-padded width up to "
                f"{MAX_TEMPLATE_WIDTH} (03d, 06d as LeRobot writes) is read"
            )
    return None


def _check_template(name: str, template: Any, major: int, example: str, path: Path) -> None:
    """Refuse a ``data_path``/``video_path`` this reader would not fill as LeRobot does
    (docs/dataset.md, "Path templates").

    Raises:
        DatasetError: it breaks the rule; the message quotes at most ~200 characters of it.
    """
    if not isinstance(template, str):
        raise DatasetError(f"{path}: {name} is {quoted(template)}, not a path template string; fix the header.")
    problem = _template_problem(template, major)
    if problem is not None:
        raise DatasetError(
            f"{path}: {name} {quoted(template)} {problem}. LeRobot writes e.g. {example!r}; fix the header."
        )
    parts = PurePosixPath(template.replace("\\", "/")).parts
    if template.startswith(("/", "\\", "~")) or (parts and ":" in parts[0]) or ".." in parts:
        raise DatasetError(
            f"{path}: {name} {quoted(template)} leads out of the dataset root (an absolute path or a '..' component); "
            f"LeRobot paths are relative to the root, e.g. {example!r}. "
            "Fix the header."
        )

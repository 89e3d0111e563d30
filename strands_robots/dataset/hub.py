"""Datasets named by Hugging Face repo id (``lerobot/pusht``): the local copy LeRobot uses.

The rules (what reads as a repo id, where its local copy and its labels live, what is
downloaded when, offline behaviour) are docs/dataset.md, "Datasets by repo id". This module
is cheap to import (no pyarrow); ``huggingface_hub`` is imported only when something is
downloaded.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard
from urllib.parse import quote

from strands_robots.dataset.cache import has_dataset_metadata
from strands_robots.dataset.keys import INFO_JSON
from strands_robots.errors import DatasetError, clipped, quoted

#: Revision a Hub dataset is downloaded at and its labels are keyed by when none is given.
DEFAULT_REVISION = "main"

_TRUE = {"1", "on", "yes", "true"}
_lock = threading.Lock()
_file_locks: dict[str, threading.Lock] = {}
_sources: dict[str, tuple[str, str | None]] = {}  # resolved local root -> (repo id, revision)


class HubDatasetError(DatasetError, FileNotFoundError):
    """A Hub dataset, or a file of it, is not in the local copy and cannot be downloaded now."""

    http_status = 409  # a missing file of the dataset, not a bad request


@dataclass(frozen=True)
class HubDataset:
    """A dataset named by repo id, resolved to its local copy.

    Attributes:
        repo_id: ``OWNER/NAME``.
        revision: The revision asked for (None: :data:`DEFAULT_REVISION`).
        root: The local copy (``$HF_LEROBOT_HOME/OWNER/NAME``).
        labels_dir: Default directory of its label sidecars (keyed by repo id and revision).
    """

    repo_id: str
    revision: str | None
    root: Path
    labels_dir: Path


_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")


#: Longest revision accepted (a branch or tag name; a commit id has 40 hex digits).
MAX_REVISION_CHARS = 255
_REVISION_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


def revision_problem(revision: str) -> str | None:
    """Why ``revision`` is not a Hub revision (a branch, tag or commit id held to git's rules for
    ref names, ``git check-ref-format``; docs/dataset.md, "Datasets by repo id"), or None. Such a
    revision can never name a directory other than its own once quoted into one path component.
    """
    if not revision:
        return "is empty"
    if len(revision) > MAX_REVISION_CHARS:
        return f"is {len(revision)} characters long (at most {MAX_REVISION_CHARS})"
    bad = _REVISION_FORBIDDEN.search(revision)
    if bad is not None:
        return f"holds {bad.group()!r}, which no git ref name may hold"
    if revision == "@" or "@{" in revision or ".." in revision or revision.endswith("."):
        return "is not a git ref name ('@', '@{', '..' and a trailing '.' are not allowed)"
    for part in revision.split("/"):
        if not part:
            return "has an empty path component (a leading, trailing or doubled '/')"
        if part.startswith(".") or part.endswith(".lock"):
            return f"has the component {part!r} (a ref name component never starts with '.' nor ends with '.lock')"
    return None


def check_revision(revision: str | None) -> str | None:
    """``revision`` when it is a Hub revision (see :func:`revision_problem`); None stays None.

    Raises:
        HubDatasetError: it is not (``..``, ``.``, a path, a space...), before any path is built.
    """
    if revision is None:
        return None
    if not isinstance(revision, str):
        raise HubDatasetError(f"a revision is text (a branch, tag or commit id), got {type(revision).__name__}.")
    problem = revision_problem(revision)
    if problem is not None:
        raise HubDatasetError(
            f"revision {quoted(revision)} {problem}; pass a branch, tag or commit id of the Hub dataset "
            "(e.g. main, v3.0, refs/pr/1)."
        )
    return revision


def split_revision(text: str) -> tuple[str, str | None]:
    """``"lerobot/pusht@v2.1"`` -> ``("lerobot/pusht", "v2.1")``; no ``@`` -> revision None."""
    name, sep, revision = text.partition("@")
    return name, (revision or None) if sep else None


def looks_like_repo_id(text: str) -> bool:
    """Whether ``text`` (without ``@REVISION``) has the shape of a Hub repo id ``OWNER/NAME``."""
    name = str(text).partition("@")[0]
    if name.count("/") != 1 or name[:1] in "/.~":  # cheap refusals: absolute, ./x, a/b/c
        return False
    return bool(_REPO_ID.fullmatch(name)) and ".." not in name


def offline() -> bool:
    """Whether downloads are forbidden (``HF_HUB_OFFLINE`` set to 1/true/yes/on)."""
    return (os.environ.get("HF_HUB_OFFLINE") or "").strip().lower() in _TRUE


def lerobot_home() -> Path:
    """Where LeRobot keeps datasets: ``HF_LEROBOT_HOME``, else ``$HF_HOME/lerobot``."""
    if os.environ.get("HF_LEROBOT_HOME"):
        return Path(os.environ["HF_LEROBOT_HOME"]).expanduser()
    hf_home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(hf_home).expanduser() / "lerobot"


def labels_home() -> Path:
    """Root of labels kept outside datasets: ``STRANDS_LABELS_HOME``, else ``$XDG_DATA_HOME/strands-labels``."""
    if os.environ.get("STRANDS_LABELS_HOME"):
        return Path(os.environ["STRANDS_LABELS_HOME"]).expanduser()
    return Path(os.environ.get("XDG_DATA_HOME") or "~/.local/share").expanduser() / "strands-labels"


def hub_labels_dir(repo_id: str, revision: str | None = None) -> Path:
    """Default labels directory of a Hub dataset: ``labels_home()/hub/OWNER/NAME/REVISION``.

    A revision with ``/`` (``refs/pr/1``) is percent-encoded into one path component.

    Raises:
        HubDatasetError: ``revision`` is not a Hub revision (:func:`check_revision`).
    """
    return labels_home() / "hub" / repo_id / quote(check_revision(revision) or DEFAULT_REVISION, safe="")


def _remedy(repo_id: str, revision: str | None, root: Path) -> str:
    rev = f" --revision {revision}" if revision else ""
    fetch = f"hf download {repo_id} --repo-type dataset{rev} --local-dir {root}"
    if offline():
        return f"unset HF_HUB_OFFLINE to let it be downloaded, or fetch it where the network is allowed: {fetch}"
    return f"fetch it where the network is allowed: {fetch}"


def resolve_hub_dataset(repo_id: str, revision: str | None = None) -> HubDataset:
    """The local copy of ``repo_id``, with its metadata downloaded when absent.

    Args:
        repo_id: ``OWNER/NAME`` (``OWNER/NAME@REVISION`` accepted when ``revision`` is None).
        revision: Branch, tag or commit (default :data:`DEFAULT_REVISION`).

    Returns:
        The :class:`HubDataset` (its ``root`` has ``meta/info.json``; its ``labels_dir``
        is created).

    Raises:
        HubDatasetError: not a repo id, or a revision that is not one (``..``: refused
            before any directory is made); or not in the local copy and offline, not on
            the Hub, or ``huggingface_hub`` missing (each message names the remedy).
    """
    name, inline = split_revision(repo_id)
    if revision is not None and inline is not None and revision != inline:
        raise HubDatasetError(
            f"{clipped(repo_id)} names revision {clipped(inline)} and revision {clipped(revision)} was given too; "
            "pass one of them."
        )
    revision = check_revision(revision or inline)
    if not looks_like_repo_id(name):
        raise HubDatasetError(f"{quoted(repo_id)} is not a dataset directory nor a Hub repo id like lerobot/pusht.")
    root = (lerobot_home() / name).resolve()
    if not has_dataset_metadata(root):
        if offline():
            raise HubDatasetError(
                f"{name} is not a dataset directory here, and as a Hub repo id it is not in the local copy "
                f"{root} while HF_HUB_OFFLINE is set; " + _remedy(name, revision, root) + "."
            )
        _download(name, revision, root, ["meta/**"])
        if not has_dataset_metadata(root):
            raise HubDatasetError(
                f"{name} on the Hub has no meta/info.json: it is not a LeRobot dataset (check the repo id)."
            )
    register_source(root, name, revision)
    labels_dir = hub_labels_dir(name, revision)
    try:
        labels_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HubDatasetError(
            f"cannot create the labels directory {labels_dir} of {name} ({exc}); set STRANDS_LABELS_HOME to a "
            "writable directory or pass --labels-dir."
        ) from exc
    return HubDataset(name, revision, root, labels_dir)


def _in_local_directory(name: str) -> bool:
    """Whether ``OWNER/NAME`` reads as a path here: ``./OWNER`` is an existing directory."""
    try:
        return Path(name.split("/", 1)[0]).is_dir()
    except OSError:
        return False


def resolve_root(root: str | os.PathLike[str], revision: str | None = None) -> tuple[Path, HubDataset | None]:
    """A ROOT as a person gives it: an existing path, or a repo id resolved to its local copy,
    by the five steps of docs/dataset.md, "Datasets by repo id" (a typo such as ``data/x``,
    where ``./data`` exists, is a path that does not exist, never a download).

    Returns:
        ``(absolute dataset root, HubDataset or None)``.

    Raises:
        HubDatasetError: as :func:`resolve_hub_dataset`; ``revision`` given for a path.
    """
    text = os.fspath(root)
    path = Path(text).expanduser()
    name, _ = split_revision(text)
    if (
        os.path.exists(path)  # False for a name too long to look up (Path.exists raises there)
        or not looks_like_repo_id(text)
        or (not has_dataset_metadata(lerobot_home() / name) and _in_local_directory(name))
    ):
        if revision is not None:
            raise HubDatasetError(
                f"--revision {clipped(revision)} applies to a Hub repo id, and {clipped(text)} is a local path."
            )
        return path.resolve(), None
    hub = resolve_hub_dataset(text, revision)
    return hub.root, hub


def _names_repo_id(root: object) -> TypeGuard[str]:
    """Whether a public API's ``root`` argument names a repo id: only a ``str`` of the repo-id shape
    that is not an existing path can (a :class:`pathlib.Path` is always a path)."""
    return type(root) is str and looks_like_repo_id(root) and not os.path.exists(os.path.expanduser(root))


def hub_dataset_of(root: object) -> HubDataset | None:
    """The Hub dataset a public API's ``root`` argument names (its local copy, metadata downloaded when
    absent and allowed: :func:`resolve_root`), or None when it is a path.

    Raises:
        HubDatasetError: as :func:`resolve_hub_dataset`.
    """
    return resolve_root(root)[1] if _names_repo_id(root) else None


def local_copy_of(root: object) -> object:
    """A repo id whose local copy is already here, as that copy's path; anything else unchanged.

    For roots a model chooses (the judge tools): they may name a downloaded Hub dataset
    (``"lerobot/pusht"``), but never make this process download one; the root checks
    then apply to the copy as to any path.

    Raises:
        HubDatasetError: the revision after ``@`` is not a Hub revision (:func:`check_revision`).
    """
    if not _names_repo_id(root):
        return root
    name, revision = split_revision(root)
    check_revision(revision)
    copy = (lerobot_home() / name).resolve()
    if not has_dataset_metadata(copy):
        return root
    register_source(copy, name, revision)
    return str(copy)


def hub_labels_dir_of(root: str | Path) -> Path | None:
    """The default labels dir of a Hub dataset's local copy (:func:`hub_source`), else None."""
    source = hub_source(root)
    return None if source is None else hub_labels_dir(*source)


def register_source(root: str | Path, repo_id: str, revision: str | None) -> None:
    """Tell this process that ``root`` is the local copy of ``repo_id`` (a Ray worker's setup)."""
    check_revision(revision)
    with _lock:
        _sources[str(Path(root).resolve())] = (repo_id, revision)


def hub_source(root: str | Path) -> tuple[str, str | None] | None:
    """``(repo id, revision)`` of a local copy under :func:`lerobot_home`, else None.

    Known when this process resolved it, or when ``huggingface_hub`` downloaded into it
    (the revision is then the commit its ``meta/info.json`` came from).
    """
    resolved = Path(root).resolve()
    with _lock:
        known = _sources.get(str(resolved))
    if known is not None:
        return known
    try:
        relative = resolved.relative_to(lerobot_home().resolve())
    except ValueError:
        return None
    if len(relative.parts) != 2 or not (resolved / ".cache" / "huggingface").is_dir():
        return None
    try:
        from huggingface_hub._local_folder import read_download_metadata
    except ImportError:
        return None
    metadata = read_download_metadata(resolved, INFO_JSON)
    return relative.as_posix(), metadata.commit_hash if metadata is not None else None


def fetch_missing(root: str | Path, path: str | Path) -> bool:
    """Download ``path`` (a file of the dataset at ``root``) if ``root`` is a Hub copy.

    The reader calls this before reporting a data or video file missing.

    Returns:
        True when the file is there now; False when ``root`` is not a Hub copy.

    Raises:
        HubDatasetError: offline, or the Hub does not have the file (remedy named).
    """
    source = hub_source(root)
    if source is None:
        return False
    target = Path(path)
    relative = target.resolve().relative_to(Path(root).resolve()).as_posix()
    with _lock:
        lock = _file_locks.setdefault(str(target), threading.Lock())
    with lock:
        if target.is_file():
            return True
        repo_id, revision = source
        if offline():
            raise HubDatasetError(
                f"{relative} of {repo_id} is not in the local copy {root} and HF_HUB_OFFLINE is set; "
                + _remedy(repo_id, revision, Path(root))
                + "."
            )
        _download(repo_id, revision, Path(root), [relative])
    if not target.is_file():
        raise HubDatasetError(f"{relative} is not in {repo_id} on the Hub; the dataset's metadata points to it.")
    return True


def _download(repo_id: str, revision: str | None, root: Path, patterns: list[str]) -> None:
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError
    except ImportError as exc:
        raise HubDatasetError(
            f"downloading {repo_id} needs huggingface_hub, which is not installed; run: pip install huggingface_hub"
        ) from exc
    try:
        snapshot_download(repo_id, repo_type="dataset", revision=revision, local_dir=root, allow_patterns=patterns)
    except RepositoryNotFoundError as exc:
        raise HubDatasetError(
            f"{repo_id} is not a dataset directory here nor a dataset on the Hub (if it is private, log in "
            "with `hf auth login`)."
        ) from exc
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as exc:
        raise HubDatasetError(
            f"downloading {patterns} of {repo_id} failed ({type(exc).__name__}: {exc}); check the network and "
            "the revision, or " + _remedy(repo_id, revision, root) + "."
        ) from exc

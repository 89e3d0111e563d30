"""A labels directory remembers which dataset its sidecars belong to.

With ``labels_dir=`` (CLI ``--labels-dir``) the first label store opened for a dataset with
LeRobot metadata writes ``.strands-labels/dataset-key.json`` (the dataset's root and the
fingerprint tokens of up to 64 of its episodes); a later store for another root whose
episodes share none of them is refused with :class:`LabelsDirMismatchError`
(docs/sidecar-format.md, "Labels directory"). Every store opens its sidecar through
:func:`require_directory` first: a dataset root or ``labels_dir`` that is not an existing
directory is one :class:`RootNotFoundError` for reads and writes alike.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from strands_robots.errors import LabelsDirMismatchError, RootNotFoundError, SidecarError
from strands_robots.storage.atomic import atomic_write_bytes, read_regular
from strands_robots.storage.codec import dump_canonical, load_json_bytes
from strands_robots.storage.record_store import file_identity
from strands_robots.storage.side_files import labels_dir_key_path, legacy_labels_dir_key_path

KEY_FORMAT = "strands-robots-labels/labels-dir"
KEY_VERSION = 1
SAMPLE_SIZE = 64

_checked: dict[tuple[str, str], tuple[Any, ...]] = {}
os.register_at_fork(after_in_child=_checked.clear)


def require_directory(directory: Path, what: str = "Dataset root") -> None:
    """Refuse a sidecar directory (the dataset root or ``labels_dir``) that does not exist.

    Args:
        directory: The directory the sidecar is in.
        what: What it is, for the message (``"Dataset root"`` or ``"Labels directory"``).

    Raises:
        RootNotFoundError: ``directory`` is not an existing directory.
        SidecarError: the path cannot even be looked at (a name too long for the file system).
    """
    try:
        is_dir = directory.is_dir()
    except OSError as exc:  # a name too long for the file system, a component that is not a directory
        raise SidecarError(
            f"{str(directory)[:120]}... cannot be used ({exc.strerror or exc}); pass an existing dataset root "
            "(or labels_dir=) with a shorter path."
        ) from exc
    if not is_dir and what != "Dataset root":
        raise RootNotFoundError(
            f"{what} {directory} is not an existing directory, so it holds no labels yet; record verdicts there "
            "first (it is created by the first write when its parent exists), or pass the labels directory you "
            "used before."
        )
    if not is_dir:
        raise RootNotFoundError(
            f"Dataset root {directory} is not an existing directory; nothing to label. Pass an existing "
            "dataset root (or labels_dir=)."
        )


#: How a Python caller keeps labels elsewhere, and declares a labels-only root (the CLI
#: names ``--labels-dir DIR`` and ``--total-episodes N``).
LABELS_DIR_PYTHON = "labels_dir=DIR (CLI: --labels-dir DIR)"
LABELS_ONLY_PYTHON = "total_episodes=N (CLI: --total-episodes N)"


def require_dataset_root(
    root: str | Path,
    total_episodes: Any = None,
    *,
    writer: str = "this write",
    elsewhere: str = LABELS_DIR_PYTHON,
    declare: str = LABELS_ONLY_PYTHON,
) -> int | None:
    """Refuse to write labels into a root that is not a LeRobot dataset unless the caller
    declares it a labels-only root (docs/sidecar-format.md, "Writes only into a dataset").

    Args:
        root: The dataset root the labels are for.
        total_episodes: The episode count of the dataset a labels-only root labels (None: the
            root must hold ``meta/info.json``); a whole number of at least 1.
        writer: What writes, for the message (``"`strands-labels verdicts`"``).
        elsewhere: How the caller keeps labels in another directory, for the message.
        declare: How the caller declares a labels-only root, for the message.

    Returns:
        ``total_episodes`` when ``root`` has no LeRobot metadata (episodes at or past it are
        not the dataset's), else None.

    Raises:
        LabelValidationError: ``root`` has no ``meta/info.json`` and no ``total_episodes``
            was given, or ``total_episodes`` is not a whole number of at least 1. Nothing
            is created.
    """
    from strands_robots.arguments import int_argument
    from strands_robots.dataset.cache import has_dataset_metadata
    from strands_robots.errors import LabelValidationError, clipped, quoted

    if total_episodes is not None:
        total_episodes = int_argument(
            total_episodes,
            lambda value: LabelValidationError(
                f"total_episodes={quoted(value)} is not a whole number of at least 1; pass the episode count of "
                "the dataset the labels-only root labels."
            ),
            minimum=1,
        )
    if has_dataset_metadata(root):
        return None
    if total_episodes is not None:
        return total_episodes
    raise LabelValidationError(
        f"{clipped(root)} has no LeRobot metadata (meta/info.json), so it is not a dataset and {writer} writes "
        f"nothing there. Pass the dataset root (the folder holding meta/; {elsewhere} keeps the labels "
        f"elsewhere), or {declare} if it is a labels-only directory of a dataset with N episodes."
    )


def create_labels_dir(directory: Path) -> None:
    """Create a missing ``labels_dir`` for a first write (its parent must exist).

    Raises:
        RootNotFoundError: the parent does not exist either (named in the message).
        StorageError: the directory cannot be created (permissions).
    """
    if directory.is_dir():
        return
    if not directory.parent.is_dir():
        raise RootNotFoundError(
            f"Labels directory {directory} does not exist and cannot be created: its parent {directory.parent} "
            "is not an existing directory. Create the parent first, or pass another --labels-dir (labels_dir=)."
        )
    try:
        directory.mkdir(exist_ok=True)
    except OSError as exc:
        from strands_robots.errors import StorageError

        raise StorageError(f"cannot create the labels directory {directory} ({exc.strerror or exc}).") from exc


def _sample_positions(count: int) -> list[int]:
    if count <= SAMPLE_SIZE:
        return list(range(count))
    return sorted({i * (count - 1) // (SAMPLE_SIZE - 1) for i in range(SAMPLE_SIZE)})


def dataset_key(dataset: Any) -> dict[str, Any]:
    """The key of an opened dataset (what the key file stores)."""
    from strands_robots.fingerprint.columns import fingerprinter_of

    fingerprinter = fingerprinter_of(dataset)
    episodes = sorted(dataset.episodes)
    sample = [fingerprinter.token(episodes[i]) for i in _sample_positions(len(episodes))]
    return {
        "format": KEY_FORMAT,
        "version": KEY_VERSION,
        "root": os.path.abspath(dataset.root),
        "episodes": len(episodes),
        "sample": sample,
    }


def _read_key(path: Path) -> dict[str, Any] | None:
    try:
        data = read_regular(path)
    except (OSError, SidecarError):
        return None
    try:
        key = load_json_bytes(data, path)
    except Exception:  # a torn or foreign key file only loses the check; it is rewritten
        return None
    if not isinstance(key, dict) or key.get("format") != KEY_FORMAT or not isinstance(key.get("sample"), list):
        return None
    return key


def check_labels_dir(root: str | Path, labels_dir: str | Path | None, *, write_key: bool = True) -> None:
    """Refuse a labels directory that holds another dataset's labels; key a new one.

    A no-op without ``labels_dir``, when it is the dataset root, or when ``root`` has no
    LeRobot metadata (nothing to recognise the dataset by). Cached per process while the
    key file and the dataset's metadata are unchanged. ``write_key=False`` (a read) only
    checks: a read never creates a file.

    Raises:
        LabelsDirMismatchError: the directory is keyed to another dataset; the message
            names both and the remedy (a different ``--labels-dir``).
    """
    if labels_dir is None:
        return
    from strands_robots.dataset.cache import has_dataset_metadata, metadata_signature

    root_abs, dir_abs = os.path.abspath(root), os.path.abspath(labels_dir)
    if root_abs == dir_abs or not has_dataset_metadata(root_abs):
        return

    path = labels_dir_key_path(dir_abs)
    stamp = (file_identity(path), metadata_signature(root_abs))
    if _checked.get((root_abs, dir_abs)) == stamp:  # (one dict operation: safe between threads)
        return
    key = _read_key(path)
    if key is None:
        key = _adopt_legacy_key(dir_abs, path)
    if key is None or key.get("root") != root_abs:
        from strands_robots.dataset.cache import cached_dataset
        from strands_robots.fingerprint.columns import fingerprinter_of

        dataset = cached_dataset(root_abs)
        if key is None and not write_key:
            return  # a read of an unkeyed directory: nothing to compare, nothing written
        token = fingerprinter_of(dataset).token
        if key is None:
            with contextlib.suppress(OSError):  # a read-only directory: nothing can be written there either
                atomic_write_bytes(path, dump_canonical(dataset_key(dataset)))
        elif key["sample"] and not set(key["sample"]) & {token(e) for e in dataset.episodes}:
            raise LabelsDirMismatchError(
                f"{dir_abs} holds the labels of another dataset ({key.get('root')}, {key.get('episodes')} "
                f"episodes), not of {root_abs}: none of its episodes match (fingerprints). Use a different "
                f"--labels-dir (labels_dir=) for {root_abs}. If it is that same dataset moved or rebuilt, delete "
                f"{path} to key the directory to it. Nothing was changed."
            )
        stamp = (file_identity(path), metadata_signature(root_abs))
    _checked[(root_abs, dir_abs)] = stamp


def _adopt_legacy_key(directory: str, path: Path) -> dict[str, Any] | None:
    """The key an earlier version kept in the directory itself, moved into the state folder."""
    legacy = legacy_labels_dir_key_path(directory)
    key = _read_key(legacy)
    if key is not None:
        with contextlib.suppress(OSError, SidecarError):  # read-only: it is read from there again next time
            atomic_write_bytes(path, dump_canonical(key))
            os.unlink(legacy)
    return key

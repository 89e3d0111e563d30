"""``episode_outcomes.jsonl``: every version of every outcome label, append-only, and its
per-process index (docs/outcomes.md, "Storage": the header, outcome and remap lines, the
refusal of a foreign or newer file, the index that reads only appended lines; whether it
still holds is :func:`strands_robots.storage.registry.appended_since`).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from strands_robots.arguments import path_argument
from strands_robots.errors import SidecarError
from strands_robots.storage.atomic import check_target
from strands_robots.storage.jsonl import append_jsonl, read_jsonl
from strands_robots.storage.lock import sidecar_lock
from strands_robots.storage.registry import ProcessRegistry, appended_since, file_identity
from strands_robots.storage.side_files import OUTCOMES

SIDECAR_NAME = OUTCOMES
FORMAT = "strands-robots-labels/episode_outcomes"
FORMAT_VERSION = 1
HEADER: dict[str, Any] = {"kind": "header", "format": FORMAT, "version": FORMAT_VERSION}


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small containers.

    Parsing or copying 100,000 labels allocates millions of dicts and lists; each
    allocation burst triggers full collections that rescan everything already loaded,
    which made reads about three times slower. Labels hold no reference cycles.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def outcomes_path(root: str | Path, labels_dir: str | Path | None = None) -> Path:
    """``<labels_dir or root>/episode_outcomes.jsonl``."""
    root = path_argument(root, "root")
    return (root if labels_dir is None else path_argument(labels_dir, "labels_dir")) / SIDECAR_NAME


def open_outcome_store(root: str | Path, labels_dir: str | Path | None = None) -> OutcomeStore:
    """The process-wide store of this dataset's ``episode_outcomes.jsonl``.

    Raises:
        RootNotFoundError: ``root`` is not an existing directory (without ``labels_dir``).
        LabelsDirMismatchError: ``labels_dir`` holds another dataset's labels
            (:func:`strands_robots.storage.labels_dir.check_labels_dir`).
    """
    from strands_robots.storage.labels_dir import check_labels_dir, require_directory

    path = outcomes_path(root, labels_dir)
    if labels_dir is None:
        require_directory(path.parent)  # the dataset root
    elif path.parent.is_dir():
        check_labels_dir(root, labels_dir, write_key=path.exists())  # a read of no labels creates nothing
    # a labels_dir that does not exist yet reads as no labels and is created by the first write
    return OutcomeStore.open(path)


class OutcomeStore:
    """The cached index of one ``episode_outcomes.jsonl``; use :meth:`open`.

    Attributes:
        path: The JSON Lines file.
        versions: episode_index -> stored version records, oldest first. Internal and
            shared: callers copy what they hand out (see ``labels.public_label``).
    """

    _registry: ProcessRegistry[OutcomeStore] = ProcessRegistry()

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._reset()

    @classmethod
    def open(cls, path: Path) -> OutcomeStore:
        """The process-wide store of ``path`` (it carries the index)."""
        return cls._registry.get(path, cls)

    # -- reading ---------------------------------------------------------------------------------

    def _reset(self) -> None:
        self.versions: dict[int, list[dict[str, Any]]] = {}
        self._ino: int | None = None  # inode of the file the index was read from
        self._offset = 0

    def refresh(self) -> OutcomeStore:
        """Bring the index up to date with the file, reading only what was appended.

        Raises:
            SidecarError: the file is not an outcome sidecar (foreign or newer format), is
                not a regular file, or a complete line is not valid JSON.
        """
        with self._lock:
            check_target(self.path)
            identity = file_identity(self.path)  # (inode, size, mtime_ns)
            if identity is None:
                self._reset()
                return self
            if not appended_since(self.path, identity, self._ino, self._offset):
                self._reset()
                self._ino = identity[0]
            if identity[1] == self._offset:
                return self
            try:
                with paused_gc():
                    records, end = read_jsonl(self.path, offset=self._offset)
                    self._apply(records, first=self._offset == 0)
            except BaseException:
                self._reset()
                raise
            self._offset = end
            return self

    def _foreign(self, why: str) -> SidecarError:
        return SidecarError(
            f"{self.path} {why}. It was left untouched; move it away (or pass labels_dir= / --labels-dir to keep "
            "outcome labels elsewhere) and record the labels again."
        )

    def _apply(self, records: list[Any], *, first: bool) -> None:
        for n, record in enumerate(records):
            if first and n == 0:
                self._check_header(record)
                continue
            if not isinstance(record, dict):
                raise self._foreign(f"holds a line that is not a JSON object ({str(record)[:40]!r})")
            kind = record.get("kind")
            if kind == "outcome":
                episode = record.get("episode_index")
                if (
                    not isinstance(episode, int)
                    or isinstance(episode, bool)
                    or not isinstance(record.get("version"), int)
                ):
                    raise self._foreign("holds an outcome line without an integer episode_index and version")
                self.versions.setdefault(episode, []).append(record)
            elif kind == "remap":
                self._apply_remap(record.get("mapping"))
            else:
                raise self._foreign(f"holds a line of unknown kind {kind!r} (written by a newer version?)")

    def _check_header(self, record: Any) -> None:
        if not isinstance(record, dict) or record.get("kind") != "header" or record.get("format") != FORMAT:
            raise self._foreign(f"is not an outcome sidecar (its first line is not the {FORMAT} header)")
        version = record.get("version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise self._foreign(
                f"has format version {version!r}; this strands-robots-labels reads version {FORMAT_VERSION}. "
                "Upgrade strands-robots-labels"
            )

    def _apply_remap(self, mapping: Any) -> None:
        if not isinstance(mapping, dict):
            raise self._foreign("holds a remap line without a mapping")
        moved: dict[int, list[dict[str, Any]]] = {}
        for old, versions in self.versions.items():
            new = mapping.get(str(old))
            if new is None:
                continue  # deleted by the dataset edit
            if not isinstance(new, int) or new in moved:
                raise self._foreign(f"holds a remap line that maps two episodes to {new!r}")
            moved[new] = versions
        self.versions = moved

    # -- writing ---------------------------------------------------------------------------------

    def write(self, build: Callable[[OutcomeStore], tuple[list[dict[str, Any]], Any]]) -> Any:
        """Append the records ``build(self)`` returns, under the lock, after a refresh.

        ``build`` sees the up-to-date index, raises before anything is written when the
        input is bad, and returns ``(records, result)``. The records are appended with one
        fsynced write (the header first when the file is new) and applied to the index.

        Returns:
            ``result`` from ``build``.

        Raises:
            SidecarError: see :meth:`refresh`; a foreign file is never appended to.
            StorageError: the append failed; the file is cut back to its previous end.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, sidecar_lock(self.path):
            self.refresh()
            records, result = build(self)
            if not records:
                return result
            new_file = self._offset == 0
            lines = [HEADER, *records] if new_file else records
            try:
                end = append_jsonl(self.path, lines, valid_end=self._offset)
                identity = file_identity(self.path)
            except BaseException:
                self._reset()
                raise
            self._ino = identity[0] if identity is not None else None
            self._apply(lines, first=new_file)
            self._offset = end
            return result

    @property
    def end(self) -> int:
        """Byte offset just after the last complete line read by the last :meth:`refresh`."""
        return self._offset

    def current(self, episode: int) -> dict[str, Any] | None:
        """The stored current version of ``episode`` (internal object: do not mutate) or None."""
        versions = self.versions.get(episode)
        return versions[-1] if versions else None

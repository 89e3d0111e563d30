"""Root safety for tools whose arguments a model chooses (docs/judge.md, "Root safety").

A model-chosen ``root`` is accepted only when it is a plain path (no NUL, no ``..``) to an
existing LeRobot dataset root, outside the system directories and inside the allow-list
when one is in force (``create_judge_agent(roots=[...])``, else ``STRANDS_LABELS_ROOTS``
read at each call); every file a tool then opens must resolve inside it too
(:func:`check_dataset_files`, :func:`check_file_inside`).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath

from strands_robots.dataset.cache import has_dataset_metadata
from strands_robots.errors import UnsafeRootError, clipped, quoted

#: Environment variable with the allow-list of the module-level tools.
ROOTS_ENV = "STRANDS_LABELS_ROOTS"

#: Directories that are never a dataset root, nor is anything inside them.
SYSTEM_DIRS: tuple[Path, ...] = tuple(
    Path(p)
    for p in (
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/proc",
        "/run",
        "/sbin",
        "/sys",
        "/usr",
        "/var/log",
        "/var/run",
        "/System",
        "/private/etc",
    )
)


_SYSTEM = frozenset(str(d) for d in SYSTEM_DIRS)
_SYSTEM_PREFIXES = tuple(d + os.sep for d in _SYSTEM)


def _inside(real: str, parent: str) -> bool:
    return real == parent or real.startswith(parent if parent.endswith(os.sep) else parent + os.sep)


def _is_system(real: str) -> bool:
    return real == os.path.dirname(real) or real in _SYSTEM or real.startswith(_SYSTEM_PREFIXES)


def _checked_text(root: object, what: str) -> str:
    if isinstance(root, PurePath):
        root = str(root)
    if not isinstance(root, str):
        raise UnsafeRootError(f"{what} must be a path string, got {type(root).__name__}; pass the dataset directory.")
    if not root.strip():
        raise UnsafeRootError(f"{what} is empty; pass the dataset directory (it holds meta/info.json).")
    if "\x00" in root:
        raise UnsafeRootError(f"{what} contains a NUL byte; pass a plain dataset directory path.")
    if ".." in root.split(os.sep):
        raise UnsafeRootError(
            f"{what} {quoted(root)} has a '..' component; pass the dataset directory itself, without '..'."
        )
    try:
        root.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UnsafeRootError(
            f"{what} {quoted(root)} is not valid Unicode ({exc.reason}); pass a real directory path."
        ) from exc
    return root


def _realpath(text: str, what: str) -> str:
    try:
        return os.path.realpath(os.path.expanduser(text), strict=False)
    except (OSError, ValueError, RuntimeError) as exc:  # over-long name, symlink loop, unreadable component
        raise UnsafeRootError(
            f"{what} {quoted(text)} cannot be resolved "
            f"({getattr(exc, 'strerror', None) or exc}); pass a plain, existing dataset directory."
        ) from exc


def _resolve_allowed(roots: Iterable[str | os.PathLike[str]]) -> list[Path]:
    return [Path(_realpath(_checked_text(entry, "allowed root"), "allowed root")) for entry in roots]


def allowed_roots_from_env() -> list[Path] | None:
    """The allow-list in ``STRANDS_LABELS_ROOTS`` (read at each call), or None when it is unset or empty.

    Raises:
        UnsafeRootError: an entry has a NUL byte or ``..``.
    """
    entries = [part for part in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if part.strip()]
    return _resolve_allowed(entries) if entries else None


def normalise_allow_list(roots: Iterable[str | os.PathLike[str]] | None) -> list[Path] | None:
    """Resolve an allow-list given to a tool factory (None keeps "no allow-list").

    Raises:
        UnsafeRootError: ``roots`` is a bare string (a list is expected), or an entry
            has a NUL byte or ``..``.
    """
    if roots is None:
        return None
    if isinstance(roots, str | PurePath):
        raise UnsafeRootError("roots must be a list of directories, e.g. roots=['/data/sets'], not one string.")
    return _resolve_allowed(roots)


def _listed(allowed: list[Path]) -> str:
    return os.pathsep.join(str(a) for a in allowed) or "(empty)"


def resolve_dataset_root(root: object, allowed: list[Path] | None = None) -> Path:
    """Check a model-chosen dataset root and return it resolved.

    Args:
        root: The path the model passed (str or ``os.PathLike``).
        allowed: Resolved allow-list (see :func:`normalise_allow_list`); None = no list.

    Returns:
        The absolute, symlink-free dataset root.

    Raises:
        UnsafeRootError: any rule in the module docstring is broken, or the path cannot
            be resolved (too long, a symlink loop); the message names the rule and the remedy.
    """
    text = _checked_text(root, "root")
    resolved = _realpath(text, "root")
    if _is_system(resolved):
        raise UnsafeRootError(
            f"root {quoted(text)} is (inside) a system directory ({clipped(resolved)}); pass a dataset directory."
        )
    if allowed is not None and not any(_inside(resolved, str(a)) for a in allowed):
        raise UnsafeRootError(
            f"root {quoted(text)} ({clipped(resolved)}) is outside the allowed roots {_listed(allowed)}; pass a dataset inside them "
            f"(the allow-list comes from create_judge_agent(roots=...) or {ROOTS_ENV})."
        )
    if not os.path.isdir(resolved):  # False, not an error, for a path the OS refuses to stat
        state, which = ("is a file", "the") if os.path.exists(resolved) else ("does not exist", "an existing")
        raise UnsafeRootError(
            f"Dataset root {quoted(text)} is not an existing directory (it {state}); pass {which} dataset directory."
        )
    if not has_dataset_metadata(resolved):
        raise UnsafeRootError(
            f"root {quoted(text)} is not a LeRobot dataset root (no meta/info.json); pass the directory that holds meta/."
        )
    return Path(resolved)


def check_file_inside(path: str | os.PathLike[str], root: Path, allowed: list[Path] | None, what: str) -> str:
    """Check that a file a tool is about to open resolves inside the allowed roots.

    Args:
        path: The file (as the dataset's metadata names it).
        root: The dataset root it belongs to (resolved).
        allowed: The allow-list in force (None: only system directories are refused).
        what: What the file is, for the message ("data file of episode 3").

    Returns:
        The resolved path (open that one: it is the one that was checked).

    Raises:
        UnsafeRootError: the file resolves outside every allowed root or into a system
            directory (a symlink, ``..`` or an absolute path in the metadata).
    """
    real = _realpath(os.fspath(path), what)
    inside = any(_inside(real, str(a)) for a in allowed) if allowed is not None else not _is_system(real)
    if inside:  # the allowed roots when there are some, else anywhere outside the system directories
        return real
    where = f"outside the allowed roots {_listed(allowed)}" if allowed is not None else "inside a system directory"
    raise UnsafeRootError(
        f"the {what} of dataset {root} resolves to {real}, {where} (a symlink or a path in meta/info.json points "
        "there); refusing to read it. Fix the dataset (replace the symlink by the files, or correct data_path / "
        "video_path), or add that directory to the allow-list."
    )


def check_dataset_files(root: Path, allowed: list[Path] | None) -> tuple[list[str], bool]:
    """Check ``meta/`` and every file the reader may open in it (``meta/*``, ``meta/episodes/*/*``)
    before the dataset is opened; see :func:`check_file_inside`.

    ``meta/`` is resolved once; inside it only symbolic links need resolving (a plain
    entry of a directory that resolves inside the allowed roots is inside them too).

    Args:
        root: The dataset root.
        allowed: The allow-list in force.

    Returns:
        The metadata directories it listed, and whether any entry (``meta/`` included)
        was a symbolic link.

    Raises:
        UnsafeRootError: ``meta/`` or an entry resolves outside the allowed roots.
    """
    meta = os.path.join(root, "meta")
    check_file_inside(meta, root, allowed, "metadata directory meta/")
    listed: list[str] = []
    links = os.path.islink(meta)

    def walk(directory: str, depth: int) -> None:
        nonlocal links
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return  # the reader reports a missing or unreadable directory itself
        listed.append(directory)
        for entry in entries:
            if entry.is_symlink():
                links = True
                name = f"metadata file {os.path.relpath(entry.path, root)}"
                check_file_inside(entry.path, root, allowed, name)
            if depth < 2 and (depth == 1 or entry.name == "episodes") and entry.is_dir():
                walk(entry.path, depth + 1)

    walk(meta, 0)
    return listed, links


#: A directory changed less than this many seconds before a check is not remembered: a
#: second change within the file system's timestamp granularity could leave its mtime as
#: it was (2 s covers the coarsest, FAT's).
RACY_MARGIN_S = 2.0
_REMEMBERED = 64


@dataclass(frozen=True)
class _Checked:
    resolved: str
    target: tuple[int, int]  # (st_dev, st_ino) of the dataset directory
    stamps: tuple[tuple[str, tuple[int, ...]], ...]  # lstat stamp of every metadata directory listed


_checked: OrderedDict[tuple[str, tuple[str, ...] | None], _Checked] = OrderedDict()
_checked_lock = threading.Lock()


def _dir_stamp(path: str) -> tuple[int, ...]:
    st = os.lstat(path)
    return st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_nlink, st.st_mtime_ns, st.st_ctime_ns


def _target(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _still_valid(text: str, checked: _Checked) -> bool:
    try:
        target = _target(os.path.expanduser(text))
        if target != checked.target or (text != checked.resolved and _target(checked.resolved) != target):
            return False
        return all(_dir_stamp(path) == stamp for path, stamp in checked.stamps)
    except (OSError, ValueError):
        return False


def check_root_and_metadata(root: object, allowed: list[Path] | None = None) -> Path:
    """:func:`resolve_dataset_root` then :func:`check_dataset_files`, remembered per root.

    A root that passed is remembered with its directory's identity and an ``lstat`` stamp
    of every metadata directory the check listed; the next call with the same text and
    allow-list passes while the text leads to that directory and no stamp changed (what is
    never remembered: docs/judge.md, "Root safety"). The fast path stays for its figure:
    ``benchmarks/judge_offline.py`` at 10,000 episodes, 161 s remembered, 182 s not.

    Args:
        root: The path the model passed.
        allowed: Resolved allow-list (None = no list).

    Returns:
        The absolute, symlink-free dataset root.

    Raises:
        UnsafeRootError: as :func:`resolve_dataset_root` and :func:`check_dataset_files`.
    """
    text = _checked_text(root, "root")
    key = (text, None if allowed is None else tuple(str(a) for a in allowed))
    with _checked_lock:
        remembered = _checked.get(key)
    if remembered is not None and _still_valid(text, remembered):
        return Path(remembered.resolved)
    started = time.time()
    path = resolve_dataset_root(text, allowed)
    listed, links = check_dataset_files(path, allowed)
    resolved = str(path)
    try:
        stamps = tuple((d, _dir_stamp(d)) for d in listed)
        target = _target(resolved)
    except (OSError, ValueError):
        return path
    newest = max((stamp[5] for _, stamp in stamps), default=0) / 1e9  # the newest mtime
    if not links and listed and newest < started - RACY_MARGIN_S:
        with _checked_lock:
            _checked[key] = _Checked(resolved, target, stamps)
            _checked.move_to_end(key)
            while len(_checked) > _REMEMBERED:
                _checked.popitem(last=False)
    return path

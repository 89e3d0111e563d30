"""Root safety for tools whose arguments a model chooses (issue 4, "Root safety").

A model picks the ``root`` argument of every judge tool, so it is untrusted input. A
root is accepted only when it

- is a non-empty string or path without NUL bytes and without ``..`` components,
- resolves (symlinks followed) to an existing directory that is not a system
  directory (``/``, ``/etc``, ``/proc``, ``/usr`` ...) nor inside one,
- holds ``meta/info.json`` (it is a LeRobot dataset root), and
- lies inside one of the allowed roots, when an allow-list is in force.

The allow-list comes from ``create_judge_agent(roots=[...])`` (tools bound to it) or,
for the module-level tools, from the environment variable ``STRANDS_LABELS_ROOTS``
(``os.pathsep``-separated, read at each call). No allow-list means any dataset root
that passes the other checks. These refusals are for model-chosen arguments: the CLI
resolves the paths a person types before it calls anything.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePath

from strands_robots.errors import UnsafeRootError

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


def _is_within(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def _checked_text(root: object, what: str) -> str:
    if isinstance(root, PurePath):
        root = str(root)
    if not isinstance(root, str):
        raise UnsafeRootError(f"{what} must be a path string, got {type(root).__name__}; pass the dataset directory.")
    if not root.strip():
        raise UnsafeRootError(f"{what} is empty; pass the dataset directory (it holds meta/info.json).")
    if "\x00" in root:
        raise UnsafeRootError(f"{what} contains a NUL byte; pass a plain dataset directory path.")
    if ".." in PurePath(root).parts:
        raise UnsafeRootError(f"{what} {root!r} has a '..' component; pass the dataset directory itself, without '..'.")
    return root


def _resolve_allowed(roots: Iterable[str | os.PathLike[str]]) -> list[Path]:
    allowed = []
    for entry in roots:
        text = _checked_text(entry, "allowed root")
        allowed.append(Path(text).expanduser().resolve())
    return allowed


def allowed_roots_from_env() -> list[Path] | None:
    """The allow-list in ``STRANDS_LABELS_ROOTS``, or None when it is unset or empty.

    Raises:
        UnsafeRootError: an entry has a NUL byte or ``..``.
    """
    value = os.environ.get(ROOTS_ENV, "")
    entries = [part for part in value.split(os.pathsep) if part.strip()]
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


def resolve_dataset_root(root: object, allowed: list[Path] | None = None) -> Path:
    """Check a model-chosen dataset root and return it resolved.

    Args:
        root: The path the model passed (str or ``os.PathLike``).
        allowed: Resolved allow-list (see :func:`normalise_allow_list`); None = no list.

    Returns:
        The absolute, symlink-free dataset root.

    Raises:
        UnsafeRootError: any rule in the module docstring is broken; the message names
            the rule and the remedy.
    """
    text = _checked_text(root, "root")
    try:
        resolved = Path(text).resolve()  # follows the symlinks that exist
    except (RuntimeError, OSError) as exc:  # symlink loop, unreadable component
        raise UnsafeRootError(f"root {text!r} cannot be resolved ({exc}); pass a plain dataset directory.") from exc
    if resolved == Path(resolved.anchor) or any(_is_within(resolved, d) for d in SYSTEM_DIRS):
        raise UnsafeRootError(f"root {text!r} is (inside) a system directory ({resolved}); pass a dataset directory.")
    if allowed is not None and not any(_is_within(resolved, a) for a in allowed):
        listed = os.pathsep.join(str(a) for a in allowed) or "(empty)"
        raise UnsafeRootError(
            f"root {text!r} ({resolved}) is outside the allowed roots {listed}; pass a dataset inside them "
            f"(the allow-list comes from create_judge_agent(roots=...) or {ROOTS_ENV})."
        )
    if not resolved.exists():
        raise UnsafeRootError(f"root {text!r} does not exist; pass an existing dataset directory.")
    if not resolved.is_dir():
        raise UnsafeRootError(f"root {text!r} is not a directory; pass the dataset directory.")
    if not (resolved / "meta" / "info.json").is_file():
        raise UnsafeRootError(
            f"root {text!r} is not a LeRobot dataset root (no meta/info.json); pass the directory that holds meta/."
        )
    return resolved

"""Typed errors shared by every layer.

Every error raised on bad input names what was wrong and what to do about it (the
remedy). They subclass the built-in type a caller of the other ``strands_robots``
implementation would catch (``ValueError``, ``KeyError``, ``FileNotFoundError``), so
code written against either implementation keeps working.
"""

from __future__ import annotations


class LabelsError(Exception):
    """Base of every error this package raises on purpose."""


class DatasetError(LabelsError, ValueError):
    """A LeRobot dataset cannot be read as asked (bad layout, version, metadata)."""


class UnsupportedVersionError(DatasetError):
    """The dataset's ``codebase_version`` is not one this reader knows."""


class EpisodeNotFoundError(LabelsError, KeyError):
    """An episode index the dataset or a sidecar does not have."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class FrameDecodeError(DatasetError):
    """A requested video frame could not be matched to a decoded frame."""


class SidecarError(LabelsError, ValueError):
    """A label sidecar on disk cannot be used (foreign, truncated, future version, not a file)."""


class LabelValidationError(LabelsError, ValueError):
    """Input to a label writer breaks a rule; nothing was stored."""


class StorageError(LabelsError, OSError):
    """Writing a sidecar failed (disk full, permission); the previous file is intact."""


class UnsafeRootError(LabelsError, ValueError):
    """A dataset root chosen by a model is refused (not a dataset, outside the allow-list, ``..``)."""


class LabelsNotFoundError(LabelsError, FileNotFoundError):
    """No label sidecar exists yet where one was asked for."""


class MissingExtraError(LabelsError, ImportError):
    """An optional feature needs a package extra that is not installed (the message names the pip command)."""


class RemapConflictError(SidecarError):
    """An interrupted remap cannot be completed: a sidecar changed since it was prepared."""


class LabelsDirMismatchError(SidecarError):
    """A labels directory holds the labels of another dataset than the one asked about."""


class LabelArgumentError(LabelValidationError, TypeError):
    """A public-API argument of the wrong type (``5`` for a list, ``"no"`` for a bool); nothing was stored.

    Also a ``TypeError``, which is what the other ``strands_robots`` implementation raises there.
    """


class RootNotFoundError(SidecarError, FileNotFoundError):
    """A dataset root (or ``labels_dir``) that is not an existing directory.

    Both a :class:`SidecarError` (``ValueError``) and a ``FileNotFoundError``, the type
    the other ``strands_robots`` implementation raises for it.
    """


class VerdictNotFoundError(EpisodeNotFoundError, ValueError):
    """An episode with no deterministic verdict where one is needed.

    Both an :class:`EpisodeNotFoundError` (``KeyError``) and a ``ValueError``, the type
    the other ``strands_robots`` implementation raises for it.
    """


class NonFiniteNumberWarning(UserWarning):
    """A JSON file written by another tool holds ``NaN`` or ``Infinity``; it was read as null."""

"""Typed errors shared by every layer.

Every error raised on bad input names what was wrong and what to do about it (the
remedy). They subclass the built-in type a caller of the other ``strands_robots``
implementation would catch (``ValueError``, ``KeyError``, ``FileNotFoundError``), so
code written against either implementation keeps working.

Each class carries what an entry point needs to answer it, so the agent tools and the
web server look it up instead of testing the type:

- ``remedy``: the default next step for a judge agent that received the error (a
  sentence; the message often carries a finer one). An instance may override it with
  ``remedy=`` (for example a missing mp4 versus a missing parquet).
- ``http_status``: the status the review server answers with.

Messages are bounded (:func:`quoted`, :func:`clipped`, :func:`bounded_message`, applied
where a :class:`LabelsError` is made and where it is shown): docs/architecture.md, "One
store contract".
"""

from __future__ import annotations

import difflib
import re
import reprlib

#: Most characters of one input (a value, a template, a revision) a message quotes.
QUOTE_CHARS = 200
#: Most characters of one message an entry point shows (tool envelope, CLI, web ``error``).
MESSAGE_CHARS = 2000


class _BoundedRepr(reprlib.Repr):
    """``reprlib`` limits for messages; an int too long to print is described by its size."""

    def __init__(self) -> None:
        super().__init__(maxlevel=3, maxdict=8, maxlist=8, maxtuple=8, maxset=8, maxfrozenset=8)
        self.maxstring = self.maxother = self.maxlong = QUOTE_CHARS

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 600:  # ~180 digits: never convert (past 4300 digits str() raises)
            return f"<an integer of about {int(x.bit_length() * 0.30103) + 1} digits>"
        return super().repr_int(x, level)


_REPR = _BoundedRepr()
_LONG_TOKEN = re.compile(rf"\S{{{QUOTE_CHARS + 1},}}")


def quoted(value: object, limit: int = QUOTE_CHARS) -> str:
    """``repr(value)`` for a message, at most about ``limit`` characters.

    Strings, numbers and containers are shortened with :mod:`reprlib` (``'abc...xyz'``,
    ``[1, 2, ...]``); an integer too long to print reads ``<an integer of about N
    digits>``. Never raises, whatever ``value`` is.
    """
    try:
        shown = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - reprlib catches a failing __repr__; this is the last resort
        shown = f"<{type(value).__name__} object>"
    return clipped(shown, limit)  # reprlib bounds each leaf; a container of many leaves can still be long


def clipped(text: object, limit: int = QUOTE_CHARS) -> str:
    """``str(text)`` as it reads (a path, a name: no quotes added), cut in the middle to at most ``limit`` characters."""
    shown = str(text)
    if len(shown) <= limit:
        return shown
    half = (limit - 5) // 2
    return f"{shown[:half]} ... {shown[-half:]}"


def did_you_mean(value: object, choices: tuple[str, ...]) -> str:
    """`` Did you mean: 'Medium' -> 'medium'?`` when ``value`` is close to one of ``choices``, else ``""``.

    The one near-miss hint of every refusal of a word outside a fixed list (an option value,
    a vocabulary field, a cohort): it is appended to the message, so ``High`` for ``high``
    or ``Open-High`` for ``open-high`` names the word meant. The wording is the other
    ``strands_robots`` implementation's for its vocabulary refusals, so a caller matching on
    it keeps working (docs/compatibility.md).

    Args:
        value: What the caller gave; anything that is not a string gets no hint.
        choices: The accepted words.

    Returns:
        The hint with a leading space, or ``""`` when no choice is close.
    """
    if isinstance(value, str):
        close = difflib.get_close_matches(value.lower(), [c for c in choices if c], n=1)
        if close:
            return f" Did you mean: {quoted(value)} -> {close[0]!r}?"
    return ""


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    """The one refusal of an option outside a fixed list: ``name='x'; use one of a, b.`` and :func:`did_you_mean`.

    Raises:
        LabelValidationError: ``value`` is not one of ``choices``.
    """
    if value not in choices:
        raise LabelValidationError(f"{name}={value!r}; use one of {', '.join(choices)}." + did_you_mean(value, choices))


def bounded_message(message: object, limit: int = MESSAGE_CHARS) -> str:
    """The text of ``message`` (an exception or a string) cut to at most ``limit`` characters.

    A run of more than :data:`QUOTE_CHARS` characters without a space (a path, a quoted
    value that was not put through :func:`quoted`) is clipped to :data:`QUOTE_CHARS`
    first; then the cut keeps the beginning and the end (where a message names the
    remedy) and says how many characters were left out. Never raises (an exception whose ``str()`` fails
    is named by its type).
    """
    try:
        text = str(message)
    except Exception:  # noqa: BLE001 - e.g. a ValueError quoting an int past 4300 digits
        text = type(message).__name__
    text = _LONG_TOKEN.sub(lambda match: clipped(match.group()), text)
    if len(text) <= limit:
        return text
    head, tail = (limit * 3) // 4, limit // 4 - 40
    return f"{text[:head]} [... {len(text) - head - tail} characters left out ...] {text[-tail:]}"


class LabelsError(Exception):
    """Base of every error this package raises on purpose.

    Args:
        *args: The message (as for any exception); a text message is kept as
            :func:`bounded_message` gives it.
        remedy: Overrides the class's ``remedy`` for this instance.
    """

    #: Class defaults; an instance may override them (``remedy=``, a request's own status).
    remedy: str = "fix the input as the message says, or skip this episode."
    http_status: int = 500

    def __init__(self, *args: object, remedy: str | None = None) -> None:
        if args and isinstance(args[0], str):  # the message itself is bounded, whoever shows it
            args = (bounded_message(args[0]), *args[1:])
        super().__init__(*args)
        if remedy is not None:
            self.remedy = remedy

    def __str__(self) -> str:  # the message as written (KeyError would quote it, OSError format errno, strerror)
        return str(self.args[0]) if self.args else ""


class DatasetError(LabelsError, ValueError):
    """A LeRobot dataset cannot be read as asked (bad layout, version, metadata)."""

    remedy = "the dataset cannot be read as asked: fix it as the message says, or skip this episode."
    http_status = 422


class UnsupportedVersionError(DatasetError):
    """The dataset's ``codebase_version`` is not one this reader knows."""


class EpisodeNotFoundError(LabelsError, KeyError):
    """An episode index the dataset or a sidecar does not have."""

    remedy = "use an episode_index the dataset has (load_episode lists it) and that has a verdict."
    http_status = 404


class FrameDecodeError(DatasetError):
    """A requested video frame could not be matched to a decoded frame."""

    remedy = "retry with include_images=false for a state-only answer."


class MissingFileError(DatasetError, FileNotFoundError):
    """A data parquet or video mp4 the metadata points to is not on disk.

    The message names the file and the episode that needs it. Also importable as
    ``strands_robots.dataset.MissingFileError`` and, for a camera's mp4 checked by a judge
    tool, as ``strands_robots.tools.envelope.MissingVideoError``.
    """

    http_status = 404


class SidecarError(LabelsError, ValueError):
    """A label sidecar on disk cannot be used (foreign, truncated, future version, not a file)."""

    remedy = "a human must move the unusable episode_labels.json away; skip this episode."
    http_status = 409


class LabelValidationError(LabelsError, ValueError):
    """Input to a label writer breaks a rule; nothing was stored."""

    remedy = "fix the argument as the message says and call the tool again."
    http_status = 422


class InputFileError(LabelValidationError):
    """A file a person named cannot be read as text: missing, a directory, not UTF-8, unreadable.

    Raised by :func:`strands_robots.storage.textfile.read_user_text` (a verdicts file, a
    label set, a mapping). The message names the path and what is wrong with it; ``remedy``
    is the one next step for that case (the message ends with it too).
    """

    remedy = "pass the path of an existing, readable UTF-8 text file."


class InputFileNotFoundError(InputFileError, FileNotFoundError):
    """The file a person named does not exist.

    Both an :class:`InputFileError` (a ``ValueError``) and the ``FileNotFoundError`` that
    ``open`` raises, so code that caught the latter keeps working.
    """

    remedy = "pass the path of an existing file."


class StorageError(LabelsError, OSError):
    """Writing a sidecar failed (disk full, permission); the previous file is intact."""

    remedy = "the write failed and nothing changed; retry later or skip this episode."
    http_status = 503


class UnsafeRootError(LabelsError, ValueError):
    """A dataset root chosen by a model is refused (not a dataset, outside the allow-list, ``..``)."""

    remedy = "pass the dataset directory that holds meta/info.json, inside the allowed roots, without '..'."


class LabelsNotFoundError(LabelsError, FileNotFoundError):
    """No label sidecar exists yet where one was asked for.

    Also importable as ``strands_robots.report.NoLabelsError`` (nothing to report on) and
    ``strands_robots.judges.runner.NoVerdictsError`` (no verdicts to judge on top of).
    """

    remedy = "record the verdicts first (strands-labels verdicts ROOT FILE), then label."
    http_status = 409


class MissingExtraError(LabelsError, ImportError):
    """An optional feature needs a package extra that is not installed (the message names the pip command)."""


class StaleRecordError(LabelValidationError):
    """A label write on an episode whose stored fingerprint contradicts the dataset: the record
    describes another recording (the dataset was edited, its sidecars not remapped)."""

    remedy = (
        "carry the labels to the edited dataset first: strands-labels remap ROOT --from OLD_ROOT (docs/editing.md)."
    )
    http_status = 409


class UnreadableRecordError(LabelValidationError):
    """A strict selection met labels it cannot read or check: label writes the store refused
    (never applied), or a dataset the reader refuses, so fingerprints cannot be compared; nothing
    was selected (``docs/editing.md``, "Before the remap")."""

    remedy = "make every label readable and checkable (the message names what), then select again."


class NothingToRemapError(LabelValidationError):
    """A remap found no sidecar to carry (the message says where it looked)."""

    remedy = "give the dataset root that held the labels before the edit."


class MappingMismatchError(LabelValidationError):
    """A given episode mapping disagrees with the recordings' fingerprints (which episode holds
    each labelled recording); nothing was changed (``docs/editing.md``)."""


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

    remedy = UnsafeRootError.remedy


class VerdictNotFoundError(EpisodeNotFoundError, ValueError):
    """An episode with no deterministic verdict where one is needed.

    Both an :class:`EpisodeNotFoundError` (``KeyError``) and a ``ValueError``, the type
    the other ``strands_robots`` implementation raises for it.
    """


class NonFiniteNumberWarning(UserWarning):
    """A JSON file written by another tool holds ``NaN`` or ``Infinity``; it was read as null."""


class UncheckedLabelsWarning(UserWarning):
    """The dataset could not be opened to check labels' fingerprints against it: the labels
    were used unchecked (a strict selection refuses them: :class:`UnreadableRecordError`)."""


class ReviewConflictError(LabelsError, ValueError):
    """A review of blocks that changed since the reviewer was shown them; nothing was stored.

    Raised by :func:`strands_robots.episode_labels.review_episode` when the caller passes the
    stamps it displayed (``seen=``) and the verdict or judge label is no longer that one
    (docs/review.md, "When a review stops counting").
    """

    remedy = "reload the episode, look at its verdict and judge label again, then decide."
    http_status = 409

"""Options and helpers shared by the CLI command modules."""

import functools
import json
import os
import re
import sys
from collections.abc import Iterable
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, overload

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from strands_robots.errors import LabelValidationError, bounded_message, quoted

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.table import Table
    from rich.text import Text

    from strands_robots.dataset.hub import HubDataset
    from strands_robots.labels import Labels


class Output:
    """Where a command prints: a line of printable characters as typed, through ``print``;
    anything else (a table, styled text (:func:`styled`, ``style=``), a string holding a tab,
    a line break or a control character, which rich expands or strips) through a rich
    ``Console``, imported on the first such print (rich's import is ~50 ms of a command that
    prints plain lines only: docs/performance.md, "Guard rails", `benchmarks/cli_wall.py`).

    The rich console never parses markup or ``:emoji:`` codes nor colours numbers: messages
    carry user data (paths with ``[...]``, ``pip install 'pkg[extra]'``, notes with ``[/x]`` or
    ``:x:``) that must print as typed; it never wraps (soft wrap: a path stays on one line in
    logs and CI captures).
    """

    def __init__(self, *, stderr: bool = False) -> None:
        self.stderr = stderr

    @functools.cached_property
    def rich(self) -> "Console":
        """The rich console of this stream."""
        from rich.console import Console

        return Console(stderr=self.stderr, soft_wrap=True, markup=False, emoji=False, highlight=False)

    def print(self, value: "RenderableType", *, style: str | None = None) -> None:
        """Print ``value`` and a line break (``style``: e.g. ``"dim"``)."""
        if isinstance(value, str) and style is None and value.isprintable():
            stream = sys.stderr if self.stderr else sys.stdout
            if stream is None:  # its descriptor was closed (`2>&-`): dropped, as rich drops it
                return  # (print(file=None) would write it to stdout)
            try:
                print(value, file=stream, flush=True)
            except BrokenPipeError:  # `strands-labels ... | head`: exit 1, quietly (Python's
                # signal module docs, "Note on SIGPIPE": no second error when stdout is flushed at exit)
                os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
                sys.exit(1)
        else:
            self.rich.print(value, style=style)


console = Output()
err_console = Output(stderr=True)


def progress_bar(title: str, *, elapsed: bool, transient: bool) -> Any:
    """A rich progress bar on stderr: ``title``, bar, done/total, [elapsed], remaining, the last item.

    The last item (``task.fields["last"]``) is user data, so it is shown without markup.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = [TextColumn(title, style="bold"), BarColumn(), MofNCompleteColumn()]
    if elapsed:
        columns.append(TimeElapsedColumn())
    columns += [TimeRemainingColumn(), TextColumn("{task.fields[last]}", markup=False)]
    return Progress(*columns, console=err_console.rich, transient=transient)


def styled(*parts: str | tuple[str, str]) -> "Text":
    """A line of plain text with some styled words: ``styled(("error:", "red"), " ", message)``.

    Strings are printed literally (never parsed as rich markup); ``(text, style)`` pairs are styled.
    """
    from rich.text import Text

    return Text.assemble(*parts)


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``"1 verdict"``, ``"2 verdicts"``."""
    return f"{count} {singular if count == 1 else (plural_form or singular + 's')}"


#: ``strands-labels --revision REV ...``: the Hub revision a repo-id ROOT is resolved at.
hub_revision: dict[str, str | None] = {"value": None}


class DatasetRoot(type(Path())):  # type: ignore[misc]
    """A ROOT after resolution: an absolute path, with ``hub`` set when it was a repo id."""

    hub: "HubDataset | None" = None


def _root_callback(ctx: typer.Context, param: TyperArgument, value: str | None) -> Path | None:
    """ROOT as typed (click's callback, set by :class:`PlainErrors`: typer would hand it made a
    ``Path``, ``./x`` read as ``x``), made absolute once the command's ``--revision`` is known:
    a dataset directory, or a Hub repo id (``OWNER/NAME[@REVISION]``) resolved to LeRobot's local
    copy, its metadata downloaded when absent (:func:`strands_robots.dataset.hub.resolve_root`;
    docs/dataset.md, "Datasets by repo id"). The revision is the command's ``--revision``, else
    ``strands-labels --revision``.

    A refusal (:class:`~strands_robots.errors.HubDatasetError`) is a usage error of ROOT (exit
    status 2), as a failing parser's would be.
    """
    if value is None:
        return None
    revision = ctx.meta.get("revision") or hub_revision["value"]
    if revision is None and os.path.exists(os.path.expanduser(value)):  # a path: no Hub machinery imported
        return resolve(value)
    from strands_robots.dataset.hub import resolve_root

    try:
        path, hub = resolve_root(value, revision)
    except ValueError as exc:
        raise typer.BadParameter(bounded_message(exc), ctx=ctx, param=param) from exc
    root = DatasetRoot(path)
    root.hub = hub
    return root


def _keep_revision(ctx: typer.Context, param: TyperOption, value: str | None) -> None:
    """``--revision`` of a command, kept in ``ctx.meta`` for ROOT's callback (not passed to the command)."""
    ctx.meta["revision"] = value


def _labels_dir_default(ctx: typer.Context, value: Path | None) -> Path | None:
    """``--labels-dir`` made absolute; for a Hub ROOT the labels dir keyed by repo id and revision."""
    if value is not None:
        return resolve(value)
    hub = getattr((ctx.params or {}).get("root"), "hub", None)
    return None if hub is None else hub.labels_dir


RootArg = Annotated[
    Path,
    typer.Argument(
        metavar="ROOT",
        help="Dataset root (the folder holding meta/), or a Hub repo id such as lerobot/pusht[@REVISION].",
        parser=str,  # kept as typed (``./lerobot/x`` stays a path); resolved by _root_callback
    ),
]
#: ``--json`` of the commands that print a table or text by default (one flag, one wording).
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
#: ``--episodes LIST`` of the commands that run on some episodes (read by :func:`episode_list`).
EpisodesOpt = Annotated[
    str | None, typer.Option("--episodes", metavar="LIST", help="Only these episodes, e.g. 0,3,7 or 0-9,12.")
]
LabelsDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--labels-dir",
        help="Keep the label sidecars in this directory instead of the dataset root "
        "(default for a Hub repo id: a labels dir keyed by repo id and revision, shown by info).",
        callback=_labels_dir_default,
    ),
]


#: ``--total-episodes N`` of the commands that write labels: the root is a labels-only
#: directory (no LeRobot metadata) of a dataset with N episodes.
TotalEpisodesOpt = Annotated[
    int | None,
    typer.Option(
        "--total-episodes",
        min=1,
        help="ROOT is a labels-only directory (no meta/) of a dataset with this many episodes; without it a ROOT "
        "that is not a LeRobot dataset is refused.",
    ),
]


def require_dataset_root(root: Path, total_episodes: int | None, command: str) -> int | None:
    """Refuse to write labels into a ROOT that is not a LeRobot dataset (docs/sidecar-format.md,
    "Writes only into a dataset"), unless the caller says it is a labels-only root
    (``--total-episodes``): :func:`strands_robots.storage.labels_dir.require_dataset_root`.

    Returns:
        ``total_episodes`` when ROOT is a labels-only root (for :func:`require_within`), else None.

    Raises:
        LabelValidationError: ``root`` has no ``meta/info.json`` and no ``total_episodes``.
    """
    from strands_robots.storage.labels_dir import require_dataset_root as rule

    return rule(
        root,
        total_episodes,
        writer=f"`strands-labels {command}`",
        elsewhere="--labels-dir DIR",
        declare="--total-episodes N",
    )


def require_within(episodes: list[int], total_episodes: int | None) -> None:
    """Refuse episodes at or past ``total_episodes`` of a labels-only root (None: ROOT is a dataset).

    Raises:
        EpisodeNotFoundError: some are; they are listed.
    """
    if total_episodes is None:
        return
    beyond = sorted({e for e in episodes if e >= total_episodes})
    if beyond:
        from strands_robots.errors import EpisodeNotFoundError
        from strands_robots.storage.mapping import index_ranges

        raise EpisodeNotFoundError(
            f"--total-episodes {total_episodes} says the dataset has episodes 0-{total_episodes - 1}, but "
            f"episode(s) {index_ranges(beyond)} were given; pass the right count or only its episodes."
        )


@overload
def resolve(path: Path | str) -> Path: ...
@overload
def resolve(path: None) -> None: ...
@overload
def resolve(path: Path | str | None) -> Path | None: ...


def resolve(path: Path | str | None) -> Path | None:
    """A path a person typed, made absolute (``~`` expanded); ``str`` as click leaves it in ``ctx.params``."""
    return None if path is None else Path(path).expanduser().resolve()


@overload
def output_path(path: Path) -> Path: ...
@overload
def output_path(path: None) -> None: ...


def output_path(path: Path | None) -> Path | None:
    """A file a person named for a command to write (``--out FILE``), made absolute with its
    folder resolved and its own name kept as typed: a symbolic link at that name is then
    refused by the write (``storage.atomic.check_target``), never followed
    (docs/architecture.md, "One store contract": no file is written through a link)."""
    if path is None:
        return None
    path = path.expanduser().absolute()
    return path.parent.resolve() / path.name


def labels_of(root: Path, labels_dir: Path | None) -> "Labels":
    """The :class:`~strands_robots.labels.Labels` of a command's ROOT and ``--labels-dir``."""
    from strands_robots.labels import open_labels

    return open_labels(root, labels_dir)


def whole_number(text: str) -> int:
    """Parse an integer argument typed as digits (typer would read ``1.0`` as 1).

    Raises:
        typer.BadParameter: ``1.0``, ``1e3``, ``0x1``, ``one``.
    """
    value = text.strip()
    if not re.fullmatch(r"[+-]?[0-9]+", value):
        raise typer.BadParameter(f"{text!r} is not a valid integer: type a whole number as digits, e.g. 3.")
    return int(value)


_SPAN = re.compile(r"\s*(\d+)\s*-\s*(\d+)\s*")
#: Most episodes one list may name (the largest datasets benchmarked hold 1,000,000).
MAX_LISTED = 1_000_000


def episode_list(text: str, option: str = "--episodes") -> list[int]:
    """An option's list of episodes (``--episodes``, ``--deleted``): whole numbers and rising
    spans (inclusive), comma-separated, e.g. ``"0,3,7"``, ``"0-9,12"``; empty parts are skipped.

    Returns:
        The episode indices, sorted, each once.

    Raises:
        LabelValidationError: a part is neither (the message shows the accepted forms); the
            list names more than :data:`MAX_LISTED` episodes.
    """
    out: set[int] = set()
    for part in filter(str.strip, text.split(",")):
        span = _SPAN.fullmatch(part)
        try:
            first, last = (int(span[1]), int(span[2])) if span else (int(part), int(part))
        except ValueError:  # not a number (or one too long to read)
            first, last = 1, 0
        if first > last:
            raise LabelValidationError(
                f"{option} {quoted(text, 60)}: {quoted(part.strip(), 60)} is not an episode index or a rising range; "
                f"write e.g. {option} 0,3,7 or {option} 0-9,12."
            )
        if last - first < MAX_LISTED:  # a longer span is refused before it is built
            out.update(range(first, last + 1))
        if len(out) > MAX_LISTED or last - first >= MAX_LISTED:
            raise LabelValidationError(
                f"{option} {quoted(text, 60)} names more than {MAX_LISTED:,} episodes; "
                f"name at most {MAX_LISTED:,}, e.g. {option} 0-999."
            )
    return sorted(out)


def load_json_or_jsonl(path: Path | str, example: str = '[{"episode": 0, "success": true}]') -> Any:
    """The JSON file a person passed (FILE, MAPPING, ``--file``, ``--reference`` ...), or a JSON Lines
    file as the list of its lines' values: :func:`~strands_robots.storage.textfile.read_json_or_jsonl`
    of the path made absolute, whose refusals suggest JSON such as ``example``.

    Raises:
        InputFileError: missing, a directory, not UTF-8, unreadable (:func:`~strands_robots.storage.textfile.read_user_text`).
        LabelValidationError: the file, or a line of a JSON Lines file, is not valid JSON.
    """
    from strands_robots.storage.textfile import read_json_or_jsonl

    return read_json_or_jsonl(
        Path(path).expanduser().absolute(),  # not resolved: a symbolic-link loop is named by the read
        what="the file",
        kind=f"JSON file (such as {example}) or JSON Lines file (one object per line)",
        remedy=f"fix it (in JSON Lines each line is one complete object) or pass one JSON document like {example}.",
    )


def new_table(title: str | None, columns: Iterable[str]) -> "Table":
    """A rich table of ``columns`` whose long cells fold onto more lines, never cut."""
    from strands_robots.cli.table import FoldedTable

    table = FoldedTable(title=title)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def print_json(value: Any, as_json: bool = True) -> bool:
    """Print ``value`` as JSON to stdout (no rich markup) when ``as_json``; return ``as_json``.

    A command with ``--json`` starts its text form with ``if print_json(value, as_json): return``.
    """
    if as_json:
        typer.echo(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True))
    return as_json


# -- what a usage error says -------------------------------------------------------------------------

_NOT_ONE_OF = re.compile(r"^(?P<value>'.*?') is not one of (?P<choices>'.*')\.$", re.S)
#: click's refusals of a number option, in the words of :func:`strands_robots.arguments.plain_message`.
_CLICK_WORDS = (
    (
        re.compile(r"^.* is not a valid int(?:eger)?(?: range)?\.$", re.S),
        "not a whole number: type one as digits, e.g. 3.",
    ),
    (re.compile(r"^.* is not a valid float(?: range)?\.$", re.S), "not a number: type one such as 0.5 or 3."),
    (re.compile(r"^.* is not in the range x>=(\S+)\.$", re.S), r"it must be greater than or equal to \1"),
    (re.compile(r"^.* is not in the range x>(\S+)\.$", re.S), r"it must be greater than \1"),
    (re.compile(r"^.* is not in the range (\S+)<=x<=(\S+)\.$", re.S), r"it must be between \1 and \2"),
)


def plain_usage_message(message: str) -> str:
    """A parameter refusal in the CLI's words: no parser internals, a near miss named.

    click's ``'High' is not one of 'low', 'medium', 'high'.`` becomes ``'High' is not one of
    low, medium, high. Did you mean: 'High' -> 'high'?``, and a refused number (``'x' is not a
    valid integer.``, ``-3 is not in the range x>=0.``) is ``not a whole number: type one as
    digits, e.g. 3.``, ``it must be greater than or equal to 0``.
    """
    from strands_robots.errors import did_you_mean

    for pattern, plain in _CLICK_WORDS:
        if pattern.match(message):
            return pattern.sub(plain, message)
    found = _NOT_ONE_OF.match(message)
    if found is None:
        return message
    choices = tuple(c.strip().strip("'") for c in found.group("choices").split(","))
    value = found.group("value")[1:-1]
    return f"{quoted(value)} is not one of {', '.join(choices)}.{did_you_mean(value, choices)}"


#: click's ``UsageError`` as typer raises it (a typer that vendors click has its own copy of it).
_USAGE_ERROR: Any = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


class PlainErrors:
    """Mixin of every ``strands-labels`` command and group (README.md, "Command line").

    A refused option value is said in plain words with its near miss
    (:func:`plain_usage_message`), every usage error (a refused value, an unknown option or
    command, an extra argument) quotes what was typed within the bounds of
    :func:`~strands_robots.errors.bounded_message`, and the usage line names arguments as the
    help does (``ROOT EPISODE``, not typer's ``{ROOT} {EPISODE}``). A command taking ROOT
    resolves it with :func:`_root_callback` and takes ``--revision REV`` (eager: known when
    ROOT is resolved, wherever it is typed).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        root = next((param for param in self.params if param.name == "root"), None)  # type: ignore[attr-defined]
        if root is not None:
            root.callback = _root_callback
            self.params.append(  # type: ignore[attr-defined]
                TyperOption(
                    param_decls=["--revision"],
                    metavar="REV",
                    is_eager=True,
                    expose_value=False,
                    callback=_keep_revision,
                    help="Hub revision (branch, tag, commit) of a repo-id ROOT, like ROOT@REV; default main.",
                )
            )

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """click's parsing, with a refused value's message rewritten and bounded."""
        try:
            return super().parse_args(ctx, args)  # type: ignore[misc]
        except _USAGE_ERROR as exc:
            message = plain_usage_message(exc.message) if isinstance(exc, typer.BadParameter) else exc.message
            exc.message = bounded_message(message)
            raise

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a command run on a ROOT whose sidecars an in-place
        ``lerobot-edit-dataset`` moved to ``ROOT_old`` then says so and prints the command that
        carries them (:func:`note_moved_sidecars`), whatever it printed or raised."""
        directory = None if isinstance(self, TyperGroup) else _sidecar_directory(ctx)
        if directory is None:
            return super().invoke(ctx)  # type: ignore[misc]
        from strands_robots.storage.side_files import remap_hint

        before = remap_hint(directory)
        token = _moved_noted.set(set())
        error: BaseException | None = None
        try:
            return super().invoke(ctx)  # type: ignore[misc]
        except BaseException as exc:
            error = exc
            raise
        finally:
            _note_moved_after(directory, error, before)
            _moved_noted.reset(token)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """The usage pieces without typer's braces around required arguments."""
        pieces = super().collect_usage_pieces(ctx)  # type: ignore[misc]
        return [re.sub(r"^\{(.+)\}(\.\.\.)?$", r"\1\2", piece) for piece in pieces]


#: The directories the note on sidecars an in-place edit moved was printed for, in the running
#: command (set by :meth:`PlainErrors.invoke`; each command prints it once).
_moved_noted: ContextVar[set[Path] | None] = ContextVar("moved_noted", default=None)


def note_moved_sidecars(directory: Path) -> str:
    """Print, on stderr, once per command, that ``directory`` (a command's ROOT or ``--labels-dir``)
    holds no sidecar and ``<it>_old`` does, with the command that carries them (``docs/editing.md``, "Before the
    remap"); return the note (empty when there is none to give).

    Called before a command's output where it matters (a table of stale records, a page about
    to serve); every other command taking ROOT gets it from :meth:`PlainErrors.invoke`.
    """
    from strands_robots.storage.side_files import remap_hint

    hint = remap_hint(directory)
    if not hint:
        return ""
    noted = _moved_noted.get()
    if noted is not None:
        if directory in noted:
            return hint
        noted.add(directory)
    err_console.print(f"No sidecar in {directory}.{hint}")
    return hint


def _sidecar_directory(ctx: Any) -> Path | None:
    """Where the sidecars of a command run on a ROOT are: ``--labels-dir``, else ROOT (``remap``
    excluded: it is the carry)."""
    params = ctx.params or {}
    root = params.get("root")
    if not isinstance(root, Path) or ctx.info_name == "remap":
        return None
    return resolve(params.get("labels_dir") or root)


def _note_moved_after(directory: Path, error: BaseException | None, before: str) -> None:
    """After a command whose sidecars are in ``directory``: the note of
    :func:`note_moved_sidecars`, unless it was given already or ``error`` says it (a read's "no
    label sidecar" names the remap itself); or, when ``before`` (the note as it stood before
    the command) was one and the command then wrote the first sidecar of ROOT, a warning that
    the carry now needs those new sidecars moved away."""
    from strands_robots.storage.side_files import edit_backup_path, remap_hint

    hint = remap_hint(directory)
    if hint and (error is None or hint not in str(error)):
        note_moved_sidecars(directory)
    elif before and not hint and error is None:
        old = edit_backup_path(directory)
        err_console.print(
            f"warning: {directory} held no sidecar and {old} holds the labels lerobot-edit-dataset moved there when it "
            f"edited the dataset in place; this command started new sidecars in {directory}, so "
            f"`strands-labels remap {directory} --from {old}` now refuses until they are moved away "
            '(docs/editing.md, "Before the remap").',
        )


class LabelsGroup(PlainErrors, TyperGroup):
    """A command group with :class:`PlainErrors`; an unknown command's name is bounded too."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """click's lookup of a subcommand, its usage error's message bounded."""
        try:
            return super().resolve_command(ctx, args)
        except _USAGE_ERROR as exc:
            exc.message = bounded_message(exc.message)
            raise


def plain_errors(app: typer.Typer) -> None:
    """Give every command and group of ``app`` (and of its sub-apps) :class:`PlainErrors`.

    A command registered with its own class (``judge``'s) keeps it, with the mixin in front.
    """
    for info in app.registered_commands:
        base = info.cls or TyperCommand
        if not issubclass(base, PlainErrors):
            info.cls = type(f"Plain{base.__name__}", (PlainErrors, base), {})
    for group in app.registered_groups:
        sub = group.typer_instance
        if sub is None:
            continue
        for group_info in (group, sub.info):
            if not isinstance(group_info.cls, type):  # unset (typer's default placeholder)
                group_info.cls = LabelsGroup
        plain_errors(sub)


def flag_stale(labels: "Labels", stale: dict[int, str]) -> dict[int, str]:
    """Print, on stderr, each stale record (``stale``: ``{episode: reason}`` from the store's
    stale check) as ``stale, run remap``, and where an in-place edit moved the sidecars;
    return ``stale`` (``docs/editing.md``)."""
    note_moved_sidecars(labels.directory)
    for episode, reason in stale.items():
        err_console.print(
            f"episode {episode}: stale, run remap ({reason}; `strands-labels remap {labels.root} --from OLD_ROOT`, "
            "docs/editing.md)",
        )
    return stale

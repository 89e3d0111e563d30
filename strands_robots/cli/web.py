"""Commands of the ``web`` extra: ``review`` (the local review page), ``segments page`` (the
segment annotation page, served by the same server; ``segment`` is its old name, kept as an
alias) and ``report`` (PNG plots).

They import starlette/uvicorn/matplotlib only when run, so the CLI starts without the extra.
"""

from pathlib import Path
from typing import Annotated, Any

import typer

from strands_robots.cli.common import (
    LabelsDirOpt,
    RootArg,
    console,
    note_moved_sidecars,
    plural,
    progress_bar,
    resolve,
)
from strands_robots.cli.segments import LabelSetsOpt
from strands_robots.errors import MissingExtraError

__all__ = ["MissingExtraError", "report", "review", "segment"]


#: ``--allow-remote`` of the two pages (docs/review.md, "Security").
AllowRemoteOpt = Annotated[
    bool,
    typer.Option(
        "--allow-remote",
        help="Listen on an address that is not loopback (--host). Anyone who can reach it can load the page and "
        "its token; a warning is printed. Every-interface addresses (0.0.0.0, ::) are refused even so.",
    ),
]


HostOpt = Annotated[str, typer.Option(help="Address to listen on (loopback keeps the page on this machine).")]
PortOpt = Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")]


def _require_extra(what: str, *needed: str) -> None:
    import importlib.util

    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(
            f"`strands-labels {what}` needs {', '.join(missing)}: pip install 'strands-robots-labels[web]'."
        )


def review(
    root: RootArg,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8765,
    reviewer: Annotated[
        str | None, typer.Option(help="Default reviewer name written with each review (default: your user name).")
    ] = None,
    labels_dir: LabelsDirOpt = None,
    allow_remote: AllowRemoteOpt = False,
) -> None:
    """Serve the review page: resolve disputed verdicts in the browser."""
    _serve("review", root, labels_dir, host=host, port=port, reviewer=reviewer, allow_remote=allow_remote)


def _serve(what: str, root: Path, labels_dir: Path | None, **options: Any) -> None:
    """Serve the pages of ROOT until stopped (:func:`strands_robots.web.server.serve`) for ``strands-labels WHAT``."""
    _require_extra(what, "starlette", "uvicorn", "jinja2")
    from strands_robots.web.server import serve

    note_moved_sidecars(labels_dir or root)  # before serving: the page runs until stopped
    serve(
        root,
        labels_dir=labels_dir,
        announce=lambda line: console.print(line),
        **options,
    )


def segment(
    root: RootArg,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8765,
    annotator: Annotated[
        str | None, typer.Option(help="Default annotator name saved with each segmentation (default: your user name).")
    ] = None,
    labels_dir: LabelsDirOpt = None,
    labels: LabelSetsOpt = None,
    allow_remote: AllowRemoteOpt = False,
) -> None:
    """Serve the segment page: split episodes into subtasks (B splits, S saves) in the browser."""
    _serve(
        "segments page",
        root,
        labels_dir,
        host=host,
        port=port,
        reviewer=annotator,
        page="/segment",
        title="segment page",
        label_sets=[resolve(path) for path in labels or ()],  # a bad file is refused before anything is served
        allow_remote=allow_remote,
    )


def report(
    root: RootArg,
    out: Annotated[Path | None, typer.Option(help="Directory for the PNG files (default: LABELS_DIR/report).")] = None,
    human: Annotated[
        Path | None,
        typer.Option(
            help="Holdout JSON {episode: {quality, failure_mode}} for the confusion matrix (default: reviews)."
        ),
    ] = None,
    episode: Annotated[
        list[int] | None,
        typer.Option("--episode", metavar="EPISODE", help="Draw this episode's plot (repeatable; default: all)."),
    ] = None,
    max_episodes: Annotated[
        int,
        typer.Option(
            min=0, help="At most this many per-episode plots when --episode is not given (open disputes first)."
        ),
    ] = 100,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Write PNG plots: quality and failure modes by verdict, judge vs human, disputes, episodes."""
    _require_extra("report", "matplotlib")
    from strands_robots.episode_labels.agreement import read_human_labels
    from strands_robots.report import write_report

    holdout = None if human is None else read_human_labels(resolve(human))
    progress = progress_bar("report", elapsed=False, transient=True)
    task = progress.add_task("report", total=None, last="")

    def on_progress(done: int, total: int, what: str) -> None:
        progress.update(task, completed=done, total=total, last=what)

    with progress:
        result = write_report(
            root,
            resolve(out),
            labels_dir=labels_dir,
            human_labels=holdout,
            episodes=episode or None,
            max_episodes=max_episodes,
            on_progress=on_progress,
        )
    summary = sum(1 for p in result.files if p.parent == result.out)
    episodes_drawn = len(result.files) - summary
    console.print(
        f"wrote {plural(summary, 'summary plot')} and {plural(episodes_drawn, 'episode plot')} to {result.out}",
    )
    for note in result.notes:
        console.print(f"note: {note}", style="dim")


def register(app: typer.Typer) -> None:
    """Add ``review``, ``segments page`` (and its alias ``segment``) and ``report`` to ``app``."""
    from strands_robots.cli.segments import app as segments_app

    app.command("review")(review)
    segments_app.command("page")(segment)
    app.command("segment", help="Alias of `segments page` (its old name): serve the segment page in the browser.")(
        segment
    )
    app.command("report")(report)

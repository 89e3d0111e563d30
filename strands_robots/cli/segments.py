"""``strands-labels segments validate|show|import|export|pool|templates|prefill ROOT ...``.

Subtask segmentations in ``episode_segments.json`` (``docs/segments.md``). ``validate`` and ``import`` exit 1 when an error finding / a failed
episode remains; bad input exits 2 (the CLI's rule for ``LabelsError``).
"""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from strands_robots.cli.common import (
    JsonOpt,
    LabelsDirOpt,
    RootArg,
    TotalEpisodesOpt,
    console,
    flag_stale,
    labels_of,
    new_table,
    output_path,
    print_json,
    require_dataset_root,
    resolve,
    styled,
    whole_number,
)
from strands_robots.errors import DatasetError, LabelValidationError, did_you_mean

if TYPE_CHECKING:
    from strands_robots.segments.findings import Finding

app = typer.Typer(
    name="segments",
    help="Subtask segmentations with typed templates (episode_segments.json).",
    no_args_is_help=True,
)

LabelSetsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--labels",
        metavar="FILE",
        help='A label set of your own to use as a cohort (JSON list, {"name", "labels"} or one label per '
        "line; repeatable).",
    ),
]


def _cohort(value: str | None, label_sets: list[Path] | None = None) -> str | None:
    """``--cohort`` checked, after the ``--labels`` files are registered as cohorts."""
    from strands_robots.segments.templates import known_cohorts

    if label_sets:
        from strands_robots.segments.label_sets import load_label_set, register_label_set

        for label_set in [load_label_set(resolve(path)) for path in label_sets]:  # all checked first
            register_label_set(label_set)
    if value is not None and value not in known_cohorts():
        raise LabelValidationError(
            f"--cohort {value!r}; use one of {', '.join(known_cohorts())} (or --labels FILE for a set of your own)."
            + did_you_mean(value, known_cohorts())
        )
    return value


@app.command("validate")
def validate_cmd(
    root: RootArg,
    episodes: Annotated[
        list[int] | None, typer.Argument(metavar="EPISODES", help="Episodes to check (default: every saved one).")
    ] = None,
    cohort: Annotated[str | None, typer.Option(help="Override the saved cohort.")] = None,
    labels: LabelSetsOpt = None,
    base_velocity: Annotated[
        str | None, typer.Option("--base-velocity", help="Base-velocity feature (default: auto-detect).")
    ] = None,
    no_base_velocity: Annotated[bool, typer.Option("--no-base-velocity", help="Do not read base motion.")] = False,
    threshold: Annotated[float, typer.Option(help="Base speed threshold (feature units).")] = 0.05,
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Check saved segmentations against the structure and the cohort's rules."""
    from strands_robots.segments.checks import validate_episode
    from strands_robots.segments.episodes import open_dataset_if_present
    from strands_robots.segments.motion import check_threshold

    threshold = check_threshold(threshold, "--threshold")
    handle = labels_of(root, labels_dir)
    cohort = _cohort(cohort, labels)
    records = handle.segments.list()
    if episodes:
        wanted = set(episodes)
        missing = sorted(wanted - {r["episode_index"] for r in records})
        if missing:
            raise LabelValidationError(f"no segmentation saved for episodes {missing}.")
        records = [r for r in records if r["episode_index"] in wanted]
    stale = flag_stale(handle, handle.segments.stale())
    records = [r for r in records if r["episode_index"] not in stale]  # checked against another recording: no
    dataset = open_dataset_if_present(handle.root) if records else None
    results: dict[int, list[Finding]] = {
        record["episode_index"]: validate_episode(
            handle.root,
            record["episode_index"],
            cohort=cohort,
            base_velocity_feature=base_velocity,
            use_base_velocity=not no_base_velocity,
            base_speed_threshold=threshold,
            labels_dir=handle.labels_dir,
            dataset=dataset,
        )
        for record in records
    }
    errors = sum(1 for fs in results.values() for f in fs if f.severity == "error")
    if not print_json({str(ep): [f.to_dict() for f in fs] for ep, fs in results.items()}, as_json):
        for ep, fs in results.items():
            if fs:
                table = new_table(f"episode {ep}", ("severity", "kind", "frames", "message"))
                for f in fs:
                    colour = {"error": "red", "warning": "yellow", "skipped": "dim"}[f.severity]
                    table.add_row(styled((f.severity, colour)), f.kind, f"[{f.start}, {f.end})", f.message)
                console.print(table)
            else:
                console.print(styled(f"episode {ep}: ", ("valid", "green"), ", every rule checked"))
        console.print(f"{len(results)} segmentations checked, {errors} errors")
    if errors:
        raise typer.Exit(1)


@app.command("show")
def show_cmd(
    root: RootArg,
    episode: Annotated[
        int | None,
        typer.Argument(metavar="EPISODE", help="One episode's segments (default: a summary).", parser=whole_number),
    ] = None,
    history: Annotated[bool, typer.Option(help="Every saved version, newest first.")] = False,
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """A summary of saved segmentations, or one episode's segments (frames and seconds)."""
    from strands_robots.segments.episodes import open_dataset_if_present

    handle = labels_of(root, labels_dir)
    if episode is None:
        records = handle.segments.list()
        stale = flag_stale(handle, handle.segments.stale())
        if print_json(records, as_json):
            return
        table = new_table(
            f"segmentations in {handle.root}",
            ("episode", "version", "cohort", "segments", "annotator", "annotated_at", "reference", "task"),
        )
        for r in records:
            table.add_row(
                str(r["episode_index"]) + (" (stale, run remap)" if r["episode_index"] in stale else ""),
                str(r.get("version")),
                r.get("cohort", ""),
                str(len(r["segments"])),
                r.get("annotator", ""),
                r.get("annotated_at", ""),
                "yes" if r.get("reference") else "",
                "; ".join(r.get("tasks", [])),
            )
        console.print(table)
        return
    versions: list[Any] = handle.segments.history(episode) if history else [handle.segments.get(episode)]
    if print_json(versions if history else versions[0], as_json):
        return
    dataset = open_dataset_if_present(handle.root)
    fps = float(dataset.fps) if dataset is not None else None
    for record in versions:
        title = (
            f"episode {record['episode_index']} v{record.get('version')} by {record.get('annotator')} at "
            f"{record.get('annotated_at')}" + (" (reference)" if record.get("reference") else "")
        )
        table = new_table(title, ("frames", "seconds", "template", "label", "note"))
        for seg in record["segments"]:
            seconds = f"{seg['start'] / fps:.2f}-{seg['end'] / fps:.2f}" if fps else ""
            table.add_row(
                f"[{seg['start']}, {seg['end']})",
                seconds,
                seg.get("template_id", ""),
                seg["label"],
                seg.get("note") or "",
            )
        console.print(table)


@app.command("import")
def import_cmd(
    root: RootArg,
    source: Annotated[Path, typer.Argument(metavar="SOURCE", help="JSON or JSONL file of segmentations.")],
    annotator: Annotated[
        str, typer.Option(help="Recorded as the annotator where the input names none (an export keeps its own).")
    ],
    episode: Annotated[
        int | None, typer.Option(help="Episode of a file holding one episode's spans.", parser=whole_number)
    ] = None,
    fps: Annotated[float | None, typer.Option(help="fps for seconds when the dataset has no metadata.")] = None,
    cohort: Annotated[
        str | None, typer.Option(help="robocasa365, agibot, allex, generic or a --labels set (default: inferred).")
    ] = None,
    labels: LabelSetsOpt = None,
    normalize: Annotated[bool, typer.Option(help="Normalise official labels.")] = True,
    head: Annotated[str, typer.Option(help="Head gap: auto, extend, idle, error.")] = "auto",
    tail: Annotated[str, typer.Option(help="Tail gap: auto, task_complete, idle, extend, error.")] = "auto",
    fill_gaps: Annotated[str, typer.Option(help="Gaps between spans: error, extend.")] = "error",
    time_unit: Annotated[str, typer.Option(help="Plain start/end: auto, frames, seconds.")] = "auto",
    overwrite: Annotated[bool, typer.Option(help="Replace existing segmentations (kept in history).")] = False,
    reference: Annotated[bool, typer.Option(help="Mark them as reference examples.")] = False,
    dry_run: Annotated[bool, typer.Option(help="Report only; write nothing.")] = False,
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
    total_episodes: TotalEpisodesOpt = None,
) -> None:
    """Import segmentations (frames or seconds) with label normalisation and a report."""
    from strands_robots.segments import import_segmentations

    require_dataset_root(root, total_episodes, "segments import")
    report = import_segmentations(
        root,
        resolve(source),
        annotator=annotator,
        episode=episode,
        fps=fps,
        cohort=_cohort(cohort, labels),
        normalize=normalize,
        head=head,
        tail=tail,
        fill_gaps=fill_gaps,
        time_unit=time_unit,
        overwrite=overwrite,
        reference=reference,
        dry_run=dry_run,
        labels_dir=labels_dir,
        total_episodes=total_episodes,
    )
    print_import_report(report, as_json)


def print_import_report(report: Any, as_json: bool) -> None:
    """Print an :class:`~strands_robots.segments.imports.ImportReport`; exit 1 when an episode failed."""
    summary = report.to_dict()
    if not print_json(summary, as_json):
        for ep in report.episodes:
            colour = {"imported": "green", "would_import": "green", "skipped": "yellow"}.get(ep.status, "red")
            console.print(styled(f"episode {ep.episode_index}: ", (ep.status, colour), f" ({ep.segments} segments)"))
            for line in ep.changes:
                console.print(f"  changed: {line}")
            for line in ep.notes:
                console.print(f"  note: {line}")
            for r in ep.relabels:
                console.print(
                    f"  relabelled: {r['from']!r} -> {r['to']!r} ({', '.join(r['rewrites']) or 'case/space'})"
                )
            for x in ep.exceptions:
                console.print(styled("  ", ("kept raw", "yellow"), f": {x['label']!r}: {x['why']}"))
            for e in ep.errors:
                console.print(styled("  ", ("error", "red"), f": {e}"))
        counts = summary["counts"]
        console.print(
            f"{counts['imported']} imported, {counts['would_import']} would import, {counts['skipped']} skipped, "
            f"{counts['failed']} failed; {summary['relabelled']} labels normalised, {summary['exceptions']} kept raw"
        )
    if not report.ok:
        raise typer.Exit(1)


@app.command("export")
def export_cmd(
    root: RootArg,
    out: Annotated[Path | None, typer.Option(help="Write JSONL here (default: stdout).")] = None,
    format: Annotated[str, typer.Option(help="segments, or subtasks (the outcome labels' format).")] = "segments",
    fps: Annotated[float | None, typer.Option(help="fps when the dataset has no metadata.")] = None,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Export saved segmentations as JSON Lines (frames and seconds)."""
    from strands_robots.segments import export_segmentations

    lines = export_segmentations(root, output_path(out), format=format, fps=fps, labels_dir=labels_dir)
    if out is None:
        import json

        for line in lines:
            typer.echo(json.dumps(line, ensure_ascii=False, sort_keys=True))
    else:
        console.print(f"wrote {len(lines)} episodes to {out}")


@app.command("pool")
def pool_cmd(
    root: RootArg,
    task: Annotated[str | None, typer.Argument(metavar="TASK", help="Task text (or use --episode).")] = None,
    episode: Annotated[
        int | None, typer.Option(help="Use this episode's task; its own segmentation is not a reference example.")
    ] = None,
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """A task's label pool (templates used in its saved segmentations) and its reference examples."""
    from strands_robots.segments import label_pool, reference_examples
    from strands_robots.segments.episodes import episode_facts

    if task is None:
        if episode is None:
            raise LabelValidationError("give a TASK or --episode N.")
        facts = episode_facts(root, episode)
        if not facts.tasks:
            raise DatasetError(f"episode {episode} has no task in the dataset's metadata; pass the TASK text.")
        task = facts.tasks[0]
    pool = label_pool(root, task, labels_dir=labels_dir)
    references = reference_examples(root, task, exclude=episode, labels_dir=labels_dir)
    if print_json({"task": task, "pool": pool, "references": references}, as_json):
        return
    table = new_table(f"label pool of {task!r}", ("template", "operation", "segments", "episodes", "labels"))
    for p in pool:
        labels = "; ".join(f"{lab['label']} ({lab['count']})" for lab in p["labels"][:5])
        table.add_row(p["template_id"], p["operation"], str(p["count"]), str(p["episodes"]), labels)
    console.print(table)
    shown = ", ".join(str(r["episode_index"]) for r in references) or "none"
    console.print(f"reference examples: {shown}")


@app.command("templates")
def templates_cmd(
    cohort: Annotated[
        str | None,
        typer.Option(
            help="robocasa365, agibot, allex, generic or a --labels set "
            "(default: the last --labels set, else robocasa365)."
        ),
    ] = None,
    labels: LabelSetsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The template registry of a cohort."""
    from strands_robots.segments.templates import cohort_templates

    cohort = _cohort(cohort, labels)
    if cohort is None and labels:
        from strands_robots.segments.label_sets import load_label_set

        cohort = load_label_set(resolve(labels[-1])).name
    cohort = cohort or "robocasa365"
    templates = cohort_templates(cohort)
    if print_json([t.to_dict() for t in templates], as_json):
        return
    table = new_table(f"{cohort} templates", ("id", "operation", "surface", "roles", "example"))
    for t in templates:
        roles = "; ".join(f"{s.name}{'?' if s.optional else ''}: {', '.join(s.types)}" for s in t.slots)
        table.add_row(t.id, t.operation, t.surface, roles, t.examples[0] if t.examples else "")
    console.print(table)


@app.command("prefill")
def prefill_cmd(
    root: RootArg,
    episode: Annotated[int, typer.Argument(metavar="EPISODE", help="Episode index.", parser=whole_number)],
    feature: Annotated[str | None, typer.Option(help="Base-velocity feature (default: auto-detect).")] = None,
    threshold: Annotated[float, typer.Option(help="Speed threshold (feature units).")] = 0.05,
) -> None:
    """NAVIGATE segments prefilled from the base motion (JSON, for an annotator to edit)."""
    from strands_robots.segments import prefill_navigate
    from strands_robots.segments.motion import check_threshold

    threshold = check_threshold(threshold, "--threshold")
    segments: list[dict[str, Any]] = prefill_navigate(root, episode, feature, threshold=threshold)
    print_json(segments)


def register(root_app: typer.Typer) -> None:
    """Add ``segments`` to the ``strands-labels`` app."""
    from strands_robots.cli import segments_lerobot  # noqa: F401  (its commands join ``app``)

    root_app.add_typer(app, name="segments")

"""``strands-labels segments import-lerobot|agreement|export-lerobot``: LeRobot's own subtasks.

Import the subtasks a LeRobot v3.0 dataset carries (``lerobot-annotate``'s language rows or
SARM's columns) as proposals, measure how a person's review agreed with them, and export
the approved segmentations back (``docs/segments.md``, "LeRobot's subtasks: import,
review, export"). Bad input exits 2; an import with a failed episode exits 1.
"""

from pathlib import Path
from typing import Annotated

import typer

from strands_robots.cli.common import JsonOpt, LabelsDirOpt, RootArg, console, print_json, resolve
from strands_robots.cli.segments import _cohort, app, print_import_report

StyleOpt = Annotated[str, typer.Option(help="The language_persistent style of the subtask rows.")]
SarmOpt = Annotated[
    str | None,
    typer.Option("--sarm", metavar="sparse|dense", help="SARM's columns in meta/episodes instead of language rows."),
]


@app.command("import-lerobot")
def import_lerobot_cmd(
    root: RootArg,
    style: StyleOpt = "subtask",
    sarm: SarmOpt = None,
    cohort: Annotated[str, typer.Option(help="Template set the labels are matched against.")] = "generic",
    dry_run: Annotated[bool, typer.Option(help="Report only; write nothing.")] = False,
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Import the dataset's own subtasks as proposals to review on the segment page."""
    from strands_robots.segments.lerobot_import import import_lerobot

    report = import_lerobot(
        root,
        style=style,
        sarm_prefix=sarm,
        cohort=_cohort(cohort) or "generic",
        dry_run=dry_run,
        labels_dir=labels_dir,
    )
    print_import_report(report, as_json)


@app.command("agreement")
def agreement_cmd(
    root: RootArg,
    proposed: Annotated[str, typer.Option(help="The proposals' annotator (lerobot-annotate, sarm-sparse).")],
    reviewed: Annotated[str, typer.Option(help="The person who reviewed them.")],
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Boundary error, label accuracy and share accepted unchanged of reviewed proposals."""
    from strands_robots.segments.agreement import segments_agreement

    report = segments_agreement(root, proposed=proposed, reviewed=reviewed, labels_dir=labels_dir)
    if print_json(report, as_json):
        return
    if not report["episodes"]:
        console.print(f"no episode where {reviewed!r} reviewed a proposal of {proposed!r}")
        return

    def line(name: str, r: dict) -> str:
        if r["boundary_error_mean"] is None:
            bounds = "no boundary"
        else:
            bounds = f"boundary error mean {r['boundary_error_mean']:g} frames, p90 {r['boundary_error_p90']:g}"
        accuracy = "-" if r["label_accuracy"] is None else f"{r['label_accuracy']:.1%}"
        return f"{name:<9} {bounds}; label accuracy {accuracy}"

    console.print(
        f"{report['episodes']} episodes reviewed by {reviewed} ({report['measured_frames']} frames measured); "
        f"accepted unchanged {report['accepted_unchanged']:.1%}"
    )
    console.print(line("proposal", report))
    console.print(line("baseline", report["baseline"]) + " (evenly spaced segments)")


@app.command("export-lerobot")
def export_lerobot_cmd(
    root: RootArg,
    out: Annotated[Path | None, typer.Option(help="Write a complete new dataset here.")] = None,
    in_place: Annotated[bool, typer.Option("--in-place", help="Rewrite the dataset itself.")] = False,
    style: StyleOpt = "subtask",
    sarm: SarmOpt = None,
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Write the approved segmentations as LeRobot subtask rows (or SARM's columns)."""
    from strands_robots.segments.lerobot_export import export_lerobot

    report = export_lerobot(
        root,
        out=resolve(out),
        in_place=in_place,
        style=style,
        sarm_prefix=sarm,
        labels_dir=labels_dir,
    ).to_dict()
    if print_json(report, as_json):
        return
    console.print(
        f"exported {len(report['episodes'])} approved segmentation(s) to {report['target']} ({report['mode']}); "
        f"rewrote {len(report['rewritten'])} file(s), linked {report['videos_linked']} video(s), "
        f"copied {report['files_copied']} file(s)"
    )
    for rel in report["rewritten"]:
        console.print(f"  {rel}")

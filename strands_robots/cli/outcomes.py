"""``strands-labels outcome set|get|history|list|export|import|split|recovery|verdicts ROOT ...``.

Outcome labels (``strands_robots.outcomes``). ``set`` takes a JSON
file of the label (``--file``; a label as ``outcome get`` prints it is accepted, its
read-only fields are ignored) and/or flags named as in the document's CLI
(``--subtasks-file``, ``--hand-actions-file``, repeatable ``--leakage-group KEY=ID``,
``--source-metadata JSON``); flags override the file.
"""

import json
import re
from pathlib import Path
from typing import Annotated, Any

import typer

from strands_robots.arguments import HELD_OUT_SHARE, UNIT_FRACTION, number_argument
from strands_robots.cli.common import (
    JsonOpt,
    LabelsDirOpt,
    RootArg,
    console,
    flag_stale,
    labels_of,
    load_json_or_jsonl,
    new_table,
    output_path,
    print_json,
    resolve,
    whole_number,
)
from strands_robots.errors import LabelValidationError, quoted
from strands_robots.outcomes.model import (
    AUTONOMY_LEVELS,
    LEAKAGE_GROUP_KEYS,
    OUTCOMES,
    READ_ONLY_FIELDS,
    WRITABLE_FIELDS,
)

EpisodeArg = Annotated[
    int, typer.Argument(metavar="EPISODE", help="The episode's real episode_index.", parser=whole_number)
]


def _csv(value: str | None) -> list[str] | None:
    """``failure,aborted`` -> ``["failure", "aborted"]`` (the document's comma-separated filters)."""
    if value is None:
        return None
    return [v.strip() for v in value.split(",")]


def _leakage_groups(pairs: list[str]) -> dict[str, str]:
    groups: dict[str, str] = {}
    for pair in pairs:
        key, sep, gid = pair.partition("=")
        if not sep:
            raise LabelValidationError(
                f"--leakage-group {pair!r} must be KEY=ID, e.g. --leakage-group location=loc_8f2a."
            )
        groups[key.strip()] = gid.strip()
    return groups


def _json_text(text: str, option: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LabelValidationError(f'{option} is not valid JSON ({exc}); pass e.g. \'{{"importer": "x"}}\'.') from exc


def set_cmd(
    ctx: typer.Context,
    root: RootArg,
    episode: EpisodeArg,
    file: Annotated[Path | None, typer.Option("--file", help="JSON file of the whole label.")] = None,
    outcome: Annotated[
        str | None, typer.Option(help=f"One of {', '.join(OUTCOMES)} (required unless in --file).")
    ] = None,
    progress: Annotated[float | None, typer.Option(help="Task progress 0..1.")] = None,
    quality: Annotated[int | None, typer.Option(help="Execution quality 1..5.", parser=whole_number)] = None,
    speed: Annotated[int | None, typer.Option(help="Execution speed 1..5.", parser=whole_number)] = None,
    subtasks_file: Annotated[Path | None, typer.Option(help="JSON list of {label, start_ts, end_ts, outcome}.")] = None,
    hand_actions_file: Annotated[Path | None, typer.Option(help='JSON {"left": [...], "right": [...]}.')] = None,
    mistake_type: Annotated[str | None, typer.Option(help="Free tag naming the mistake, e.g. dropped_object.")] = None,
    recovery_type: Annotated[str | None, typer.Option(help="Free tag naming how it was recovered.")] = None,
    failure_stage: Annotated[str | None, typer.Option(help="Free tag naming the stage that failed.")] = None,
    autonomy_level: Annotated[str | None, typer.Option(help=f"One of {', '.join(AUTONOMY_LEVELS)}.")] = None,
    model_version: Annotated[
        str | None, typer.Option(help="Policy that ran the episode (empty for human demonstrations).")
    ] = None,
    evaluation_membership: Annotated[str | None, typer.Option(help="train, held_out_eval or none.")] = None,
    leakage_group: Annotated[
        list[str] | None,
        typer.Option(metavar="KEY=ID", help=f"Leakage group, KEY one of {', '.join(LEAKAGE_GROUP_KEYS)} (repeatable)."),
    ] = None,
    source: Annotated[str | None, typer.Option(help="human, model or imported.")] = None,
    source_metadata: Annotated[str | None, typer.Option(help="Flat JSON object.")] = None,
    confidence: Annotated[float | None, typer.Option(help="0..1, only with --source model.")] = None,
    labeled_by: Annotated[str | None, typer.Option(help="Who labelled (default: your login name).")] = None,
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Record a new version of an episode's outcome label (it replaces the current one)."""
    fields: dict[str, Any] = {}
    if file is not None:
        document = load_json_or_jsonl(file, '{"outcome": "success", "progress": 1.0}')
        if not isinstance(document, dict):
            raise LabelValidationError(f"{file} must hold one JSON object (the label).")
        fields = {k: v for k, v in document.items() if k not in READ_ONLY_FIELDS}
    # the options named as the label's fields override --file (the JSON of --source-metadata is read below)
    fields.update({name: ctx.params[name] for name in WRITABLE_FIELDS if ctx.params.get(name) is not None})
    if subtasks_file is not None:
        fields["subtasks"] = load_json_or_jsonl(subtasks_file, '[{"label": "pick", "start_ts": 0, "end_ts": 2.5}]')
    if hand_actions_file is not None:
        fields["hand_actions"] = load_json_or_jsonl(hand_actions_file, '{"left": [], "right": []}')
    if leakage_group:
        fields["leakage_groups"] = _leakage_groups(leakage_group)
    if source_metadata is not None:
        fields["source_metadata"] = _json_text(source_metadata, "--source-metadata")
    label = labels_of(root, labels_dir).outcomes.set(episode, **fields)
    if not print_json(label, as_json):
        console.print(f"episode {episode}: {label['outcome']} (version {label['version']})")


def get_cmd(root: RootArg, episode: EpisodeArg, labels_dir: LabelsDirOpt = None) -> None:
    """Print an episode's current outcome label as JSON."""
    print_json(labels_of(root, labels_dir).outcomes.get(episode))


def history_cmd(root: RootArg, episode: EpisodeArg, labels_dir: LabelsDirOpt = None) -> None:
    """Print every version of an episode's outcome label, newest first, as JSON."""
    print_json(labels_of(root, labels_dir).outcomes.history(episode))


def list_cmd(
    root: RootArg,
    outcome: Annotated[str | None, typer.Option(help="Value or comma-separated values.")] = None,
    evaluation_membership: Annotated[str | None, typer.Option(help="Value or comma-separated values.")] = None,
    source: Annotated[str | None, typer.Option(help="Value or comma-separated values.")] = None,
    autonomy_level: Annotated[str | None, typer.Option(help="Value or comma-separated values.")] = None,
    model_version: Annotated[str | None, typer.Option(help="Exactly this version.")] = None,
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """List current outcome labels matching the filters."""
    handle = labels_of(root, labels_dir)
    labels = handle.outcomes.list(
        outcome=_csv(outcome),
        evaluation_membership=_csv(evaluation_membership),
        source=_csv(source),
        autonomy_level=_csv(autonomy_level),
        model_version=model_version,
    )
    stale = flag_stale(handle, handle.outcomes.stale())
    if print_json(labels, as_json):
        return
    table = new_table(
        None, ("episode", "outcome", "version", "progress", "membership", "autonomy", "source", "model_version")
    )
    for label in labels:
        table.add_row(
            str(label["episode_index"]) + (" (stale, run remap)" if label["episode_index"] in stale else ""),
            label["outcome"],
            str(label["version"]),
            "" if label["progress"] is None else f"{label['progress']:g}",
            label["evaluation_membership"],
            label["autonomy_level"],
            label["source"],
            label["model_version"],
        )
    console.print(table)
    console.print(f"{len(labels)} episode(s)")


def export_cmd(
    root: RootArg,
    out: Annotated[Path | None, typer.Option(help="Output file (default meta/avala_sequence_outcomes.jsonl).")] = None,
    dataset_id: Annotated[str | None, typer.Option(help="Pin the id avala_sequence_uid is derived from.")] = None,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Write every episode's current label to meta/avala_sequence_outcomes.jsonl."""
    path = labels_of(root, labels_dir).outcomes.export(output_path(out), dataset_id=dataset_id)
    console.print(f"wrote {path}")


def import_cmd(
    root: RootArg,
    file: Annotated[Path, typer.Argument(metavar="FILE", help="An avala_sequence_outcomes.jsonl file.")],
    labeled_by: Annotated[str | None, typer.Option(help="Recorded on the new versions.")] = None,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Read an exported avala_sequence_outcomes.jsonl back (all lines checked first)."""
    report = labels_of(root, labels_dir).outcomes.import_file(resolve(file), labeled_by=labeled_by)
    console.print(
        f"{report['lines']} lines: {report['written']} written, {report['unchanged']} unchanged, "
        f"{report['unlabelled']} unlabelled",
    )


def _number(text: str | float) -> Any:
    """An option's text as a number (digits: an ``int``), or as typed when it reads as none
    (the option's rule then refuses it). click also hands the default, a number, to the parser."""
    if not isinstance(text, str):
        return text
    try:
        return int(text) if re.fullmatch(r"\s*[+-]?[0-9]+\s*", text) else float(text)
    except ValueError:  # not a number (or an int too long to read)
        return text


def _held_out_option(text: str | float) -> int | float:
    """``--held-out`` as typed: digits are an episode count, other numbers a share, checked by
    :func:`strands_robots.outcomes.splits.held_out_argument` (the library's rule and limits).

    Raises:
        typer.BadParameter: not a count of at least 1 nor a share strictly between 0 and 1.
    """
    from strands_robots.outcomes.splits import held_out_argument

    return held_out_argument(
        _number(text),
        lambda _: typer.BadParameter(
            f"{quoted(text, 40)} is neither an episode count (a whole number, at least 1) nor a fraction "
            f"{HELD_OUT_SHARE.describe()}; pass e.g. --held-out 12 or --held-out 0.2."
        ),
    )


def _tolerance_option(text: str | float) -> float:
    """``--tolerance`` as typed, checked against :data:`~strands_robots.arguments.UNIT_FRACTION`.

    Raises:
        typer.BadParameter: not a number from 0 to 1 (NaN and infinity included).
    """
    return number_argument(
        _number(text),
        lambda _: typer.BadParameter(
            f"{quoted(text, 40)} is not a fraction {UNIT_FRACTION.describe()}; pass how far the achieved share may "
            "miss a requested fraction, e.g. --tolerance 0.05."
        ),
        UNIT_FRACTION,
    )


def split_cmd(
    root: RootArg,
    held_out: Annotated[
        float,
        typer.Option(
            metavar="COUNT|FRACTION",
            help="Episode count (12) or fraction (0.2) to hold out.",
            parser=_held_out_option,
        ),
    ] = 0.2,
    group_key: Annotated[
        list[str] | None,
        typer.Option(
            metavar="KEY",
            help=f"Leakage-group key that must not leak: {', '.join(LEAKAGE_GROUP_KEYS)} (repeatable; default all).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Shuffles the groups; same seed, same split.")] = 0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report without writing.")] = False,
    tolerance: Annotated[
        float,
        typer.Option(
            metavar="FRACTION",
            help="How far the achieved share may miss a requested fraction (absolute, 0 to 1).",
            parser=_tolerance_option,
        ),
    ] = 0.05,
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Assign train / held_out_eval so that no leakage-group value is on both sides."""
    report = labels_of(root, labels_dir).outcomes.split(
        held_out=held_out,
        seed=seed,
        dry_run=dry_run,
        tolerance=tolerance,
        group_keys=tuple(group_key or LEAKAGE_GROUP_KEYS),
    )
    if print_json(report, as_json):
        return
    counts = report["counts"]
    console.print(
        f"held_out_eval {counts['held_out_eval']} / train {counts['train']} episodes "
        f"(requested {report['requested']}, {report['components']} leakage-group components, "
        f"{report['written']} versions written{', dry run' if dry_run else ''})",
    )
    console.print(f"held_out_eval: {report['held_out_eval']}")


def recovery_cmd(root: RootArg, labels_dir: LabelsDirOpt = None) -> None:
    """Print the mistake-and-recovery track (mistake_and_recovery or intervention) as JSON."""
    print_json(labels_of(root, labels_dir).outcomes.recovery_track())


def verdicts_cmd(
    root: RootArg,
    record: Annotated[bool, typer.Option("--record", help="Record them in episode_labels.json.")] = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Print (or --record) deterministic verdicts derived from the outcome labels."""
    outcomes = labels_of(root, labels_dir).outcomes
    if record:
        outcomes.record_verdicts()
        console.print('recorded verdicts from outcome labels (benchmark "outcomes")')
    else:
        print_json(outcomes.verdicts())


def register(app: typer.Typer) -> None:
    """Add the ``outcome`` command group to ``app``."""
    group = typer.Typer(name="outcome", help="Versioned outcome labels.", no_args_is_help=True)
    group.command("set")(set_cmd)
    group.command("get")(get_cmd)
    group.command("history")(history_cmd)
    group.command("list")(list_cmd)
    group.command("export")(export_cmd)
    group.command("import")(import_cmd)
    group.command("split")(split_cmd)
    group.command("recovery")(recovery_cmd)
    group.command("verdicts")(verdicts_cmd)
    app.add_typer(group, name="outcome")

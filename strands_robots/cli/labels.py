"""Commands on ``episode_labels.json``: verdicts, annotate, filter, agreement, show, remap,
flush, disputes, resolve."""

import contextlib
import json
import warnings
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from strands_robots.cli.common import (
    JsonOpt,
    LabelsDirOpt,
    RootArg,
    TotalEpisodesOpt,
    console,
    episode_list,
    err_console,
    labels_of,
    load_json_or_jsonl,
    new_table,
    output_path,
    plural,
    print_json,
    require_dataset_root,
    require_within,
    resolve,
    styled,
    whole_number,
)
from strands_robots.episode_labels.vocab import FAILURE_MODES, QUALITY_GRADES, REVIEW_DECISIONS
from strands_robots.errors import LabelsNotFoundError, LabelValidationError, StorageError

if TYPE_CHECKING:
    from strands_robots.labels import Labels

#: The fixed words of the label vocabulary as option choices, so ``--help`` lists them and a
#: typo is refused with the list.
Quality = Enum("Quality", {grade: grade for grade in QUALITY_GRADES}, type=str)  # type: ignore[misc]
FailureMode = Enum("FailureMode", {mode: mode for mode in FAILURE_MODES}, type=str)  # type: ignore[misc]
Decision = Enum("Decision", {word: word for word in REVIEW_DECISIONS}, type=str)  # type: ignore[misc]
FAILURE_MODE_HELP = "What went wrong: " + ", ".join(FAILURE_MODES) + "."


class Opinion(str, Enum):
    success = "success"
    failure = "failure"


class FilterFormat(str, Enum):
    json = "json"
    lerobot = "lerobot"
    lerobot_delete = "lerobot-delete"


def verdicts(
    root: RootArg,
    file: Annotated[
        Path | None,
        typer.Argument(metavar="FILE", help="JSON list (or JSONL) of verdicts: episode, success, failure, ..."),
    ] = None,
    benchmark: Annotated[str, typer.Option(help="Benchmark the verdicts came from.")] = "",
    from_column: Annotated[
        str | None,
        typer.Option(help="Derive verdicts from a per-frame success feature instead (e.g. next.success)."),
    ] = None,
    labels_dir: LabelsDirOpt = None,
    total_episodes: TotalEpisodesOpt = None,
) -> None:
    """Record deterministic verdicts (stage one)."""
    labels = labels_of(root, labels_dir)
    root = labels.root
    if (file is None) == (from_column is None):
        raise LabelValidationError("pass exactly one of FILE or --from-column.")
    labels_only = require_dataset_root(root, total_episodes, "verdicts")
    entries: Any
    if file is not None:
        payload = load_json_or_jsonl(file)
        entries = payload.get("episodes") if isinstance(payload, dict) else payload
    else:
        entries = labels.episodes.verdicts_from_dataset(from_column)
        benchmark = benchmark or f"dataset:{from_column}"
    if isinstance(entries, list):
        require_within(
            [e["episode"] for e in entries if isinstance(e, dict) and type(e.get("episode")) is int], labels_only
        )
    before = _verdicts(labels)
    document = labels.episodes.record_verdicts(entries, benchmark=benchmark)
    labels.episodes.flush()
    after = _verdicts(labels, document)
    added = sum(key not in before for key in after)
    changed = sum(key in before and before[key] != verdict for key, verdict in after.items())
    successes = sum(e.get("success") is True for e in entries)
    console.print(
        f"recorded {plural(len(entries), 'verdict')} ({successes} success) in "
        f"{labels.episodes.path}: {added} new, {changed} changed, "
        f"{len(entries) - added - changed} unchanged; {plural(len(document['episodes']), 'episode')} "
        f"{'has' if len(document['episodes']) == 1 else 'have'} records"
    )


def _verdicts(labels: "Labels", document: dict[str, Any] | None = None) -> dict[str, tuple[Any, Any]]:
    """``{episode key: (success, failure)}`` of the verdicts in ``document`` (default: the sidecar's)."""
    if document is None:
        if labels.labels_dir is not None and not labels.labels_dir.exists():
            return {}  # a new labels directory: created by the write that follows
        try:
            document = labels.episodes.read()
        except LabelsNotFoundError:  # no sidecar yet; a missing root (RootNotFoundError) is reported
            return {}
    blocks = {key: record.get("deterministic") for key, record in document["episodes"].items()}
    return {key: (block.get("success"), block.get("failure")) for key, block in blocks.items() if block is not None}


def annotate(
    root: RootArg,
    episode: Annotated[int, typer.Argument(metavar="EPISODE", help="Real episode_index.", parser=whole_number)],
    quality: Annotated[Quality, typer.Option(help="Grade of the execution, not the outcome.")],
    failure_mode: Annotated[FailureMode | None, typer.Option(help=FAILURE_MODE_HELP)] = None,
    note: Annotated[str, typer.Option(help="Free-text note.")] = "",
    opinion: Annotated[Opinion | None, typer.Option(help="Your own read of the outcome.")] = None,
    model: Annotated[str, typer.Option(help="Who labelled (model id or 'human').")] = "human",
    labels_dir: LabelsDirOpt = None,
    total_episodes: TotalEpisodesOpt = None,
) -> None:
    """Write the judge block of one episode."""
    labels = labels_of(root, labels_dir)
    require_within([episode], require_dataset_root(labels.root, total_episodes, "annotate"))
    record = labels.episodes.annotate(
        episode,
        quality=quality.value,
        failure_mode=None if failure_mode is None else failure_mode.value,
        note=note,
        success_opinion=None if opinion is None else opinion is Opinion.success,
        model=model,
    )
    labels.episodes.flush()
    judge = record["judge"]
    message = f"episode {episode}: quality={judge['quality']} failure_mode={judge['failure_mode']}"
    if judge["disputes_verdict"]:
        message += " — disputes the verdict (the verdict stands; recorded for a human to review)"
    console.print(message)


def filter_cmd(
    root: RootArg,
    require_success: Annotated[
        bool,
        typer.Option(
            "--require-success/--no-require-success",
            help="Keep only successful episodes (the verdict, flipped by a human overrule).",
        ),
    ] = True,
    min_quality: Annotated[Quality, typer.Option(help="Lowest acceptable quality.")] = Quality("medium"),
    exclude_disputed: Annotated[bool, typer.Option("--exclude-disputed", help="Drop open disputes.")] = False,
    outcome: Annotated[
        list[str] | None, typer.Option(metavar="OUTCOME", help="Keep episodes with this outcome (repeatable).")
    ] = None,
    membership: Annotated[
        list[str] | None,
        typer.Option(
            metavar="MEMBERSHIP",
            help="Keep this evaluation_membership (train, held_out_eval, none; '' for unset; repeatable).",
        ),
    ] = None,
    include_held_out: Annotated[
        bool,
        typer.Option(
            "--include-held-out",
            help="Keep held_out_eval episodes too (left out by default: they never belong in a training set).",
        ),
    ] = False,
    fmt: Annotated[
        FilterFormat,
        typer.Option(
            "--format",
            help="json: a JSON list; lerobot: a lerobot-train --dataset.episodes argument; lerobot-delete: "
            "lerobot-edit-dataset arguments deleting every other episode.",
        ),
    ] = FilterFormat.json,
    explain: Annotated[
        bool, typer.Option("--explain", help="List the dropped episodes under each reason (on stderr).")
    ] = False,
    out: Annotated[Path | None, typer.Option(help="Write the episode list to this file instead of stdout.")] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="A stale label, a refused label write or a dataset the labels cannot be checked against is an "
            "error (exit 3), not a dropped or unchecked episode.",
        ),
    ] = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Print the episodes worth training on; stderr counts what was dropped and why."""
    labels = labels_of(root, labels_dir)
    root = labels.root
    fold_orphaned_journal(labels)
    options = dict(
        require_success=require_success,
        min_quality=min_quality.value,
        exclude_disputed=exclude_disputed,
        outcomes=outcome or None,
        evaluation_membership=membership or None,
        include_held_out=include_held_out,
    )
    if outcome or membership:
        _require_outcome_labels(labels)
    if strict:
        from strands_robots.errors import StaleRecordError, UnreadableRecordError
        from strands_robots.selection import refuse_stale_labels

        try:
            refuse_stale_labels(labels)
        except (StaleRecordError, UnreadableRecordError) as exc:
            err_console.print(str(exc))
            raise typer.Exit(3) from None
    from strands_robots.episode_labels.filtering import StaleLabelsWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StaleLabelsWarning)  # the explanation below counts them
        episodes = labels.filter(**options)
    explanation = labels.explain(**options)
    _print_drops(explanation["dropped"], len(episodes), explain)
    if explanation["dropped"].get("stale"):
        err_console.print(
            f"stale labels were left out: carry them with `strands-labels remap {root} --from OLD_ROOT` "
            "(docs/editing.md), or pass --strict to make this an error",
        )
    if not episodes and fmt in (FilterFormat.lerobot, FilterFormat.lerobot_delete):
        err_console.print(
            f"no episode was selected, so there is no {fmt.value} argument to print (it would "
            f"{'train on nothing' if fmt is FilterFormat.lerobot else 'delete every episode'}); loosen the filter.",
        )
        raise typer.Exit(1)
    if fmt is FilterFormat.lerobot:  # ready for lerobot-train
        text = f'--dataset.episodes="[{",".join(map(str, episodes))}]"'
    elif fmt is FilterFormat.lerobot_delete:  # lerobot-edit-dataset deleting the episodes not selected
        kept = set(episodes)
        dropped = ",".join(str(i) for i in labels.dataset.episodes.indices if int(i) not in kept)
        text = f'--operation.type delete_episodes --operation.episode_indices "[{dropped}]"'
    else:
        text = json.dumps(episodes)
    if out is None:
        typer.echo(text)
        return
    from strands_robots.storage.atomic import atomic_write_bytes

    out = output_path(out)
    try:
        atomic_write_bytes(out, (text + "\n").encode("utf-8"))  # a link at --out is refused by name
    except StorageError as exc:
        raise LabelValidationError(f"{exc} Pass --out a writable file path.") from exc
    console.print(f"wrote {plural(len(episodes), 'episode')} to {out}", style="dim")


def _require_outcome_labels(labels: "Labels") -> None:
    path = labels.outcomes.path
    if not path.exists() or not labels.outcomes.current():
        raise LabelValidationError(
            f"--outcome / --membership select by outcome label, and {path} has none, so nothing could match. "
            "Record outcome labels first (`strands-labels outcome set ROOT EPISODE ...` or "
            "`strands-labels outcome import ROOT FILE`), or drop the option."
        )


def _print_drops(dropped: dict[str, list[int]], kept: int, explain: bool) -> None:
    """``kept 3 episodes; dropped 5: 2 unjudged, 3 below quality`` on stderr (+ the lists with --explain)."""
    counts = [(reason, episodes) for reason, episodes in dropped.items() if episodes]
    total = sum(len(episodes) for _, episodes in counts)
    line = f"kept {plural(kept, 'episode')}"
    if total:
        line += f"; dropped {total}: " + ", ".join(f"{len(episodes)} {reason}" for reason, episodes in counts)
    err_console.print(line)
    if explain:
        for reason, episodes in counts:
            err_console.print(f"  {reason}: {', '.join(map(str, episodes))}")


#: Below this many compared episodes `agreement` warns that the figures are unstable.
SMALL_SAMPLE = 30


def agreement(
    root: RootArg,
    human: Annotated[
        Path | None,
        typer.Argument(
            metavar="HUMAN",
            help='Human-labels JSON, e.g. {"3": {"quality": "high"}, "7": {"quality": "low", "failure_mode": '
            '"near_miss"}} (docs/judge.md); default: the review grades.',
        ),
    ] = None,
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Judge-versus-human agreement with baseline and Cohen's kappa."""
    from strands_robots.episode_labels.agreement import read_human_labels

    holdout = None if human is None else read_human_labels(resolve(human))
    result = labels_of(root, labels_dir).episodes.agreement(holdout)
    if print_json(result, as_json):
        return
    table = new_table(
        f"judge vs human on {result['episodes_compared']} episodes", ("field", "agreement", "baseline", "kappa")
    )

    def fmt(value: Any) -> str:
        return "—" if value is None else f"{value:.3f}"

    for field in ("quality", "failure_mode"):
        table.add_row(
            field, fmt(result[f"{field}_agreement"]), fmt(result[f"{field}_baseline"]), fmt(result[f"{field}_kappa"])
        )
    console.print(table)
    compared = result["episodes_compared"]
    if compared < SMALL_SAMPLE:
        err_console.print(
            styled(
                ("warning:", "yellow"),
                f" only {plural(compared, 'episode')} compared; with fewer than {SMALL_SAMPLE} the agreement "
                "and kappa move a lot with one label (read the disagreements below, grade more episodes).",
            )
        )
    disagreements = result["disagreements"]
    if disagreements:
        rows = new_table(f"{plural(len(disagreements), 'disagreement')}", ("episode", "field", "judge", "human"))
        for d in disagreements:
            rows.add_row(str(d["episode"]), d["field"], str(d["judge"] or "—"), str(d["human"] or "—"))
        console.print(rows)
    if result["missing"]:
        console.print(f"not scored (no judge label): {', '.join(map(str, result['missing']))}")


def show(
    root: RootArg,
    episode: Annotated[
        int | None, typer.Argument(metavar="EPISODE", help="Show one episode's full record.", parser=whole_number)
    ] = None,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """A table per episode: the verdict and quality `filter` uses (after reviews), failure_mode, disputes, stale.

    A verdict a human overruled shows as e.g. ``failure (overruled success)``; a quality a
    review replaced as ``high (review; judge low)``.
    """
    from strands_robots.episode_labels.review import (
        dispute_open,
        effective_quality,
        effective_success,
        review_is_current,
    )

    labels = labels_of(root, labels_dir)
    fold_orphaned_journal(labels)
    document = labels.episodes.read()
    stale = labels.episodes.stale()
    records = document["episodes"]
    if episode is not None:
        if str(episode) not in records:
            raise LabelValidationError(
                f"episode {episode} has no record in {labels.episodes.path}; "
                f"`strands-labels show ROOT` lists the {plural(len(records), 'episode')} that have one."
            )
        record = records[str(episode)]
        success = effective_success(record)
        effective = {"success": success, "quality": effective_quality(record), "dispute_open": dispute_open(record)}
        print_json({**record, "effective": effective, "stale": stale.get(episode)})
        return
    table = new_table(
        f"{labels.episodes.path} (benchmark: {document.get('benchmark') or '—'})",
        ("episode", "verdict", "quality", "failure_mode", "disputed", "review", "stale"),
    )
    for key in sorted(records, key=int):
        record = records[key]
        det, judge = record.get("deterministic"), record.get("judge") or {}
        success = effective_success(record)
        verdict = "—" if success is None else ("success" if success else "failure")
        if det is not None and success != bool(det["success"]):
            verdict += f" (overruled {'success' if det['success'] else 'failure'})"
        quality = effective_quality(record) or "—"
        if judge and quality != judge.get("quality"):
            quality += f" (review; judge {judge.get('quality')})"
        elif not judge and quality != "—":
            quality += " (review)"
        disputed = "open" if dispute_open(record) else ("resolved" if judge.get("disputes_verdict") else "")
        review = record.get("review")
        review_text = "" if not review else review["decision"] + ("" if review_is_current(record) else " (outdated)")
        table.add_row(
            key,
            verdict,
            quality,
            judge.get("failure_mode") or "",
            disputed,
            review_text,
            "stale" if int(key) in stale else "",
        )
    console.print(table)
    _print_journal_problems(labels)


def fold_orphaned_journal(labels: "Labels") -> None:
    """Fold a journal left by a process that was killed before its exit fold (read-only
    commands too), when the sidecar's directory is writable; a read-only one is read as is."""
    with contextlib.suppress(StorageError):  # a read-only directory or a busy lock: readers merge it
        labels.episodes.flush()


def _print_journal_problems(labels: "Labels") -> None:
    from strands_robots.episode_labels.document import open_store
    from strands_robots.storage.side_files import conflicts_path, rejected_path

    store = open_store(labels.root, labels.labels_dir)
    problems = store.problems()
    if problems["conflicts"]:
        n = problems["conflicts"]
        console.print(
            styled(
                (plural(n, "conflict"), "yellow"),
                f": labels written here while another tool rewrote {store.path.name} differ from that tool's; "
                f"the file keeps the other tool's, ours are in {conflicts_path(store.path)} (re-apply the ones "
                "to keep, then delete that file).",
            ),
        )
    if problems["rejected"]:
        n = problems["rejected"]
        console.print(
            styled(
                (f"{plural(n, 'journal line')} refused", "yellow"),
                f" (never applied), kept in {rejected_path(store.path)} with the reason; re-record those "
                "labels, then delete that file.",
            ),
        )


def remap(
    root: RootArg,
    mapping: Annotated[
        Path | None,
        typer.Argument(
            metavar="MAPPING", help="JSON object {old_episode_index: new_episode_index} (or use --deleted)."
        ),
    ] = None,
    deleted: Annotated[
        str | None,
        typer.Option(
            help="Episodes lerobot-edit-dataset delete_episodes removed, e.g. 3,7: survivors renumber in order."
        ),
    ] = None,
    total_episodes: Annotated[
        int | None,
        typer.Option(help="Episodes before the edit (default: the dataset's episodes now + the deleted ones)."),
    ] = None,
    allow_drop: Annotated[
        bool, typer.Option("--allow-drop", help="Drop the labels of every old episode missing from the mapping.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check and count only; write nothing.")] = False,
    labels_dir: LabelsDirOpt = None,
    source: Annotated[
        list[Path] | None,
        typer.Option(
            "--from",
            help="The dataset before the edit (e.g. ROOT_old): its sidecars are carried to ROOT, each labelled "
            "episode matched to the episode holding the same recording. Repeat for a merge (one per merged "
            "dataset). With MAPPING, the mapping is checked against the one found.",
        ),
    ] = None,
) -> None:
    """Carry every sidecar's labels across a dataset edit that renumbered episodes.

    All sidecars change together or not at all; a run interrupted by a kill or a failure
    is completed by running the same command again (docs/sidecar-format.md, "Remap";
    docs/editing.md for every lerobot-edit-dataset operation).
    """
    from strands_robots.remap import EpisodeMapping, mapping_after_delete

    if source and deleted is not None:
        raise LabelValidationError("give --from OLD_ROOT or --deleted, not both (--from finds the mapping).")
    if not source and (deleted is None) == (mapping is None):
        raise LabelValidationError(
            "give either a mapping file or --deleted (e.g. `strands-labels remap ROOT --deleted 3,7`), not both."
        )
    table = None if mapping is None else EpisodeMapping.parse(load_json_or_jsonl(mapping, '{"0": 0, "2": 1}'))
    if deleted is not None:
        gone = episode_list(deleted, "--deleted")
        before = total_episodes if total_episodes is not None else _episodes_before(root, len(gone))
        table = mapping_after_delete(before, gone)
    sources = [resolve(s) for s in source or ()]
    result = labels_of(root, labels_dir).remap(
        table, source=(sources[0] if len(sources) == 1 else sources) or None, allow_drop=allow_drop, dry_run=dry_run
    )
    _report_remap(result, dry_run)


def _report_remap(result: Any, dry_run: bool) -> None:
    if result.already_applied:
        console.print(f"already applied (remap {result.already_applied}): nothing changed")
        return
    if result.recovered:
        console.print(f"an interrupted remap was found and {result.recovered}")
    for episode, (before, after) in sorted(result.retasked.items()):
        console.print(f"episode {episode}: tasks changed {before} -> {after} (same recording; labels kept)")
    for name, kept in result.counts.items():
        console.print(f"{name}: {kept} records {'would be ' if dry_run else ''}kept")


def _episodes_before(root: Path, deleted: int) -> int:
    from strands_robots.dataset.cache import cached_dataset_if_present as open_dataset_if_present

    dataset = open_dataset_if_present(root)
    if dataset is None:
        raise LabelValidationError(
            f"{root} has no LeRobot metadata to count its episodes; pass --total-episodes (the number of episodes "
            "before the edit)."
        )
    return len(dataset.episodes) + deleted


def flush(root: RootArg, labels_dir: LabelsDirOpt = None) -> None:
    """Fold pending journal entries into episode_labels.json."""
    folded = labels_of(root, labels_dir).episodes.flush()
    console.print("folded the journal" if folded else "nothing to fold")


def disputes(
    root: RootArg,
    show_all: Annotated[bool, typer.Option("--all", help="Include resolved disputes.")] = False,
    as_json: JsonOpt = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """List judge opinions that contradict the verdict."""
    rows = labels_of(root, labels_dir).episodes.disputes(include_resolved=show_all)
    if print_json(rows, as_json):
        return
    table = new_table(
        plural(len(rows), "dispute" if show_all else "open dispute"),
        ("episode", "verdict", "judge opinion", "quality", "failure_mode", "note", "status"),
    )
    for row in rows:
        status = row["review"]["decision"] if row["review"] else ("open" if not row["resolved"] else "")
        table.add_row(
            str(row["episode"]),
            "success" if row["success"] else "failure",
            "success" if row["success_opinion"] else "failure",
            row["quality"],
            row["failure_mode"] or "",
            row["note"],
            status,
        )
    console.print(table)


def resolve_cmd(
    root: RootArg,
    episode: Annotated[int, typer.Argument(metavar="EPISODE", help="Real episode_index.", parser=whole_number)],
    decision: Annotated[
        Decision,
        typer.Option(
            help="uphold_verdict (the verdict stands), overrule_verdict (flip it for `filter`) or grade_only "
            "(grade the episode, no dispute decided)."
        ),
    ],
    reviewer: Annotated[
        str | None, typer.Option(help="Your name (default: your login name, as the review page records).")
    ] = None,
    note: Annotated[str, typer.Option(help="Why you decided so (kept with the review).")] = "",
    quality: Annotated[
        Quality | None, typer.Option(help="Your grade; replaces the judge's quality in `filter` while current.")
    ] = None,
    failure_mode: Annotated[FailureMode | None, typer.Option(help=FAILURE_MODE_HELP)] = None,
    labels_dir: LabelsDirOpt = None,
    total_episodes: TotalEpisodesOpt = None,
) -> None:
    """Record a human review of an episode (resolves a dispute or grades it)."""
    from strands_robots.episode_labels.review import default_reviewer

    labels = labels_of(root, labels_dir)
    require_within([episode], require_dataset_root(labels.root, total_episodes, "resolve"))
    reviewer = reviewer if reviewer is not None else default_reviewer()
    labels.episodes.review(
        episode,
        decision=decision.value,
        reviewer=reviewer,
        note=note,
        quality=None if quality is None else quality.value,
        failure_mode=None if failure_mode is None else failure_mode.value,
    )
    labels.episodes.flush()
    console.print(f"episode {episode}: {decision.value} by {reviewer}")


def register(app: typer.Typer) -> None:
    """Add the label commands to ``app``."""
    app.command("verdicts")(verdicts)
    app.command("annotate")(annotate)
    app.command("filter")(filter_cmd)
    app.command("agreement")(agreement)
    app.command("show")(show)
    app.command("remap")(remap)
    app.command("flush")(flush)
    app.command("disputes")(disputes)
    app.command("resolve")(resolve_cmd)

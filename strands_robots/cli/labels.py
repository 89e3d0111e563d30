"""Commands on ``episode_labels.json``: verdicts, annotate, filter, agreement, show, remap,
flush, disputes, resolve."""

from __future__ import annotations

import contextlib
import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from strands_robots import episode_labels as el
from strands_robots.cli.common import (
    LabelsDirOpt,
    RootArg,
    console,
    load_json_file,
    load_json_or_jsonl,
    print_json,
    resolve,
    whole_number,
)
from strands_robots.errors import LabelValidationError


class Quality(str, Enum):
    low = "low"
    medium = "medium"
    high = "high"


class Opinion(str, Enum):
    success = "success"
    failure = "failure"


class FilterFormat(str, Enum):
    json = "json"
    lerobot = "lerobot"


def lerobot_argument(episodes: list[int]) -> str:
    """``--dataset.episodes="[0,3,7]"``, ready for ``lerobot-train``."""
    return f'--dataset.episodes="[{",".join(str(i) for i in episodes)}]"'


def verdicts(
    root: RootArg,
    file: Annotated[
        Path | None, typer.Argument(help="JSON list (or JSONL) of verdicts: episode, success, failure, ...")
    ] = None,
    benchmark: Annotated[str, typer.Option(help="Benchmark the verdicts came from.")] = "",
    from_column: Annotated[
        str | None,
        typer.Option(help="Derive verdicts from a per-frame success feature instead (e.g. next.success)."),
    ] = None,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Record deterministic verdicts (stage one)."""
    root, labels_dir = resolve(root), resolve(labels_dir)
    if (file is None) == (from_column is None):
        raise LabelValidationError("pass exactly one of FILE or --from-column.")
    entries: Any
    if file is not None:
        payload = load_json_or_jsonl(resolve(file))
        entries = payload.get("episodes") if isinstance(payload, dict) else payload
    else:
        entries = el.verdicts_from_dataset(root, column=from_column)
        benchmark = benchmark or f"dataset:{from_column}"
    document = el.record_deterministic_verdicts(root, entries, benchmark=benchmark, labels_dir=labels_dir)
    el.flush(root, labels_dir=labels_dir)
    successes = sum(e.get("success") is True for e in entries)
    console.print(
        f"recorded {len(entries)} verdicts ({successes} success) in {el.labels_path(root, labels_dir=labels_dir)}; "
        f"{len(document['episodes'])} episodes have records"
    )


def annotate(
    root: RootArg,
    episode: Annotated[int, typer.Argument(help="Real episode_index.", parser=whole_number)],
    quality: Annotated[Quality, typer.Option(help="Grade of the execution, not the outcome.")],
    failure_mode: Annotated[str | None, typer.Option(help="One of the fixed failure modes.")] = None,
    note: Annotated[str, typer.Option(help="Free-text note.")] = "",
    opinion: Annotated[Opinion | None, typer.Option(help="Your own read of the outcome.")] = None,
    model: Annotated[str, typer.Option(help="Who labelled (model id or 'human').")] = "human",
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Write the judge block of one episode."""
    root, labels_dir = resolve(root), resolve(labels_dir)
    record = el.annotate_episode(
        root,
        episode,
        quality=quality.value,
        failure_mode=failure_mode,
        note=note,
        success_opinion=None if opinion is None else opinion is Opinion.success,
        model=model,
        labels_dir=labels_dir,
    )
    el.flush(root, labels_dir=labels_dir)
    judge = record["judge"]
    message = f"episode {episode}: quality={judge['quality']} failure_mode={judge['failure_mode']}"
    if judge["disputes_verdict"]:
        message += " — disputes the verdict (the verdict stands; recorded for a human to review)"
    console.print(message)


def filter_cmd(
    root: RootArg,
    require_success: Annotated[bool, typer.Option("--require-success/--no-require-success")] = True,
    min_quality: Annotated[Quality, typer.Option(help="Lowest acceptable quality.")] = Quality.medium,
    exclude_disputed: Annotated[bool, typer.Option("--exclude-disputed", help="Drop open disputes.")] = False,
    outcome: Annotated[list[str] | None, typer.Option(help="Keep episodes with this outcome (repeatable).")] = None,
    membership: Annotated[
        list[str] | None,
        typer.Option(help="Keep this evaluation_membership (train, held_out_eval, none; '' for unset)."),
    ] = None,
    fmt: Annotated[FilterFormat, typer.Option("--format", help="json list or a lerobot-train argument.")] = (
        FilterFormat.json
    ),
    out: Annotated[Path | None, typer.Option(help="Write the episode list (JSON) to this file.")] = None,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Print the episodes worth training on."""
    root, labels_dir = resolve(root), resolve(labels_dir)
    fold_orphaned_journal(root, labels_dir)
    episodes = el.filter_episodes(
        root,
        require_success=require_success,
        min_quality=min_quality.value,
        exclude_disputed=exclude_disputed,
        outcomes=outcome or None,
        evaluation_membership=membership or None,
        labels_dir=labels_dir,
    )
    text = lerobot_argument(episodes) if fmt is FilterFormat.lerobot else json.dumps(episodes)
    if out is None:
        typer.echo(text)
        return
    out = resolve(out)
    try:
        out.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise LabelValidationError(
            f"cannot write {out}: {exc.strerror or exc}; pass --out a writable file path."
        ) from exc
    console.print(f"wrote {len(episodes)} episodes to {out}", style="dim")


def agreement(
    root: RootArg,
    human: Annotated[
        Path | None, typer.Argument(help="Holdout JSON {episode: {quality, failure_mode}}; default: review grades.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")] = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Judge-versus-human agreement with baseline and Cohen's kappa."""
    root, labels_dir = resolve(root), resolve(labels_dir)
    holdout = None if human is None else load_json_file(resolve(human))
    result = el.measure_agreement(root, holdout, labels_dir=labels_dir)
    if as_json:
        print_json(result)
        return
    table = Table(title=f"judge vs human on {result['episodes_compared']} episodes")
    for column in ("field", "agreement", "baseline", "kappa"):
        table.add_column(column)

    def fmt(value: Any) -> str:
        return "—" if value is None else f"{value:.3f}"

    for field in ("quality", "failure_mode"):
        table.add_row(
            field, fmt(result[f"{field}_agreement"]), fmt(result[f"{field}_baseline"]), fmt(result[f"{field}_kappa"])
        )
    console.print(table)
    if result["missing"]:
        console.print(f"not scored (no judge label): {result['missing']}")


def show(
    root: RootArg,
    episode: Annotated[int | None, typer.Argument(help="Show one episode's full record.", parser=whole_number)] = None,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """A table of verdict, quality, failure_mode, disputed and stale per episode."""
    from strands_robots.episode_labels.review import dispute_open, review_is_current

    root, labels_dir = resolve(root), resolve(labels_dir)
    fold_orphaned_journal(root, labels_dir)
    document = el.read_labels(root, labels_dir=labels_dir)
    stale = el.stale_episodes(root, labels_dir=labels_dir)
    records = document["episodes"]
    if episode is not None:
        if str(episode) not in records:
            raise LabelValidationError(
                f"episode {episode} has no record in {el.labels_path(root, labels_dir=labels_dir)}."
            )
        print_json({**records[str(episode)], "stale": stale.get(episode)})
        return
    table = Table(
        title=f"{el.labels_path(root, labels_dir=labels_dir)} (benchmark: {document.get('benchmark') or '—'})"
    )
    for column in ("episode", "verdict", "quality", "failure_mode", "disputed", "review", "stale"):
        table.add_column(column)
    for key in sorted(records, key=int):
        record = records[key]
        det, judge = record.get("deterministic"), record.get("judge") or {}
        verdict = "—" if det is None else ("success" if det["success"] else "failure")
        disputed = "open" if dispute_open(record) else ("resolved" if judge.get("disputes_verdict") else "")
        review = record.get("review")
        review_text = "" if not review else review["decision"] + ("" if review_is_current(record) else " (outdated)")
        table.add_row(
            key,
            verdict,
            judge.get("quality", "—"),
            judge.get("failure_mode") or "",
            disputed,
            review_text,
            "stale" if int(key) in stale else "",
        )
    console.print(table)
    _print_journal_problems(root, labels_dir)


def fold_orphaned_journal(root: Path, labels_dir: Path | None) -> None:
    """Fold a journal left by a process that was killed before its exit fold (read-only
    commands too), when the sidecar's directory is writable; a read-only one is read as is."""
    from strands_robots.errors import StorageError

    with contextlib.suppress(StorageError):  # a read-only directory or a busy lock: readers merge it
        el.flush(root, labels_dir=labels_dir)


def _print_journal_problems(root: Path, labels_dir: Path | None) -> None:
    from strands_robots.episode_labels.document import open_store
    from strands_robots.storage.journal import conflicts_path, rejected_path

    store = open_store(root, labels_dir)
    problems = store.problems()
    if problems["conflicts"]:
        n = problems["conflicts"]
        console.print(
            f"[yellow]{n} conflict{'s' if n != 1 else ''}[/yellow]: labels written here while another tool rewrote "
            f"{store.path.name} differ from that tool's; the file keeps the other tool's, ours are in "
            f"{conflicts_path(store.path)} (re-apply the ones to keep, then delete that file).",
            soft_wrap=True,
        )
    if problems["rejected"]:
        n = problems["rejected"]
        console.print(
            f"[yellow]{n} journal line{'s' if n != 1 else ''} refused[/yellow] (never applied), kept in "
            f"{rejected_path(store.journal)} with the reason; re-record those labels, then delete that file.",
            soft_wrap=True,
        )


def remap(
    root: RootArg,
    mapping: Annotated[
        Path | None, typer.Argument(help="JSON object {old_episode_index: new_episode_index} (or use --deleted).")
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
) -> None:
    """Carry every sidecar's labels across a dataset edit that renumbered episodes.

    All sidecars change together or not at all; a run interrupted by a kill or a failure
    is completed by running the same command again (docs/sidecar-format.md, "Remap").
    """
    from strands_robots.remap import EpisodeMapping, mapping_after_delete, remap_dataset

    root, labels_dir = resolve(root), resolve(labels_dir)
    if (mapping is None) == (deleted is None):
        raise LabelValidationError(
            "give either a mapping file or --deleted (e.g. `strands-labels remap ROOT --deleted 3,7`), not both."
        )
    if deleted is not None:
        gone = _index_list(deleted)
        if total_episodes is None:
            total_episodes = _episodes_before(root, len(gone))
        table: EpisodeMapping = mapping_after_delete(total_episodes, gone)
    else:
        table = EpisodeMapping.parse(load_json_file(resolve(mapping)))
    result = remap_dataset(root, table, labels_dir=labels_dir, allow_drop=allow_drop, dry_run=dry_run)
    if result.recovered:
        console.print(f"an interrupted remap was found and {result.recovered}")
    for name, kept in result.counts.items():
        console.print(f"{name}: {kept} records {'would be ' if dry_run else ''}kept")


def _index_list(text: str) -> list[int]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() for p in parts):
        raise LabelValidationError(
            f"--deleted {text!r} is not a comma-separated list of episode indices; write e.g. --deleted 3,7."
        )
    return [int(p) for p in parts]


def _episodes_before(root: Path, deleted: int) -> int:
    from strands_robots.fingerprint import open_dataset_if_present

    dataset = open_dataset_if_present(root)
    if dataset is None:
        raise LabelValidationError(
            f"{root} has no LeRobot metadata to count its episodes; pass --total-episodes (the number of episodes "
            "before the edit)."
        )
    return len(dataset.episodes) + deleted


def flush(root: RootArg, labels_dir: LabelsDirOpt = None) -> None:
    """Fold pending journal entries into episode_labels.json."""
    root, labels_dir = resolve(root), resolve(labels_dir)
    folded = el.flush(root, labels_dir=labels_dir)
    console.print("folded the journal" if folded else "nothing to fold")


def disputes(
    root: RootArg,
    show_all: Annotated[bool, typer.Option("--all", help="Include resolved disputes.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """List judge opinions that contradict the verdict."""
    root, labels_dir = resolve(root), resolve(labels_dir)
    rows = el.list_disputes(root, include_resolved=show_all, labels_dir=labels_dir)
    if as_json:
        print_json(rows)
        return
    table = Table(title=f"{len(rows)} {'disputes' if show_all else 'open disputes'}")
    for column in ("episode", "verdict", "judge opinion", "quality", "failure_mode", "note", "status"):
        table.add_column(column)
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


class Decision(str, Enum):
    uphold_verdict = "uphold_verdict"
    overrule_verdict = "overrule_verdict"
    grade_only = "grade_only"


def resolve_cmd(
    root: RootArg,
    episode: Annotated[int, typer.Argument(help="Real episode_index.", parser=whole_number)],
    decision: Annotated[Decision, typer.Option(help="uphold_verdict, overrule_verdict or grade_only.")],
    reviewer: Annotated[str, typer.Option(help="Your name.")],
    note: Annotated[str, typer.Option()] = "",
    quality: Annotated[Quality | None, typer.Option()] = None,
    failure_mode: Annotated[str | None, typer.Option()] = None,
    labels_dir: LabelsDirOpt = None,
) -> None:
    """Record a human review of an episode (resolves a dispute or grades it)."""
    root, labels_dir = resolve(root), resolve(labels_dir)
    el.review_episode(
        root,
        episode,
        decision=decision.value,
        reviewer=reviewer,
        note=note,
        quality=None if quality is None else quality.value,
        failure_mode=failure_mode,
        labels_dir=labels_dir,
    )
    el.flush(root, labels_dir=labels_dir)
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

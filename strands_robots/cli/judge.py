"""``strands-labels judge ROOT``: label every verdict-bearing episode with a judge agent.

Without ``--model`` the offline judge (``heuristic-v1``) runs; with ``--model
PROVIDER:MODEL_ID`` a real model does. Resumable (episodes already labelled are skipped
unless ``--relabel``), parallel (``--workers``), and a failing episode is reported at
the end instead of stopping the run (exit status 1 when any failed).
"""

import contextlib
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from strands_robots.cli.common import (
    EpisodesOpt,
    LabelsDirOpt,
    RootArg,
    console,
    episode_list,
    err_console,
    progress_bar,
    styled,
)
from strands_robots.errors import EpisodeNotFoundError
from strands_robots.model_spec import DEFAULT_MAX_REQUESTS, DEFAULT_TIMEOUT_S
from strands_robots.storage.mapping import index_ranges

#: Value of a bare ``--ray``: no address (a local cluster, or the one ``RAY_ADDRESS`` names).
LOCAL_CLUSTER = ""

# What ``--ray`` takes as its address when it is a separate word: ``auto``, ``local``,
# ``ray://...``, ``HOST:PORT`` (the forms ``ray.init(address=...)`` accepts).
_RAY_ADDRESS = re.compile(r"auto|local|ray://\S+|(?:[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:]+\]):[0-9]{1,5}")


def ray_cluster_address(ray: str | None, ray_address: str | None) -> str | None:
    """The ``ray.init`` address of ``--ray [ADDRESS]`` / ``--ray-address ADDRESS`` (None: local).

    Raises:
        typer.BadParameter: the two options name different clusters.
    """
    given = {a for a in (ray, ray_address) if a}
    if len(given) > 1:
        raise typer.BadParameter(
            f"--ray {ray} and --ray-address {ray_address} name different clusters; pass one of them."
        )
    return given.pop() if given else None


class JudgeCommand(TyperCommand):
    """``judge`` with ``--ray``'s optional value, never swallowing ROOT.

    An option whose value may be left out takes the next word whatever it is (click's
    ``is_flag=False, flag_value=...``), so ``judge --ray ROOT`` would take ROOT for the
    address. Here ``--ray`` followed by a word that does not read as a Ray address
    (``auto``, ``local``, ``ray://...``, ``HOST:PORT``), or by nothing, becomes
    ``--ray=`` (:data:`LOCAL_CLUSTER`) before click parses, and that word stays a
    positional argument.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Rewrite a bare ``--ray`` to ``--ray=`` before click parses ``args``."""
        out: list[str] = []
        for position, word in enumerate(args):
            if word == "--":
                out.extend(args[position:])
                break
            following = args[position + 1] if position + 1 < len(args) else None
            if word == "--ray" and (following is None or not _RAY_ADDRESS.fullmatch(following)):
                word = f"--ray={LOCAL_CLUSTER}"
            out.append(word)
        return super().parse_args(ctx, out)


def check_episodes_exist(root: Path, wanted: list[int]) -> None:
    """Refuse ``--episodes`` naming episodes the dataset does not have (named in the message).

    Raises:
        EpisodeNotFoundError: some of ``wanted`` are not in the dataset.
    """
    from strands_robots.dataset import open_dataset

    indices = [int(i) for i in open_dataset(root).episodes.indices]
    present = set(indices)
    absent = [i for i in wanted if i not in present]
    if absent:
        span = f"{indices[0]}..{indices[-1]}" if indices else "none"
        raise EpisodeNotFoundError(
            f"--episodes names {len(absent)} episode(s) the dataset does not have: {index_ranges(absent, ',')} "
            f"(it has {len(indices)}, episode_index {span}); pass only existing episodes, e.g. "
            f"--episodes {index_ranges(present & set(wanted), ',') or span.replace('..', '-')}."
        )


def judge(
    root: RootArg,
    model: Annotated[
        str | None,
        typer.Option(
            help="PROVIDER:MODEL_ID (bedrock, anthropic, openai, gemini, litellm, ollama, llamacpp); "
            "default: offline judge."
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="Server of the --model provider, e.g. http://localhost:8000/v1 for an OpenAI-compatible local "
            "server (vLLM, LM Studio, llama.cpp, ollama's /v1) with --model openai:MODEL.",
        ),
    ] = None,
    episodes: EpisodesOpt = None,
    limit: Annotated[int | None, typer.Option(min=1, help="At most this many episodes.")] = None,
    frames: Annotated[int, typer.Option(min=1, max=64, help="Frames sampled per episode.")] = 4,
    images: Annotated[
        bool | None,
        typer.Option("--images/--no-images", help="Send camera images (default: with --model yes, offline no)."),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Episodes judged in parallel (default 1; with --ray the cluster's CPUs).")
    ] = None,
    relabel: Annotated[
        bool, typer.Option("--relabel", help="Redo labelled episodes (replaced labels kept in judge_history).")
    ] = False,
    labels_dir: LabelsDirOpt = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="[ADDRESS]",
            show_default=False,
            help="Judge on Ray workers; needs the [ray] extra. --ray alone: a local cluster (or RAY_ADDRESS); "
            "--ray ADDRESS joins a cluster (auto, ray://HEAD:10001, HOST:PORT). A ROOT after --ray is never "
            "taken for the address; --ray=ADDRESS always is.",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", metavar="ADDRESS", help="Same as --ray ADDRESS (kept for older scripts)."),
    ] = None,
    batch_size: Annotated[int | None, typer.Option(min=1, help="Episodes per Ray task (default: automatic).")] = None,
    timeout: Annotated[
        float,
        typer.Option(min=0.001, metavar="SECONDS", help="Seconds one model request may take before it is retried."),
    ] = DEFAULT_TIMEOUT_S,
    max_requests_per_episode: Annotated[
        int,
        typer.Option(
            min=1, metavar="N", help="Model requests one episode's conversation may make (retries not counted)."
        ),
    ] = DEFAULT_MAX_REQUESTS,
) -> None:
    """Grade each episode's execution on top of its verdict (never overturning it)."""
    from strands_robots.episode_labels import flush
    from strands_robots.judges.runner import run_judge

    address = ray_cluster_address(ray, ray_address)
    wanted = episode_list(episodes) if episodes is not None else None
    if wanted is not None:
        check_episodes_exist(root, wanted)
    progress = progress_bar("judge", elapsed=True, transient=False)
    task = progress.add_task("judge", total=None, last="")

    def on_start(total: int) -> None:
        progress.update(task, total=total)
        if total:
            progress.start()

    def on_result(result) -> None:  # noqa: ANN001 - EpisodeResult
        last = f"ep {result.episode}: {result.quality if result.ok else 'FAILED'}"
        progress.update(task, advance=1, last=last)

    interrupted = False
    report = None
    try:
        report = run_judge(
            root,
            model=model,
            base_url=base_url,
            episodes=wanted,
            limit=limit,
            frames=frames,
            images=images,
            workers=workers,
            relabel=relabel,
            labels_dir=labels_dir,
            on_start=on_start,
            on_result=on_result,
            executor="ray" if ray is not None or ray_address is not None else "thread",
            ray_address=address,
            batch_size=batch_size,
            timeout=timeout,
            max_requests_per_episode=max_requests_per_episode,
        )
    except KeyboardInterrupt:
        interrupted = True
    finally:
        progress.stop()
        with contextlib.suppress(FileNotFoundError):
            flush(root, labels_dir=labels_dir)
    if interrupted or report is None:
        err_console.print(
            styled(("interrupted:", "yellow"), " labels written so far are kept; run the same command to resume.")
        )
        raise typer.Exit(130)
    _print_report(report)
    if report.failed:
        raise typer.Exit(1)


def _taken_line(report) -> str:  # noqa: ANN001 - JudgeReport
    taken = report.taken_elsewhere
    return (
        f"{len(taken)} episode(s) left to another run judging this dataset (it held them, or labelled them "
        f"meanwhile): {index_ranges(taken, ',')}."
    )


def group_failures(failed: list) -> list[tuple[list[int], str]]:  # noqa: ANN001 - EpisodeResult
    """Failures with the same error (the episode's own index aside) as one row each.

    Returns:
        ``(episodes, error)`` rows in first-episode order; in ``error`` the episode's index
        reads ``N`` where the rows were merged.
    """
    groups: dict[str, list[int]] = {}
    texts: dict[str, str] = {}
    for result in failed:
        key = re.sub(rf"\b([Ee]pisode) {result.episode}\b", r"\1 N", result.error)
        groups.setdefault(key, []).append(result.episode)
        texts.setdefault(key, result.error)
    return [(episodes, key if len(episodes) > 1 else texts[key]) for key, episodes in groups.items()]


def _print_report(report) -> None:  # noqa: ANN001 - JudgeReport
    from rich.table import Table

    if not report.results:
        console.print(
            f"nothing to judge: {report.already_labelled} episode(s) already labelled (--relabel redoes them)."
        )
        if report.taken_elsewhere:
            console.print(_taken_line(report))
        return
    summary = Table(title=f"judge {report.judge_model}")
    summary.add_column("")
    summary.add_column("episodes", justify="right")
    for quality, count in report.quality_counts().items():
        summary.add_row(f"quality {quality}", str(count))
    for mode, count in report.failure_mode_counts().items():
        summary.add_row(f"failure_mode {mode or '—'}", str(count))
    summary.add_row("disputes (opinion vs verdict)", str(report.disputes()))
    summary.add_row("already labelled, skipped", str(report.already_labelled))
    summary.add_row("taken by another run, skipped", str(len(report.taken_elsewhere)))
    summary.add_row("failed", str(len(report.failed)))
    console.print(summary)
    console.print(f"labels: {report.root}")
    console.print(f"{len(report.labelled)} labelled in {report.seconds:.1f} s", style="dim")
    _print_cost(report)
    regraded = report.reviewed_regraded()
    if regraded:
        console.print(
            f"{regraded} reviewed episode(s) re-graded; their human decisions stand (a new judge label never "
            "undoes an uphold, an overrule or a human grade).",
        )
    if report.taken_elsewhere:
        console.print(_taken_line(report))
    for warning in getattr(report, "warnings", []):
        console.print(styled(("warning:", "yellow"), f" {warning}"))
    if report.failed:
        failures = Table(title=f"{len(report.failed)} episode(s) failed (no label written)")
        failures.add_column("episodes", justify="right", overflow="fold")
        failures.add_column("error", overflow="fold")
        for episodes, error in group_failures(report.failed):
            failures.add_row(index_ranges(episodes, ","), error)
        console.print(failures)


def _amount(value: int | None) -> str:
    return "n/a" if value is None else f"{value:,}"


#: Episodes listed one by one in the cost table; past it, the per-episode mean and maximum.
COST_ROWS = 20


def _print_cost(report) -> None:  # noqa: ANN001 - JudgeReport
    """The model requests of the run, per episode and in total (nothing for the offline judge)."""
    from rich.table import Table

    total = report.cost()
    if total is None:
        return
    names = ("requests", "request_bytes", "images", "input_tokens", "output_tokens")
    table = Table(title="model requests (cost)")
    for column in ("episode", "requests", "request bytes", "images", "input tokens", "output tokens"):
        table.add_column(column, justify="right")
    costs = [(r.episode, r.cost) for r in report.results if r.cost is not None]
    if len(costs) <= COST_ROWS:
        for episode, cost in costs:
            table.add_row(str(episode), *(_amount(getattr(cost, n)) for n in names))
    else:
        for label, pick in (("per episode, mean", _mean), ("per episode, max", _max)):
            table.add_row(label, *(_amount(pick([getattr(c, n) for _, c in costs])) for n in names))
    table.add_row("run", *(_amount(getattr(total, n)) for n in names), style="bold")
    console.print(table)


def _mean(values: list[int | None]) -> int | None:
    return None if any(v is None for v in values) else round(sum(v or 0 for v in values) / len(values))


def _max(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def register(app: typer.Typer) -> None:
    """Add ``judge`` to ``app``."""
    app.command("judge", cls=JudgeCommand)(judge)

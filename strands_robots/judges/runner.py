"""Label a whole dataset with a judge agent: selection, workers, leases, group commits, report.

Used by ``strands-labels judge``; the rules (resume, ``--relabel`` and ``judge_history``,
retries, the leases two runs share, the offline judge's group commits) are in
docs/judge.md, "Running it" and "Two runs on one dataset". Every episode goes through
:func:`strands_robots.tools.episode_judge.create_judge_agent`, the offline judge's and a
model's alike.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from strands_robots.arguments import Limits, int_argument, number_argument, number_refusal
from strands_robots.dataset.hub import resolve_root
from strands_robots.episode_labels import QUALITY_GRADES, labels_path, read_labels
from strands_robots.episode_labels.document import query_document
from strands_robots.errors import LabelsNotFoundError, LabelValidationError
from strands_robots.judges.commit import GroupCommit, write_each
from strands_robots.judges.heuristic import HeuristicJudgeModel, judge_prompt
from strands_robots.judges.offline_rules import JUDGE_MODEL
from strands_robots.judges.profile import MIN_EPISODES, DatasetProfile
from strands_robots.judges.retry import RetryPolicy, ServerBreaker
from strands_robots.judges.wire import Cost, WireModel
from strands_robots.model_spec import DEFAULT_MAX_REQUESTS, DEFAULT_TIMEOUT_S, ModelSpecError, build_model
from strands_robots.tools.episode_judge import create_judge_agent, model_name
from strands_robots.tools.evidence import EvidenceCache

#: Where :func:`run_judge` runs the agents.
EXECUTORS = ("thread", "ray")

#: ``--model`` values that select the offline judge.
OFFLINE_ALIASES = ("heuristic", JUDGE_MODEL)

#: The offline judge writes its labels in group commits of at most this many episodes ...
WRITE_BATCH = 64
#: ... or of what was judged in this many seconds, whichever comes first.
WRITE_INTERVAL_S = 1.0

#: Seconds one model request may take: positive.
TIMEOUT = Limits(gt=0)

#: The judge block fields a batch write carries over (the writer sets ``labeled_at``).
JUDGE_FIELDS = ("quality", "failure_mode", "note", "success_opinion", "model")

#: The dataset has no ``episode_labels.json`` with verdicts to judge on top of (the one
#: "no sidecar yet" error; kept under this name for importers).
NoVerdictsError = LabelsNotFoundError


@dataclass(frozen=True)
class EpisodeResult:
    """What happened to one episode."""

    episode: int
    ok: bool
    quality: str | None = None
    failure_mode: str | None = None
    disputes_verdict: bool = False
    error: str = ""
    seconds: float = 0.0
    cost: Cost | None = None


@dataclass
class JudgeReport:
    """The outcome of :func:`run_judge`.

    Attributes:
        root: The dataset root.
        judge_model: Name recorded in the judge blocks (for the offline judge ``heuristic-v1``).
        results: One :class:`EpisodeResult` per attempted episode, in episode order.
        already_labelled: Episodes skipped because they had a judge block (no ``relabel``).
        seconds: Wall time of the run (profile included).
        profile_seconds: Time spent profiling the dataset (offline judge).
        tool_seconds: Tool name -> seconds spent inside it (summed over workers).
        write_seconds: Time this process spent writing labels in group commits
            (:func:`write_judged`: the offline judge's, and every Ray run's on the driver;
            a model judge on threads writes inside ``write_label``).
        signals_reused: ``sample_frames`` calls answered from the profile pass's rows
            and signals instead of reading and computing them again (offline judge).
        warnings: Run-level caveats for the summary (e.g. too few episodes to compare).
        reviewed: Selected episodes that carry a human review: a new judge label never
            undoes it (docs/review.md, "When a review stops counting").
        taken_elsewhere: Selected episodes another run was judging (it held the lease) or
            had labelled since this run selected them; this run left them alone.
    """

    root: Path
    judge_model: str
    results: list[EpisodeResult] = field(default_factory=list)
    already_labelled: int = 0
    seconds: float = 0.0
    profile_seconds: float = 0.0
    tool_seconds: dict[str, float] = field(default_factory=dict)
    write_seconds: float = 0.0
    signals_reused: int = 0
    warnings: list[str] = field(default_factory=list)
    reviewed: frozenset[int] = frozenset()
    taken_elsewhere: list[int] = field(default_factory=list)

    @property
    def failed(self) -> list[EpisodeResult]:
        """Episodes that got no label."""
        return [r for r in self.results if not r.ok]

    @property
    def labelled(self) -> list[EpisodeResult]:
        """Episodes labelled in this run."""
        return [r for r in self.results if r.ok]

    def quality_counts(self) -> dict[str, int]:
        """``low``/``medium``/``high`` -> count over this run's labels."""
        counts = Counter(r.quality for r in self.labelled)
        return {q: counts.get(q, 0) for q in QUALITY_GRADES}

    def failure_mode_counts(self) -> dict[str | None, int]:
        """failure_mode (None included) -> count over this run's labels, most common first."""
        return dict(Counter(r.failure_mode for r in self.labelled).most_common())

    def reviewed_regraded(self) -> int:
        """Episodes with a human review this run gave a new judge label (their reviews stand)."""
        return sum(1 for r in self.labelled if r.episode in self.reviewed)

    def disputes(self) -> int:
        """Labels of this run whose success_opinion contradicts the verdict."""
        return sum(1 for r in self.labelled if r.disputes_verdict)

    def cost(self) -> Cost | None:
        """Model requests of the whole run added up over its episodes (None: no request left the process)."""
        costs = [r.cost for r in self.results if r.cost is not None]
        return sum(costs, Cost()) if costs else None


def _at_least_one(value: Any, what: str, *, optional: bool = False) -> Any:
    """A count argument: an integer >= 1 (``True``, ``2.5`` and ``"3"`` refused); None when ``optional``."""
    if optional and value is None:
        return None
    return int_argument(value, lambda v: LabelValidationError(f"{what} must be >= 1, got {v!r}."), minimum=1)


def select_episodes(
    root: str | Path,
    *,
    episodes: Iterable[int] | None = None,
    limit: int | None = None,
    relabel: bool = False,
    labels_dir: str | Path | None = None,
) -> tuple[list[int], list[int], int]:
    """Which episodes a run labels.

    Args:
        root: Dataset root.
        episodes: Only these (default: every episode with a verdict).
        limit: At most this many, lowest indices first.
        relabel: Include episodes that already have a judge block.
        labels_dir: Directory of the sidecar.

    Returns:
        ``(to_label, requested_without_verdict, already_labelled)``.

    Raises:
        NoVerdictsError: no sidecar yet.
        DatasetError: no sidecar and ``root`` is not a LeRobot dataset.
        RootNotFoundError: ``root`` or ``labels_dir`` is not an existing directory.
        LabelValidationError: ``limit`` below 1 or a negative episode.
    """
    limit = _at_least_one(limit, "limit", optional=True)
    try:
        document = read_labels(root, labels_dir=labels_dir)
    except LabelsNotFoundError as exc:  # not RootNotFoundError (also a FileNotFoundError): a missing root says so
        from strands_robots.dataset.cache import cached_dataset

        cached_dataset(root)  # a folder that is not a dataset is named as such (DatasetError), not as unlabelled
        raise NoVerdictsError(
            f"no verdicts to judge on top of: {labels_path(root, labels_dir=labels_dir)} does not exist. Record them "
            "first: strands-labels verdicts ROOT FILE (or record_deterministic_verdicts)."
        ) from exc
    records = document["episodes"]
    with_verdict = sorted(int(k) for k, r in records.items() if "deterministic" in r)
    missing: list[int] = []
    if episodes is not None:
        wanted = sorted(set(int(e) for e in episodes))
        if any(e < 0 for e in wanted):
            raise LabelValidationError(f"episode indices are non-negative, got {[e for e in wanted if e < 0]}.")
        have = set(with_verdict)
        missing = [e for e in wanted if e not in have]
        with_verdict = [e for e in wanted if e in have]
    todo = [e for e in with_verdict if relabel or "judge" not in records[str(e)]]
    already = len(with_verdict) - len(todo)
    if limit is not None:
        todo = todo[:limit]
    return todo, missing, already


class Claims:
    """This run's hold on the episodes it judges: a lease each, and a check that no other
    run labelled the episode since this run selected it.

    Args:
        root: Dataset root.
        labels_dir: Directory of the sidecar (the leases live there too).
        relabel: The run relabels: an episode counts as done elsewhere only when its judge
            block was written after ``since``.
        since: When this run selected its episodes (``time.time()``).
    """

    def __init__(self, root: Path, labels_dir: str | Path | None, relabel: bool, since: float) -> None:
        from strands_robots.storage.lease import EpisodeLeases

        self.root, self.labels_dir, self.relabel, self.since = root, labels_dir, relabel, since
        self.leases = EpisodeLeases(labels_path(root, labels_dir=labels_dir).parent)
        self.elsewhere: list[int] = []
        self._mutex = threading.Lock()

    def take(self, episodes: list[int]) -> list[int]:
        """The episodes of ``episodes`` this run may judge now (their leases taken)."""
        taken, held = self.leases.take_all(episodes)
        done = self._labelled_since(taken) if taken else []
        if done:
            self.leases.give_back(done)
        with self._mutex:
            self.elsewhere.extend([*held, *done])
        return [e for e in taken if e not in set(done)]

    def _labelled_since(self, episodes: list[int]) -> list[int]:
        def labelled(document: dict[str, Any]) -> list[int]:
            judges = {e: (document["episodes"].get(str(e)) or {}).get("judge") for e in set(episodes)}
            return sorted(
                e
                for e, judge in judges.items()
                if judge and (not self.relabel or float(judge.get("labeled_at") or 0.0) >= self.since)
            )

        return query_document(self.root, labelled, self.labels_dir)

    def close(self) -> list[int]:
        """Release every lease; the episodes taken elsewhere, sorted."""
        self.leases.give_back_all()
        return sorted(set(self.elsewhere))


def _words(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, ``…`` marking a cut."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip() + " …"


def judge_episode(
    agent: Any, root: Path, episode: int, frames: int, images: bool
) -> tuple[EpisodeResult, dict[str, Any] | None]:
    """Run one episode through a judge agent (a fresh conversation).

    Returns:
        ``(result, judge block or None)``; never raises (a failure is in the result).
    """
    t0 = time.perf_counter()
    wire = agent.model if isinstance(agent.model, WireModel) else None
    if wire is not None:
        wire.start_episode()
    judge: dict[str, Any] | None = None
    try:
        agent.messages = []
        prompt = judge_prompt(root, [episode], frames, images)
        if isinstance(agent.model, HeuristicJudgeModel) and agent.model.can_drive():
            agent.messages = agent.model.drive(agent.judge_tools, prompt)  # same tools, no event loop
        else:
            agent(prompt)
        judge = agent.judge_tools.config.written.pop((str(root), episode), None)
        if judge is None:
            reply = str(agent.messages[-1]["content"][0].get("text", "")) if agent.messages else ""
            error = f"the judge wrote no label. Its last words: {_words(reply, 600)}"
            result = EpisodeResult(episode, False, error=error)
        else:
            result = EpisodeResult(
                episode,
                True,
                quality=judge.get("quality"),
                failure_mode=judge.get("failure_mode"),
                disputes_verdict=bool(judge.get("disputes_verdict")),
            )
    except Exception as exc:  # noqa: BLE001 - one episode's failure never stops the run
        exc = getattr(exc, "original_exception", None) or exc  # strands' EventLoopException wraps the cause
        result, judge = EpisodeResult(episode, False, error=f"{type(exc).__name__}: {exc}"), None
    cost = None if wire is None else replace(wire.cost)
    return replace(result, seconds=time.perf_counter() - t0, cost=cost), judge


def write_judged(
    root: Path, labels_dir: str | Path | None, pairs: list[tuple[EpisodeResult, dict[str, Any] | None]]
) -> list[EpisodeResult]:
    """Write the judge blocks of a batch of judged episodes in one group commit.

    One :func:`~strands_robots.episode_labels.judge.annotate_episodes` call (one journal
    line, one fsync); when the all-or-nothing batch is refused, one by one, so only the
    episodes at fault fail (:func:`~strands_robots.judges.commit.write_each`). Replaced
    judge blocks go to ``judge_history``.

    Args:
        root: Dataset root.
        labels_dir: Directory of the sidecar.
        pairs: ``(result, judge block)`` per episode; results that are not ok (or have
            no block) are passed through unwritten.

    Returns:
        The results, with a failure for each episode whose label could not be written.
    """
    labelled = [(r, j) for r, j in pairs if r.ok and j is not None]
    out = [r for r, j in pairs if not (r.ok and j is not None)]
    if not labelled:
        return out
    annotations = [
        {"episode": r.episode, **{k: j.get(k) for k in JUDGE_FIELDS}, "keep_history": True} for r, j in labelled
    ]
    for (result, _judge), outcome in zip(labelled, write_each(root, labels_dir, annotations), strict=True):
        if isinstance(outcome, Exception):
            error = f"label not written: {type(outcome).__name__}: {outcome}"
            result = EpisodeResult(result.episode, False, error=error, seconds=result.seconds)
        out.append(result)
    return out


@dataclass(frozen=True)
class AgentSettings:
    """How every worker of a run builds its judge agent (picklable: each Ray actor gets a copy).

    ``model``: the offline judge, a ``PROVIDER:MODEL_ID`` spec (each worker builds its own
    client) or a strands ``Model``; the other fields as :func:`run_judge`'s arguments.
    """

    model: Any
    labels_dir: str | Path | None
    frames: int
    images: bool
    retry: RetryPolicy
    base_url: str | None
    timeout: float | None
    max_requests: int | None

    def agent(self, root: Path, breaker: ServerBreaker) -> Any:
        """A judge agent whose tools are bound to ``root`` (one per worker)."""
        return create_judge_agent(
            self.model,
            roots=[root],
            labels_dir=self.labels_dir,
            base_url=self.base_url,
            callback_handler=None,
            retry_strategy=self.retry.strategy(breaker),
            timeout=self.timeout,
            images=self.images,
            max_requests=self.max_requests,
            breaker=breaker,
        )


@dataclass
class RunWriter:
    """Where a run's judged episodes go, whichever executor judged them: labels written in
    group commits by this process, leases given back, results reported. ``records``: the
    sidecar's records (episode -> record) as the run selected its episodes, which the offline
    judge's and Ray's tools read instead of the sidecar."""

    report: JudgeReport
    claims: Claims
    labels_dir: str | Path | None
    on_result: Callable[[EpisodeResult], None] | None
    records: dict[int, dict[str, Any]] = field(default_factory=dict)

    def finish(self, results: Iterable[EpisodeResult]) -> None:
        """Add ``results`` to the report and call ``on_result`` with each."""
        for result in results:
            self.report.results.append(result)
            if self.on_result is not None:
                self.on_result(result)

    def write(self, pairs: list[tuple[EpisodeResult, dict[str, Any] | None]], episodes: Iterable[int]) -> None:
        """:func:`write_judged` the ``pairs``, give back the leases of ``episodes``, finish the results."""
        started = time.perf_counter()
        try:
            written = write_judged(self.report.root, self.labels_dir, pairs)
        finally:
            self.claims.leases.give_back(episodes)
            self.report.write_seconds += time.perf_counter() - started
        self.finish(written)

    def add_tool_seconds(self, seconds: dict[str, float]) -> None:
        """Add a worker's tool name -> seconds to the report."""
        for name, spent in seconds.items():
            self.report.tool_seconds[name] = self.report.tool_seconds.get(name, 0.0) + spent


def run_judge(
    root: str | Path,
    *,
    model: Any = None,
    base_url: str | None = None,
    episodes: Iterable[int] | None = None,
    limit: int | None = None,
    frames: int = 4,
    images: bool | None = None,
    workers: int | None = None,
    relabel: bool = False,
    labels_dir: str | Path | None = None,
    retry: RetryPolicy | None = None,
    on_start: Callable[[int], None] | None = None,
    on_result: Callable[[EpisodeResult], None] | None = None,
    executor: str = "thread",
    ray_address: str | None = None,
    batch_size: int | None = None,
    revision: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT_S,
    max_requests_per_episode: int | None = DEFAULT_MAX_REQUESTS,
) -> JudgeReport:
    """Label the selected episodes of ``root`` with a judge agent.

    Args:
        root: Dataset root (a path a person gave; resolved here), or a Hub repo id
            (``lerobot/pusht``): its local copy, fetched as episodes are read, and by
            default its labels dir (docs/dataset.md, "Datasets by repo id").
        model: None / ``"heuristic-v1"`` (the offline judge), a ``PROVIDER:MODEL_ID``
            spec (one model instance per worker) or a strands ``Model`` (shared).
        base_url: Server of the spec's provider (e.g. an OpenAI-compatible local
            server: ``model="openai:MODEL", base_url="http://localhost:8000/v1"``).
        episodes: Only these episode indices.
        limit: At most this many episodes.
        frames: Frames ``sample_frames`` is asked for per episode.
        images: Ask for camera images (default: yes with a model, no offline).
        workers: Episodes judged in parallel: threads (default 1) or, with
            ``executor="ray"``, Ray actors (default: the cluster's CPUs), one agent each.
        relabel: Redo labelled episodes, keeping replaced blocks in ``judge_history``.
        labels_dir: Directory of the label sidecars.
        retry: Backoff of transient model-call failures.
        on_start: Called with the number of episodes once selection is done.
        on_result: Called with each :class:`EpisodeResult` as it completes (the offline
            judge and Ray: once the episode's label is written).
        executor: ``"thread"`` (this process) or ``"ray"``: batches of episodes go to Ray
            actors that return label records, and this process alone writes them (see
            docs/distributed.md). Needs the ``[ray]`` extra.
        ray_address: Ray cluster to join (``ray.init(address=...)``: ``"auto"``,
            ``"ray://HOST:10001"``); None starts a local one unless Ray is already
            initialised or ``RAY_ADDRESS`` is set.
        revision: Hub revision of a repo-id ``root`` (default ``main``).
        batch_size: Episodes per Ray task (default: about four batches per actor, at
            most 32 episodes each).
        timeout: Seconds one model request may take (a spec's client; default 120; None:
            the provider's default).
        max_requests_per_episode: Model requests one episode's conversation may make
            (retries not counted; default 12) before the episode fails with
            ``RequestLimitError``; None: no limit.

    Returns:
        The :class:`JudgeReport`; requested episodes without a verdict are failures in it.

    Raises:
        NoVerdictsError: the dataset has no sidecar.
        LabelValidationError: a bad ``frames``, ``workers``, ``limit``, ``executor`` or ``batch_size``.
        MissingExtraError: ``executor="ray"`` without Ray installed.
        HubDatasetError: a repo id that is not in the local copy and cannot be downloaded.
        ModelSpecError: a bad model spec or ``base_url`` (also: a ``base_url`` without a spec).
        DatasetError: the dataset cannot be opened (offline judge).
        ModelServerUnreachableError: 3 model requests in a row found no server (connection
            refused, host name not resolved): the run stopped; labels written so far are
            kept (docs/judge.md, "Retries and timeouts").
    """
    start = time.perf_counter()
    root, hub = resolve_root(root, revision)
    if hub is not None and labels_dir is None:
        labels_dir = hub.labels_dir
    frames = _at_least_one(frames, "frames")
    if executor not in EXECUTORS:
        raise LabelValidationError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}.")
    workers = _at_least_one(workers, "workers", optional=True)
    batch_size = _at_least_one(batch_size, "batch_size", optional=True)
    max_requests_per_episode = _at_least_one(max_requests_per_episode, "max_requests_per_episode", optional=True)
    if timeout is not None:
        timeout = number_argument(
            timeout, number_refusal("timeout", TIMEOUT, "give the seconds one model request may take, e.g. 120.")
        )
    if executor == "ray":
        from strands_robots.judges.ray_executor import require_ray

        require_ray()  # before any work: name the extra to install
    elif workers is None:
        workers = 1
    retry = retry or RetryPolicy()
    offline = model is None or (isinstance(model, str) and model.strip().lower() in OFFLINE_ALIASES)
    if offline and base_url is not None:
        raise ModelSpecError(
            "base_url selects a model server, but no model was given: pass a spec too, e.g. "
            "--model openai:MODEL --base-url URL."
        )
    if not offline and isinstance(model, str):
        build_model(model, base_url=base_url)  # fail fast on a bad spec or a missing SDK, before anything else
    selected_at = time.time()  # a label another run writes from now on is that run's work
    todo, missing, already = select_episodes(
        root, episodes=episodes, limit=limit, relabel=relabel, labels_dir=labels_dir
    )
    records = {int(k): v for k, v in read_labels(root, labels_dir=labels_dir)["episodes"].items()}
    # episodes with a human review: a new judge label never undoes it
    reviewed = frozenset(e for e in todo if relabel and isinstance(records.get(e, {}).get("review"), dict))
    images = (not offline) if images is None else images
    report = JudgeReport(
        root, JUDGE_MODEL if offline else model_name(model), already_labelled=already, reviewed=reviewed
    )
    for e in missing:
        report.results.append(EpisodeResult(e, False, error="no deterministic verdict recorded; nothing to judge"))
    if on_start is not None:
        on_start(len(todo) + len(missing))
    if on_result is not None:
        for r in report.results:
            on_result(r)
    if not todo:
        report.seconds = time.perf_counter() - start
        return report
    claims = Claims(root, labels_dir, relabel, selected_at)
    writer = RunWriter(report, claims, labels_dir, on_result, records)
    try:
        evidence: EvidenceCache | None = None
        agent_model = model
        if offline:
            profile_start = time.perf_counter()
            evidence = EvidenceCache() if executor == "thread" else None  # Ray workers compute their own
            profile = DatasetProfile.from_dataset(root, workers=workers or 1, evidence=evidence)
            report.profile_seconds = time.perf_counter() - profile_start
            if not profile.comparable:
                report.warnings.append(
                    f"only {profile.episodes} episode(s) could be profiled, fewer than {MIN_EPISODES}: too few to "
                    "compare episodes with each other, so the offline judge used absolute thresholds and did not "
                    "grade length (each note says so)."
                )
            agent_model = HeuristicJudgeModel({root: profile})
        agent_base_url = base_url if isinstance(model, str) and not offline else None
        settings = AgentSettings(
            agent_model, labels_dir, frames, images, retry, agent_base_url, timeout, max_requests_per_episode
        )
        if executor == "ray":
            from strands_robots.judges.ray_executor import judge_on_ray

            hub_source = None if hub is None else (hub.repo_id, hub.revision)
            judge_on_ray(
                writer, todo, settings, workers=workers, address=ray_address, hub=hub_source, batch_size=batch_size
            )
        else:
            _judge_on_threads(writer, todo, settings, workers=workers or 1, evidence=evidence, offline=offline)
    finally:
        report.taken_elsewhere = claims.close()
        report.results.sort(key=lambda r: r.episode)
        report.seconds = time.perf_counter() - start
    return report


def _judge_on_threads(
    writer: RunWriter,
    todo: list[int],
    settings: AgentSettings,
    *,
    workers: int,
    evidence: EvidenceCache | None,
    offline: bool,
) -> None:
    """:func:`run_judge` in this process: ``workers`` threads, one agent each, each episode
    judged under its lease.

    Raises:
        ModelServerUnreachableError: the run's server breaker opened.
    """
    report, claims = writer.report, writer.claims
    root = report.root
    # Refused connections / unresolved host names, counted across the workers: 3 in a row stop the run.
    breaker = ServerBreaker(settings.base_url)
    local = threading.local()
    agents: list[Any] = []
    agents_lock = threading.Lock()
    # The offline judge's labels are written in group commits by this thread (one journal line
    # per batch); a model judge's write_label writes each label itself, durable when it returns,
    # sharing commits with the concurrent conversations.
    committer = GroupCommit() if not offline and workers > 1 else None

    def agent_for_thread() -> Any:
        agent = getattr(local, "agent", None)
        if agent is None:
            agent = settings.agent(root, breaker)
            config = agent.judge_tools.config
            config.committer = committer
            if offline:
                config.evidence, config.records, config.defer_writes = evidence, writer.records, True
            local.agent = agent
            with agents_lock:
                agents.append(agent)
        return agent

    def judge_one(episode: int) -> tuple[EpisodeResult, dict[str, Any] | None] | None:
        if not claims.take([episode]):
            return None  # another run is judging it, or has labelled it since this run selected it
        try:
            agent = agent_for_thread()
        except Exception as exc:  # noqa: BLE001 - one episode's failure never stops the run
            claims.leases.give_back([episode])
            return EpisodeResult(episode, False, error=f"{type(exc).__name__}: {exc}"), None
        result, judge = judge_episode(agent, root, episode, settings.frames, settings.images)
        if not offline or not result.ok:  # written by write_label, or nothing to write: the lease goes
            claims.leases.give_back([episode])
        return result, judge

    pending: list[tuple[EpisodeResult, dict[str, Any] | None]] = []
    pending_since = 0.0

    def drain() -> None:
        if pending:
            batch = list(pending)
            pending.clear()
            writer.write(batch, [r.episode for r, _j in batch])

    def collect(outcome: tuple[EpisodeResult, dict[str, Any] | None] | None) -> None:
        nonlocal pending_since
        if outcome is None:  # taken by another run
            return
        result, judge = outcome
        if not offline or not result.ok:
            writer.finish([result])
            return
        if not pending:
            pending_since = time.perf_counter()
        pending.append((result, judge))
        if len(pending) >= WRITE_BATCH or time.perf_counter() - pending_since >= WRITE_INTERVAL_S:
            drain()

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge")
    futures = []
    collected: set[Any] = set()
    try:
        futures = [pool.submit(judge_one, e) for e in todo]
        for future in as_completed(futures):
            collected.add(future)
            if breaker.open:
                break  # no server: stop submitting, report the one error below
            collect(future.result())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # Ctrl-C: finish in-flight episodes, drop the rest
        for future in futures:  # episodes judged after an interrupt still get their labels written
            if future not in collected and future.done() and not future.cancelled() and future.exception() is None:
                collect(future.result())
        drain()
        report.signals_reused = 0 if evidence is None else evidence.hits
        for agent in agents:
            writer.add_tool_seconds(agent.judge_tools.config.tool_seconds)
    if breaker.open:
        raise breaker.error()

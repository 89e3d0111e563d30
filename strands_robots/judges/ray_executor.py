"""The judge on a Ray cluster: workers judge, the driver alone writes.

:func:`judge_on_ray` is what ``run_judge(..., executor="ray")`` and ``strands-labels judge
ROOT --ray`` run; batches, backpressure, restarts, exactly-once writes and the stop on a
dead model server are described in docs/distributed.md, "How it works".
"""

from __future__ import annotations

import itertools
import math
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_robots.errors import LabelValidationError, MissingExtraError
from strands_robots.judges.retry import ModelServerUnreachableError, ServerBreaker
from strands_robots.judges.runner import AgentSettings, EpisodeResult, RunWriter, judge_episode
from strands_robots.tools.episode_judge import verdict_and_judge

#: The pip command that installs Ray for this package.
RAY_INSTALL = "pip install 'strands-robots-labels[ray]'"
#: Batches queued per actor at once (one running, one waiting): the backpressure bound.
IN_FLIGHT_PER_WORKER = 2
#: Times the driver sends one batch before reporting its episodes as failed.
BATCH_ATTEMPTS = 3
#: Ray's own restarts of a dead actor process, and retries of the call it was running.
ACTOR_RESTARTS = 3
#: Object store of a local cluster this module starts (bytes): batches are small.
LOCAL_OBJECT_STORE = 128 * 1024**2
#: Largest default batch (episodes).
MAX_DEFAULT_BATCH = 32

#: Environment a Hub dataset's workers get from the driver (where the copy is, offline or not).
HUB_ENV = ("HF_LEROBOT_HOME", "HF_HOME", "HF_HUB_OFFLINE", "HF_ENDPOINT")


def require_ray() -> Any:
    """Import Ray, or raise :class:`MissingExtraError` naming the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise MissingExtraError(f"the Ray executor needs Ray, which is not installed; run: {RAY_INSTALL}") from exc
    return ray


class JudgeWorker:
    """One judge agent in a Ray actor; ``judge`` returns labels instead of writing them.

    Args:
        settings: How the agent is built (the run's :class:`~strands_robots.judges.runner.AgentSettings`).
        root: Dataset root, a path this worker's node sees.
        hub: ``(repo id, revision)`` when the dataset was named by repo id: the worker
            resolves its own local copy (metadata first, files as it reads them).
    """

    def __init__(self, settings: AgentSettings, root: str, hub: tuple[str, str | None] | None = None) -> None:
        from strands_robots.dataset.hub import register_source, resolve_hub_dataset

        if hub is not None:
            root = str(resolve_hub_dataset(*hub).root)  # this node's copy of the dataset
            register_source(root, *hub)
        self.root = Path(root)
        self.settings = settings
        # Refused connections / unresolved host names of this worker's requests: 3 in a row stop it.
        self.breaker = ServerBreaker(settings.base_url)
        self.agent = settings.agent(self.root, self.breaker)
        self.config = self.agent.judge_tools.config
        self.config.defer_writes = True
        self.config.records = {}

    def judge(self, episodes: list[int], records: dict[int, dict[str, Any]]) -> dict[str, Any]:
        """Judge ``episodes`` given their sidecar ``records``.

        Returns:
            ``{"results": [(EpisodeResult, judge block or None), ...], "tool_seconds": {...},
            "unreachable": None or the error message}``: once this worker's server breaker
            is open (no model server answers) the remaining episodes are not judged (no
            result) and ``unreachable`` is :meth:`ServerBreaker.error`'s message.
        """
        self.config.records = dict(records)
        before = dict(self.config.tool_seconds)
        judged = itertools.takewhile(lambda _episode: not self.breaker.open, episodes)
        out = [judge_episode(self.agent, self.root, e, self.settings.frames, self.settings.images) for e in judged]
        seconds = {k: v - before.get(k, 0.0) for k, v in self.config.tool_seconds.items()}
        unreachable = str(self.breaker.error()) if self.breaker.open else None
        return {"results": out, "tool_seconds": seconds, "unreachable": unreachable}


@dataclass
class _Batch:
    episodes: list[int]
    attempts: int = 0


def default_batch_size(episodes: int, workers: int) -> int:
    """About four batches per worker, between 1 and :data:`MAX_DEFAULT_BATCH` episodes."""
    return max(1, min(MAX_DEFAULT_BATCH, math.ceil(episodes / (workers * 4))))


def judge_on_ray(
    writer: RunWriter,
    todo: list[int],
    settings: AgentSettings,
    *,
    workers: int | None,
    address: str | None = None,
    hub: tuple[str, str | None] | None = None,
    batch_size: int | None = None,
) -> None:
    """Judge ``todo`` on Ray and write the labels from this process (the driver).

    Joins the running Ray session if there is one, else ``ray.init(address)`` (a local
    cluster when ``address`` and ``RAY_ADDRESS`` are unset, shut down at the end).

    Args:
        writer: The run's writer: the driver takes a batch's leases before sending it
            (episodes another run holds or has labelled are left out), writes the labels
            that come back and gives the leases back; one result per episode of ``todo``.
        todo: Episodes to judge (each has a verdict).
        settings: How each worker builds its agent; a strands ``Model`` in it is pickled
            to each worker, a ``PROVIDER:MODEL_ID`` spec is built by each worker.
        workers: Ray actors (default: the cluster's CPUs; never more than batches).
            Each reserves ``min(1, CPUs / workers)`` CPUs, so any count fits the cluster.
        address: Ray cluster to join (``ray.init(address=...)``).
        hub: ``(repo id, revision)`` of a dataset named by repo id (see :class:`JudgeWorker`).
        batch_size: Episodes per task (default :func:`default_batch_size`).

    Raises:
        MissingExtraError: Ray is not installed.
        LabelValidationError: the model cannot be sent to the workers (not picklable).
        ModelServerUnreachableError: a worker found no model server (3 requests in a row
            refused or unresolved): no further batch was sent; the labels of the batches
            that came back are written.
    """
    ray = require_ray()
    from ray.exceptions import RayError

    root = writer.report.root
    claims = writer.claims
    started = False
    if not ray.is_initialized():
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address is None and not os.environ.get("RAY_ADDRESS"):
            options["object_store_memory"] = LOCAL_OBJECT_STORE
        ray.init(address=address, **options)
        started = True
    actors: list[Any] = []
    try:
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        size = batch_size or default_batch_size(len(todo), workers or max(1, int(cpus)))
        batches = deque(_Batch(todo[i : i + size]) for i in range(0, len(todo), size))
        count = max(1, min(workers or max(1, int(cpus)), len(batches)))
        try:
            from ray import cloudpickle  # the serializer Ray sends actor arguments with

            cloudpickle.dumps(settings.model)
        except Exception as exc:  # noqa: BLE001 - pickling errors have no common type
            raise LabelValidationError(
                f"the model object cannot be sent to Ray workers ({type(exc).__name__}: {exc}); pass a "
                "PROVIDER:MODEL_ID spec instead, so each worker builds its own client."
            ) from exc
        options = {"num_cpus": min(1.0, cpus / count), "max_restarts": ACTOR_RESTARTS}
        hub_env = {k: os.environ[k] for k in HUB_ENV if os.environ.get(k)}
        if hub is not None and hub_env:  # workers find (or fetch) the copy where the driver does
            options["runtime_env"] = {"env_vars": hub_env}
        actor_class = ray.remote(JudgeWorker).options(max_task_retries=ACTOR_RESTARTS, **options)

        def new_actor() -> Any:
            return actor_class.remote(settings, str(root), hub)

        actors = [new_actor() for _ in range(count)]
        load = [0] * count
        in_flight: dict[Any, tuple[int, Any, _Batch]] = {}
        reported: set[int] = set()  # a retried batch that comes back twice is written once
        unreachable: str | None = None  # a worker's breaker opened: send nothing more

        while (batches and unreachable is None) or in_flight:
            while batches and unreachable is None and min(load) < IN_FLIGHT_PER_WORKER:
                slot = load.index(min(load))
                batch = batches.popleft()
                batch.episodes = claims.take(batch.episodes)
                if not batch.episodes:
                    continue  # every episode of it is another run's
                batch.attempts += 1
                wanted = {e: verdict_and_judge(writer.records.get(e)) or {} for e in batch.episodes}
                ref = actors[slot].judge.remote(batch.episodes, wanted)
                in_flight[ref] = (slot, actors[slot], batch)
                load[slot] += 1
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            slot, actor, batch = in_flight.pop(ready[0])
            load[slot] -= 1
            try:
                payload = ray.get(ready[0])
            except RayError as exc:
                if actors[slot] is actor:  # restarts used up: a fresh actor takes the slot
                    ray.kill(actor, no_restart=True)
                    actors[slot] = new_actor()
                if batch.attempts < BATCH_ATTEMPTS:
                    batches.appendleft(batch)
                else:
                    claims.leases.give_back(batch.episodes)
                    error = f"the Ray worker failed {batch.attempts} times: {exc}"
                    failed = [EpisodeResult(e, False, error=error) for e in batch.episodes if e not in reported]
                    reported.update(batch.episodes)
                    writer.finish(failed)
                continue
            if payload.get("unreachable") and unreachable is None:
                unreachable = payload["unreachable"]
            writer.add_tool_seconds(payload["tool_seconds"])
            pairs = [(r, j) for r, j in payload["results"] if r.episode in batch.episodes and r.episode not in reported]
            reported.update(r.episode for r, _j in pairs)
            writer.write(pairs, batch.episodes)
        if unreachable is not None:
            raise ModelServerUnreachableError(unreachable)
    finally:
        for actor in actors:
            ray.kill(actor, no_restart=True)
        if started:
            ray.shutdown()

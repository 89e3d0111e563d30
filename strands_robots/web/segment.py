"""The segment annotation page: split an episode into subtasks, one template each.

Its routes, their bodies and answers are tabled in docs/segments.md, "The annotation page"
and "Proposals and review". Every write goes through :mod:`strands_robots.segments`,
guarded like the review page; a request names only an ``episode_index``, checked against
the server's dataset. A segment in a request is ``{"start", "end", "template_id", "slots",
"modifiers", "note"}`` in frames, half-open.
"""

from __future__ import annotations

import itertools
from typing import Annotated, Any

from pydantic import AfterValidator, Field
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from strands_robots.errors import EpisodeNotFoundError, LabelValidationError, bounded_message
from strands_robots.segments import (
    SIDECAR_FILENAME,
    SegmentationRefused,
    find_base_velocity_feature,
    get_segmentation,
    label_pool,
    make_instance,
    parse_label,
    prefill_navigate,
    reference_examples,
    save_segmentation,
    template_choices,
    validate_episode,
)
from strands_robots.segments.proposals import review_proposal, review_status
from strands_robots.segments.store import (
    MAX_NAME_CHARS,
    MAX_NOTE_CHARS,
    prevailing_cohort,
    query_records,
    text_problem,
)
from strands_robots.segments.templates import known_cohorts
from strands_robots.web.context import RequestError, ServerContext, json_response, next_after, read_json_body
from strands_robots.web.media import camera_list
from strands_robots.web.query import BodyModel, Count, QueryModel, at_most, one_of, parse_body, parse_query

NAV = ("Segment", "/segment")

#: The template set of a dataset with no saved segmentation (docs/segments.md, "The segment page").
DEFAULT_COHORT = "generic"
#: Most segments one request may carry (the body is also capped at 64 KiB).
MAX_SEGMENTS = 2000
LIST_LIMIT = 500
MAX_LIST_LIMIT = 5000
#: Slot values suggested per template slot from the task's label pool.
MAX_SUGGESTIONS = 20
_ARTICLE = "_article"


# -- request bodies -------------------------------------------------------------------------------


def _within(limit: int) -> AfterValidator:
    """The segments store's text rule (:func:`strands_robots.segments.store.text_problem`) as a validator."""

    def check(value: Any) -> Any:
        problem = text_problem(value, limit)
        if problem is not None:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


_TEXT_OR_NULL = "text or null"
_TEXTS = "an object of text values"


class SegmentBody(BodyModel):
    """One segment of a request (docs/segments.md, "The annotation page").

    ``start`` and ``end`` are passed on as given: the library reports a bad interval as a
    finding at its position (``invalid_interval``), not as a refused request. A segment
    without ``template_id`` has no label yet (or carries a ``label`` text to be parsed).
    """

    start: Any = Field(default=None, description="a frame number")
    end: Any = Field(default=None, description="a frame number")
    template_id: str | None = Field(default=None, description=_TEXT_OR_NULL)
    slots: dict[str, str] | None = Field(default=None, description=_TEXTS)
    modifiers: dict[str, str] | None = Field(default=None, description=_TEXTS)
    note: Annotated[str | None, _within(MAX_NOTE_CHARS)] = Field(default=None, description=_TEXT_OR_NULL)
    label: str | None = Field(default=None, description=_TEXT_OR_NULL)
    free: bool = Field(default=False, description="true or false")

    def as_segment(self) -> dict[str, Any]:
        """The segment as the library takes it: a template's slots and modifiers, else the label
        (kept as written with ``free``)."""
        item: dict[str, Any] = {"start": self.start, "end": self.end, "note": self.note or None}
        if self.free and self.label and not self.template_id:
            item.update(label=self.label, free=True)
        elif self.template_id:
            item.update(
                template_id=self.template_id, slots=dict(self.slots or {}), modifiers=dict(self.modifiers or {})
            )
        elif self.label:
            item["label"] = self.label
        return item


def parse_request[B: CheckBody](model: type[B], body: Any) -> B:
    """A check or save body read into ``model``; more than :data:`MAX_SEGMENTS` segments is too large.

    Raises:
        RequestError: 413 beyond :data:`MAX_SEGMENTS` segments; 400 naming every bad field
            (:func:`~strands_robots.web.query.parse_body`).
    """
    segments = body.get("segments") if isinstance(body, dict) else None
    if isinstance(segments, list) and len(segments) > MAX_SEGMENTS:
        raise RequestError(f"{len(segments)} segments; at most {MAX_SEGMENTS} per episode.", 413)
    return parse_body(model, body)


_SEGMENTS_RULE = "a list of {start, end, template_id, slots, modifiers, note} objects"


class CheckBody(BodyModel):
    """``POST /api/segment/episodes/{episode}/check``'s body."""

    segments: list[SegmentBody] = Field(description=_SEGMENTS_RULE)
    cohort: Annotated[str | None, one_of(known_cohorts)] = Field(default=None, description="a cohort name")


class SaveBody(CheckBody):
    """``POST /api/segment/episodes/{episode}``'s body (an empty annotator is the server's reviewer)."""

    annotator: Annotated[str | None, _within(MAX_NAME_CHARS)] = Field(default=None, description="a string or null")
    note: Annotated[str | None, _within(MAX_NOTE_CHARS)] = Field(default=None, description="a string or null")
    reference: bool = Field(default=False, description="true or false")


class EpisodeQuery(QueryModel):
    """``GET /api/segment/episodes/{episode}``'s parameters: ``cohort`` (empty: the saved one or the default)."""

    cohort: Annotated[str | None, one_of(known_cohorts)] = None


# -- labels ---------------------------------------------------------------------------------------


def label_of(segment: dict[str, Any]) -> dict[str, Any]:
    """``{"label", "error", "template_id"}``: the text ``segment`` renders to, or why it cannot."""
    template_id = segment.get("template_id")
    if segment.get("free") and segment.get("label") and not template_id:
        return {"label": segment["label"], "error": None, "template_id": None, "free": True}
    try:
        if template_id:
            instance = make_instance(template_id, segment.get("slots"), segment.get("modifiers"))
        elif segment.get("label"):
            instance = parse_label(segment["label"])
        else:
            return {"label": None, "error": "no template chosen yet", "template_id": None}
    except LabelValidationError as exc:
        return {"label": None, "error": bounded_message(exc), "template_id": template_id}
    return {"label": instance.render(), "error": None, "template_id": instance.template_id}


def editable(segment: dict[str, Any]) -> dict[str, Any]:
    """A stored segment as the page edits it: a non-default article back in front of its slot."""
    slots = dict(segment.get("slots") or {})
    modifiers = {}
    for key, value in (segment.get("modifiers") or {}).items():
        slot = key[: -len(_ARTICLE)] if key.endswith(_ARTICLE) else None
        if slot is not None and slot in slots:
            slots[slot] = f"{value} {slots[slot]}"
        else:
            modifiers[key] = value
    return {
        "start": segment["start"],
        "end": segment["end"],
        "template_id": segment.get("template_id"),
        "slots": slots,
        "modifiers": modifiers,
        "note": segment.get("note"),
        "label": segment.get("label"),
        "free": segment.get("free") is True,
    }


def slot_suggestions(pool: list[dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    """Slot values the task's saved labels used: ``{template_id: {slot: [values, most used first]}}``."""
    out: dict[str, dict[str, list[str]]] = {}
    for entry in pool:
        slots: dict[str, list[str]] = {}
        for item in entry["labels"]:
            try:
                instance = parse_label(item["label"])
            except LabelValidationError:
                continue
            for name, value in editable(
                {"start": 0, "end": 0, "slots": instance.slots, "modifiers": instance.modifiers}
            )["slots"].items():
                values = slots.setdefault(name, [])
                if value not in values and len(values) < MAX_SUGGESTIONS:
                    values.append(value)
        if slots:
            out[entry["template_id"]] = slots
    return out


# -- payloads -------------------------------------------------------------------------------------


def task_of(ctx: ServerContext, episode: int) -> str:
    """The episode's first task text (the label pool is per task), or ``""``."""
    tasks = ctx.dataset.episodes[episode].tasks
    return str(tasks[0]) if tasks else ""


def saved_summaries(ctx: ServerContext) -> dict[int, dict[str, Any]]:
    """``episode_index`` -> version, annotator, time, segment count and reference flag of each saved segmentation."""
    return query_records(
        ctx.root,
        lambda records: {
            int(key): {
                "version": record.get("version"),
                "annotator": record.get("annotator"),
                "annotated_at": record.get("annotated_at"),
                "segments": len(record.get("segments", [])),
                "reference": bool(record.get("reference")),
                "cohort": record.get("cohort"),
                "status": review_status(record),
            }
            for key, record in records.items()
        },
        labels_dir=ctx.labels_dir,
    )


class ListQuery(QueryModel):
    """``GET /api/segment/episodes``'s parameters (a ``limit`` above :data:`MAX_LIST_LIMIT` is read as it)."""

    offset: Annotated[Count, at_most(1 << 62)] = 0
    limit: Annotated[Count, at_most(MAX_LIST_LIMIT)] = LIST_LIMIT
    #: ``unreviewed``: only episodes whose segmentation is a proposal awaiting review.
    filter: Annotated[str | None, one_of(("unreviewed",))] = None


def episode_list(ctx: ServerContext, params: dict[str, str]) -> dict[str, Any]:
    """The episode list: ``episodes`` (one page of rows), ``total``, ``segmented``, ``offset``, ``limit``.

    Raises:
        RequestError: 400 for a bad ``offset`` or ``limit`` (:class:`ListQuery`).
    """
    query = parse_query(ListQuery, params)
    offset, limit = query.offset, query.limit
    saved = saved_summaries(ctx)
    episodes = ctx.dataset.episodes
    unreviewed = [e for e in episodes if (saved.get(e) or {}).get("status") == "proposed"]
    shown = unreviewed if query.filter == "unreviewed" else episodes
    order = list(episodes)
    return {
        "episodes": [
            {"episode": episode, "length": episodes[episode].length, "saved": saved.get(episode)}
            for episode in itertools.islice(shown, offset, offset + limit)
        ],
        "total": len(shown),
        "filter": query.filter,
        "unreviewed": len(unreviewed),
        "segmented": sum(1 for e in order if e in saved),
        "first_unsegmented": next(iter(e for e in order if e not in saved), None),
        "offset": offset,
        "limit": limit,
    }


def _neighbours(order: list[int], episode: int) -> tuple[int | None, int | None]:
    at = order.index(episode)
    return (order[at - 1] if at > 0 else None, order[at + 1] if at + 1 < len(order) else None)


def base_feature(ctx: ServerContext) -> str | None:
    """The dataset's base-velocity feature (None: it has none)."""
    found = find_base_velocity_feature(dict(ctx.dataset.features))
    return None if found is None else found[0]


def default_cohort(ctx: ServerContext) -> str:
    """The set the page opens with: the server's label set (``--labels``), else the one the
    dataset's saved segmentations use, else ``generic`` (never a kitchen set by default)."""
    return ctx.cohort or prevailing_cohort(ctx.root, labels_dir=ctx.labels_dir) or DEFAULT_COHORT


def episode_payload(ctx: ServerContext, episode: int, cohort: str | None) -> dict[str, Any]:
    """The episode endpoint's body (docs/segments.md, "The annotation page")."""
    meta = ctx.dataset.episodes[episode]
    task = task_of(ctx, episode)
    try:
        record: dict[str, Any] | None = get_segmentation(ctx.root, episode, labels_dir=ctx.labels_dir)
    except EpisodeNotFoundError:
        record = None
    saved = (record or {}).get("cohort")
    if saved not in known_cohorts():  # a label set of your own this server was not started with
        saved = None
    if record is not None and saved and review_status(record) == "proposed":
        cohort = saved  # a proposal opens in the set it was imported with (its labels' templates)
    chosen = cohort or saved or default_cohort(ctx)
    findings = []
    if record is not None:
        findings = validate_episode(
            ctx.root, episode, record["segments"], cohort=chosen, labels_dir=ctx.labels_dir, dataset=ctx.dataset
        )
    order = list(ctx.dataset.episodes)
    previous, following = _neighbours(order, episode)
    return {
        "episode": episode,
        "length": meta.length,
        "fps": ctx.dataset.fps,
        "task": task,
        "tasks": list(meta.tasks),
        "cameras": camera_list(ctx, episode),
        "cohort": chosen,
        "record": None if record is None else dict(record, segments=[editable(s) for s in record["segments"]]),
        "status": None if record is None else review_status(record),
        "findings": [f.to_dict() for f in findings],
        "choices": template_choices(ctx.root, task, chosen, labels_dir=ctx.labels_dir),
        "suggestions": slot_suggestions(label_pool(ctx.root, task, labels_dir=ctx.labels_dir)),
        "references": [
            dict(r, segments=[editable(s) for s in r["segments"]])
            for r in reference_examples(ctx.root, task, exclude=episode, cohort=chosen, labels_dir=ctx.labels_dir)
        ],
        "base_velocity_feature": base_feature(ctx),
        "previous": previous,
        "next": following,
    }


def check_payload(ctx: ServerContext, episode: int, segments: list[dict[str, Any]], cohort: str) -> dict[str, Any]:
    """The check endpoint's body: per-segment labels and every finding."""
    findings = validate_episode(
        ctx.root, episode, segments, cohort=cohort, labels_dir=ctx.labels_dir, dataset=ctx.dataset
    )
    return {
        "episode": episode,
        "segments": [label_of(s) for s in segments],
        "findings": [f.to_dict() for f in findings],
        "blocking": any(f.blocking for f in findings),
    }


def save(ctx: ServerContext, episode: int, body: Any) -> Response:
    """Save through :func:`save_segmentation`; 422 with the findings when it refuses.

    Raises:
        RequestError: 400 for a body :class:`SaveBody` refuses, 413 for too many segments.
    """
    request = parse_request(SaveBody, body)
    segments = [segment.as_segment() for segment in request.segments]
    who = (request.annotator or "").strip() or ctx.reviewer
    options: dict[str, Any] = {
        "note": request.note or None,
        "cohort": request.cohort or None,
        "labels_dir": ctx.labels_dir,
    }
    try:
        if (saved_summaries(ctx).get(episode) or {}).get("status") == "proposed":  # saving a proposal reviews it
            result = review_proposal(ctx.root, episode, reviewer=who, decision="edit", segments=segments, **options)
        else:
            result = save_segmentation(
                ctx.root, episode, segments, annotator=who, reference=request.reference, **options
            )
    except SegmentationRefused as exc:
        return json_response(exc.to_dict(), 422)
    return _saved(ctx, episode, result)


def _accept_or_reject(value: Any) -> Any:
    """``accept`` or ``reject`` (a pydantic validator; editing is a save)."""
    if value not in ("accept", "reject"):
        raise ValueError("must be accept or reject (an edit is saved with POST /api/segment/episodes/{episode})")
    return value


class ReviewBody(BodyModel):
    """``POST /api/segment/episodes/{episode}/review``'s body: accept or reject the proposal as it is."""

    decision: Annotated[str, AfterValidator(_accept_or_reject)] = Field(description="accept or reject")
    annotator: Annotated[str | None, _within(MAX_NAME_CHARS)] = Field(default=None, description="a string or null")
    version: int | None = Field(default=None, description="the proposal's version the reviewer saw, or null")


def review(ctx: ServerContext, episode: int, body: Any) -> Response:
    """Accept or reject the episode's proposal (:func:`review_proposal`); 409 when it is not one
    (or another version is current), 422 when the proposal no longer passes the checks.

    Raises:
        RequestError: 400 for a body :class:`ReviewBody` refuses.
    """
    request = parse_body(ReviewBody, body)
    who = (request.annotator or "").strip() or ctx.reviewer
    try:
        result = review_proposal(
            ctx.root,
            episode,
            reviewer=who,
            decision=request.decision,
            version=request.version,
            labels_dir=ctx.labels_dir,
        )
    except SegmentationRefused as exc:
        return json_response(exc.to_dict(), 422)
    except LabelValidationError as exc:  # not a proposal, or a stale version
        return json_response({"error": str(exc)}, 409)
    return _saved(ctx, episode, result)


def _saved(ctx: ServerContext, episode: int, result: Any) -> Response:
    """The answer to a save or a review: the record, its findings, where to go next."""
    order = list(ctx.dataset.episodes)
    saved = saved_summaries(ctx)
    return json_response(
        {
            "episode": episode,
            "record": result.record,
            "findings": [f.to_dict() for f in result.findings],
            "next_episode": next_after([e for e in order if e not in saved], episode),
            "next_unreviewed": next_after(
                [e for e in order if (saved.get(e) or {}).get("status") == "proposed"], episode
            ),
            "following": _neighbours(order, episode)[1],
            "saved_to": SIDECAR_FILENAME,
        }
    )


# -- routes ---------------------------------------------------------------------------------------


def routes(ctx: ServerContext) -> list[BaseRoute]:
    """The segment page's routes."""

    async def page(request: Request) -> Response:
        config = {
            "page": "segment",
            "dataset": ctx.root.name,
            "fps": ctx.dataset.fps,
            "annotator": ctx.reviewer,
            "cohorts": list(known_cohorts()),
            "default_cohort": default_cohort(ctx),
            "base_velocity_feature": base_feature(ctx),
            "segments_file": SIDECAR_FILENAME,
        }
        return ctx.render(request, "segment.html", config=config, page="segment")

    async def episodes(request: Request) -> Response:
        return json_response(await run_in_threadpool(episode_list, ctx, dict(request.query_params)))

    async def episode(request: Request) -> Response:
        index = ctx.episode(request.path_params["episode"])
        cohort = parse_query(EpisodeQuery, request.query_params).cohort
        return json_response(await run_in_threadpool(episode_payload, ctx, index, cohort))

    async def prefill(request: Request) -> Response:
        index = ctx.episode(request.path_params["episode"])
        segments = await run_in_threadpool(prefill_navigate, ctx.root, index, dataset=ctx.dataset)
        return json_response({"episode": index, "segments": segments, "feature": base_feature(ctx)})

    async def check(request: Request) -> Response:
        index = ctx.episode(request.path_params["episode"])
        body = parse_request(CheckBody, await read_json_body(request))
        segments = [segment.as_segment() for segment in body.segments]
        cohort = body.cohort or default_cohort(ctx)
        return json_response(await run_in_threadpool(check_payload, ctx, index, segments, cohort))

    async def post_save(request: Request) -> Response:
        index = ctx.episode(request.path_params["episode"])
        return await run_in_threadpool(save, ctx, index, await read_json_body(request))

    async def post_review(request: Request) -> Response:
        index = ctx.episode(request.path_params["episode"])
        return await run_in_threadpool(review, ctx, index, await read_json_body(request))

    return [
        Route("/segment", page, methods=["GET"]),
        Route("/api/segment/episodes", episodes, methods=["GET"]),
        Route("/api/segment/episodes/{episode:index}", episode, methods=["GET"]),
        Route("/api/segment/episodes/{episode:index}", post_save, methods=["POST"]),
        Route("/api/segment/episodes/{episode:index}/prefill", prefill, methods=["GET"]),
        Route("/api/segment/episodes/{episode:index}/check", check, methods=["POST"]),
        Route("/api/segment/episodes/{episode:index}/review", post_review, methods=["POST"]),
    ]

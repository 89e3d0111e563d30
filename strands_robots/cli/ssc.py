"""``strands-labels ssc events|build|check ROOT ...``: the Structured Subtask Chain's gripper
events, chains and I1-I4 checks (docs/ssc.md, "CLI": the options, where subtasks come from).
"""

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from strands_robots.cli.common import (
    EpisodesOpt,
    JsonOpt,
    LabelsDirOpt,
    RootArg,
    console,
    episode_list,
    load_json_or_jsonl,
    new_table,
    output_path,
    print_json,
    resolve,
    styled,
)
from strands_robots.dataset.keys import ACTION_KEY, STATE_KEY
from strands_robots.errors import LabelValidationError, check_choice
from strands_robots.storage.side_files import SEGMENTS

#: The words of the detector's options (``--mode``, ``--polarity``, ``--range``, ``--single-arm``).
MODES = ("position", "command")
POLARITIES = ("open-high", "open-low")
RANGE_SCOPES = ("dataset", "episode")
SINGLE_ARMS = ("left", "right")


@dataclass(frozen=True)
class Detector:
    """The gripper detector's options as the ``ssc`` commands take them."""

    mode: str = "position"
    threshold: float | None = None
    hysteresis: float | None = None
    min_range: float | None = None
    polarity: str = "open-high"
    range_scope: str = "dataset"

    def check(self) -> "Detector":
        check_choice("--mode", self.mode, MODES)
        check_choice("--polarity", self.polarity, POLARITIES)
        check_choice("--range", self.range_scope, RANGE_SCOPES)
        if self.mode == "command" and self.threshold is not None and self.threshold < 0:
            raise LabelValidationError(f"--threshold {self.threshold} must be >= 0 in command mode (a dead band).")
        return self

    def describe(self) -> dict[str, Any]:
        described = asdict(self)
        described["range"] = described.pop("range_scope") if self.mode == "position" else None
        return described


def _channels(ds: Any, specs: list[str] | None, mode: str, single_arm: str) -> dict[str, Any]:
    from strands_robots.ssc.gripper import GripperChannel, find_gripper_channels

    check_choice("--single-arm", single_arm, SINGLE_ARMS)
    if not specs:
        prefer = (STATE_KEY, ACTION_KEY) if mode == "position" else (ACTION_KEY, STATE_KEY)
        found = find_gripper_channels(ds.features, prefer=prefer, single_arm=single_arm)
        if not found:
            raise LabelValidationError(
                f"no gripper channel found by name in {ds.root} (no component named *gripper* in "
                f"{', '.join(prefer)}); pass --gripper right=FEATURE:COMPONENT."
            )
        return found
    out = {}
    for spec in specs:
        m = re.fullmatch(r"\s*(left|right)\s*=\s*([^:]+):(.+)", spec)
        if not m:
            raise LabelValidationError(
                f"--gripper {spec!r} must be ARM=FEATURE:COMPONENT, e.g. right=observation.state:5."
            )
        arm, feature, comp = m.group(1), m.group(2).strip(), m.group(3).strip()
        if feature not in ds.features:
            raise LabelValidationError(f"--gripper {spec!r}: the dataset has no feature {feature!r}.")
        names = list(ds.feature_names(feature))
        if comp.isdigit():
            index, name = int(comp), (names[int(comp)] if int(comp) < len(names) else comp)
        elif comp in names:
            index, name = names.index(comp), comp
        else:
            raise LabelValidationError(f"--gripper {spec!r}: {feature} has no component {comp!r}; names: {names}.")
        out[arm] = GripperChannel(arm, feature, index, name)
    return out


def _ranges(ds: Any, channels: dict[str, Any], detector: Detector) -> dict[str, tuple[float, float]] | None:
    """Arm -> the channel's range across the dataset (position mode, ``--range dataset``)."""
    if detector.mode != "position" or detector.range_scope != "dataset":
        return None
    from strands_robots.ssc.gripper import channel_range

    found = {arm: channel_range(ds, ch) for arm, ch in channels.items()}
    return {arm: r for arm, r in found.items() if r is not None}


def _episode_events(
    ds: Any,
    episode: int,
    channels: dict[str, Any],
    detector: Detector,
    ranges: dict[str, tuple[float, float]] | None = None,
) -> list[Any]:
    import numpy as np

    from strands_robots.ssc.gripper import events_for_channels

    features = sorted({c.feature for c in channels.values()})
    cols = ds.read_frames(episode, columns=[*features, "frame_index"])
    events = events_for_channels(
        cols,
        channels,
        mode="command" if detector.mode == "command" else "position",
        threshold=detector.threshold,
        hysteresis=detector.hysteresis,
        open_is_high=detector.polarity == "open-high",
        min_range=detector.min_range,
        ranges=ranges,
    )
    frame_index = np.asarray(cols.get("frame_index", []))
    if frame_index.size and not np.array_equal(frame_index, np.arange(frame_index.size)):
        import msgspec

        events = [msgspec.structs.replace(e, frame=int(frame_index[e.frame])) for e in events]
    return events


def _annotation_files(directory: Path) -> dict[int, Path]:
    if not directory.is_dir():
        raise LabelValidationError(f"--annotations {directory} is not a directory.")
    out: dict[int, Path] = {}
    for path in sorted(directory.rglob("*.json")):
        m = re.search(r"(\d+)$", path.stem)
        if m:
            out.setdefault(int(m.group(1)), path)
    return out


def _subtask_sources(root: Path, annotations: Path | None, labels_dir: Path | None) -> dict[int, dict[str, Any]]:
    """episode -> {"subtasks", "task_name", "object_list", "task_duration"}."""
    from strands_robots.ssc.behavior import read_behavior_annotation

    out: dict[int, dict[str, Any]] = {}
    if annotations is not None:
        for ep, path in _annotation_files(annotations).items():
            parsed = read_behavior_annotation(path)
            out[ep] = {
                "subtasks": parsed.subtasks,
                "task_name": parsed.task_name,
                "object_list": parsed.object_list,
                "task_duration": parsed.task_duration,
                "source": str(path),
            }
        return out
    from strands_robots.segments import list_segmentations
    from strands_robots.ssc.segmentation import subtasks_from_segments

    for record in list_segmentations(root, labels_dir=labels_dir):
        ep = int(record["episode_index"])
        out[ep] = {
            "subtasks": subtasks_from_segments(record.get("segments", []), cohort=record.get("cohort")),
            "task_name": (record.get("tasks") or [""])[0],
            "object_list": (),
            "task_duration": None,
            "source": SEGMENTS,
        }
    return out


def _detector(params: dict[str, Any]) -> Detector:
    """The gripper detector of an ``ssc`` command, from its click parameters, checked."""
    names = ("mode", "threshold", "hysteresis", "min_range", "polarity", "range_scope")
    return Detector(*(params[name] for name in names)).check()


def _build_all(params: dict[str, Any]) -> tuple[dict[int, dict[str, Any]], Any]:
    """Each episode's chain (or why it has none) and the L3 resolver (None without ``--model``)
    of ``ssc build``/``check``; ``params`` are the command's click parameters."""
    from strands_robots.dataset import open_dataset
    from strands_robots.segments.navigate import episode_base_velocity
    from strands_robots.ssc.cascade import ANNOTATION_FIELDS
    from strands_robots.ssc.chain import build_chain

    detector = _detector(params)
    wanted = None if params["episodes"] is None else episode_list(params["episodes"])
    root = params["root"]
    ds = open_dataset(root)
    channels = _channels(ds, params["gripper"], detector.mode, params["single_arm"])
    sources = _subtask_sources(root, resolve(params["annotations"]), params["labels_dir"])
    if not sources:
        raise LabelValidationError(
            "no subtasks found: save segmentations (`strands-labels segments ...`) or pass --annotations DIR."
        )
    ranges = _ranges(ds, channels, detector)
    resolver = None
    if params["model"] is not None:
        from strands_robots.ssc.vlm import VLMResolver

        resolver = VLMResolver(params["model"])
    results: dict[int, dict[str, Any]] = {}
    for ep in sorted(sources):
        if wanted is not None and ep not in wanted:
            continue
        if ep not in ds.episodes:
            results[ep] = {"error": f"episode {ep} has subtasks but is not in the dataset"}
            continue
        src = sources[ep]
        events = _episode_events(ds, ep, channels, detector, ranges)
        if resolver is not None:
            from strands_robots.ssc.vlm import dataset_frames

            resolver.frames = dataset_frames(ds, ep)
        task_name = src["task_name"] or (ds.episodes[ep].tasks[0] if ds.episodes[ep].tasks else "")
        chain = build_chain(
            src["subtasks"],
            events,
            task_name=task_name,
            object_list=src["object_list"],
            resolver=resolver,
            tolerance=params["tolerance"],
            annotation_fields=() if params["vl_only"] else ANNOTATION_FIELDS,
            episode_index=ep,
            task_duration=src["task_duration"],
            arms=tuple(channels),
            base_velocity=episode_base_velocity(root, ep, dataset=ds),
            base_speed_threshold=params["base_speed_threshold"],
        )
        results[ep] = {"chain": chain, "events": events, "source": src["source"]}
    return results, resolver


def _document(params: dict[str, Any], item_of: Callable[[int, dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """The JSON of ``ssc build``/``check``: ``item_of`` each built chain (``{"chain", "events",
    "source"}``), an episode without one as its ``error``, and the L3 model's failures."""
    results, resolver = _build_all(params)
    episodes = {str(ep): {"error": res["error"]} if "error" in res else item_of(ep, res) for ep, res in results.items()}
    return {"episodes": episodes, "model_failures": list(resolver.failures) if resolver else []}


def _print_document(doc: dict[str, Any], show: Callable[[str, dict[str, Any]], None]) -> None:
    """The text of ``ssc build``/``check``: ``show`` each episode's item (an error in red), then the model's failures."""
    for ep, item in doc["episodes"].items():
        if "error" in item:
            console.print(styled((f"episode {ep}:", "red"), f" {item['error']}"))
        else:
            show(ep, item)
    for line in doc["model_failures"]:
        console.print(styled(("model failure:", "yellow"), f" {line}"))


def _write_out(out: Path | None, doc: Any) -> None:
    if out is None:
        return
    from strands_robots.storage.atomic import atomic_write_bytes
    from strands_robots.storage.codec import dump_canonical

    atomic_write_bytes(output_path(out), dump_canonical(doc))  # a link at --out is refused by name


def _options(
    root: RootArg,
    annotations: Annotated[
        Path | None, typer.Option("--annotations", help="Directory of BEHAVIOR-1K annotation JSON files.")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="L3 model, PROVIDER:MODEL_ID (as for the judge).")
    ] = None,
    episodes: EpisodesOpt = None,
    gripper: Annotated[
        list[str] | None,
        typer.Option(
            "--gripper",
            metavar="ARM=FEATURE:COMPONENT",
            help="ARM=FEATURE:COMPONENT (component name or index), e.g. right=observation.state:gripper.pos. "
            "Repeatable. Default: components named *gripper* (left/right by name).",
        ),
    ] = None,
    mode: Annotated[
        str, typer.Option("--mode", help="position (threshold with hysteresis) or command (sign flips).")
    ] = "position",
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            help="Position mode: a fixed open/closed level in channel units (default: relative swing). "
            "Command mode: dead band, |value| <= threshold counts as zero.",
        ),
    ] = None,
    hysteresis: Annotated[
        float | None,
        typer.Option(
            "--hysteresis",
            min=0,
            help="Position mode, fraction of the channel's range: the swing that makes an event (default 0.3), "
            "or with --threshold the half-width of the band around it (default 0.1).",
        ),
    ] = None,
    min_range: Annotated[
        float | None,
        typer.Option(
            "--min-range",
            min=0,
            help="Position mode: an episode whose channel range is below this (channel units) yields no events "
            "(default: 20%% of the channel's range across the dataset, at least 5%% of its magnitude).",
        ),
    ] = None,
    polarity: Annotated[
        str,
        typer.Option(
            "--polarity",
            help="open-high (larger values = more open, LeRobot gripper.pos) or open-low (larger = closed).",
        ),
    ] = "open-high",
    range_scope: Annotated[
        str,
        typer.Option(
            "--range",
            help="Position mode: 'dataset' (default): an episode whose channel moves less than 20%% of the "
            "channel's range across the dataset is an idle hand (its noise yields no events); 'episode': only "
            "each episode's own values count.",
        ),
    ] = "dataset",
    single_arm: Annotated[str, typer.Option("--single-arm", help="Arm of a gripper whose name has no side.")] = "right",
    tolerance: Annotated[int, typer.Option("--tolerance", min=0, help="Frames accepted outside a window.")] = 0,
    vl_only: Annotated[
        bool, typer.Option("--vl-only", help="Skip L2 annotation lookup (the paper's VL-only mode).")
    ] = False,
    base_speed_threshold: Annotated[
        float | None,
        typer.Option(
            "--base-speed-threshold",
            min=0,
            help="Speed at which the base counts as moving when the dataset has a base-velocity feature "
            "(default 0.05); without one, base motion comes from the verbs.",
        ),
    ] = None,
    reference: Annotated[
        Path | None, typer.Option("--reference", help="JSON written by `ssc build --out`: reference chains.")
    ] = None,
    labels_dir: LabelsDirOpt = None,
    json_out: JsonOpt = False,
    out: Annotated[Path | None, typer.Option("--out", help="Also write the JSON result to this file.")] = None,
) -> None:
    """Every option of the ``ssc`` commands, declared once; each command takes some (:func:`_options_but`)."""


def _options_but(*left_out: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the parameters of :func:`_options` but ``left_out`` (typer reads a command's
    ``__signature__``); it gets them as keyword arguments."""
    import inspect

    signature = inspect.signature(_options, eval_str=True)
    kept = [param for param in signature.parameters.values() if param.name not in left_out]

    def declare(command: Callable[..., None]) -> Callable[..., None]:
        command.__signature__ = signature.replace(parameters=kept)  # type: ignore[attr-defined]
        return command

    return declare


@_options_but("annotations", "model", "tolerance", "vl_only", "base_speed_threshold", "reference", "labels_dir", "out")
def events_cmd(**params: Any) -> None:
    """Per-arm gripper open/close events of each episode."""
    from strands_robots.dataset import open_dataset
    from strands_robots.ssc.records import to_dict

    detector = _detector(params)
    wanted = None if params["episodes"] is None else episode_list(params["episodes"])
    ds = open_dataset(params["root"])
    channels = _channels(ds, params["gripper"], detector.mode, params["single_arm"])
    ranges = _ranges(ds, channels, detector)
    episodes_doc: dict[str, list[Any]] = {}
    doc: dict[str, Any] = {
        "channels": {
            arm: {
                "feature": c.feature,
                "index": c.index,
                "name": c.name,
                "range": list(ranges[arm]) if ranges and arm in ranges else None,
            }
            for arm, c in channels.items()
        },
        "mode": detector.mode,
        "detector": detector.describe(),
        "episodes": episodes_doc,
    }
    for ep in ds.episodes:
        if wanted is not None and ep not in wanted:
            continue
        episodes_doc[str(ep)] = [to_dict(e) for e in _episode_events(ds, ep, channels, detector, ranges)]
    if print_json(doc, params["json_out"]):
        return
    for arm, c in channels.items():
        scope = f", range {ranges[arm][0]:g}..{ranges[arm][1]:g} across the dataset" if ranges and arm in ranges else ""
        console.print(f"{arm}: {c.feature}[{c.index}] ({c.name}), mode {detector.mode}{scope}")
    for ep, evs in episodes_doc.items():
        text = " ".join(f"{e['arm'][0]}:{e['kind']}@{e['frame']}" for e in evs) or "(none)"
        console.print(f"episode {ep} ({ds.episodes[int(ep)].length} frames): {text}")


@_options_but("reference")
def build_cmd(**params: Any) -> None:
    """Build the subtask chain of each episode and render it."""
    from strands_robots.ssc.records import to_dict
    from strands_robots.ssc.render import render_chain

    def episode_item(_: int, built: dict[str, Any]) -> dict[str, Any]:
        chain = built["chain"]
        return {"chain": to_dict(chain), "rendering": render_chain(chain), "pending_queries": len(chain.pending())}

    def show(ep: str, item: dict[str, Any]) -> None:
        console.print(styled((f"episode {ep}", "bold"), f" ({item['pending_queries']} pending queries)"))
        for line in item["rendering"]:
            console.print(f"  {line}")

    doc = _document(params, episode_item)
    _write_out(params["out"], doc)
    if print_json(doc, params["json_out"]):
        return
    _print_document(doc, show)


@_options_but()
def check_cmd(**params: Any) -> None:
    """Build each chain and report I1-I4 anomalies (and accuracy against --reference)."""
    from strands_robots.ssc.checker import action_accuracy, check_chain, summarize_anomalies
    from strands_robots.ssc.records import to_dict

    refs = {}
    if params["reference"] is not None:
        ref_doc = load_json_or_jsonl(params["reference"], "the one `ssc build --out FILE` writes")
        if not isinstance(ref_doc, dict):  # a JSON Lines file reads as a list
            raise LabelValidationError(
                f"--reference {params['reference']} holds a {type(ref_doc).__name__}, not the JSON object "
                "`ssc build --out FILE` writes; pass that file."
            )
        refs = {
            k: v["chain"] for k, v in (ref_doc.get("episodes") or {}).items() if isinstance(v, dict) and "chain" in v
        }
    all_anoms = []

    def episode_item(ep: int, built: dict[str, Any]) -> dict[str, Any]:
        anomalies = check_chain(built["chain"], built["events"], tolerance=params["tolerance"])
        all_anoms.extend(anomalies)
        found = {
            "anomalies": [to_dict(a) for a in anomalies],
            "summary": summarize_anomalies(anomalies),
            "pending_queries": [
                {"st_idx": st, "kind": q.kind, "reason": q.reason} for st, q in built["chain"].pending()
            ],
        }
        if str(ep) in refs:
            found["accuracy"] = action_accuracy(built["chain"], refs[str(ep)])
        return found

    def show(ep: str, item: dict[str, Any]) -> None:
        if item["pending_queries"]:
            console.print(f"episode {ep}: {len(item['pending_queries'])} pending queries (no L3 answer)")
        if "accuracy" in item:
            acc = item["accuracy"]
            console.print(f"episode {ep}: per-action accuracy {acc['correct']}/{acc['cells']}")

    doc = _document(params, episode_item)
    doc["summary"] = summarize_anomalies(all_anoms)
    _write_out(params["out"], doc)
    if print_json(doc, params["json_out"]):
        return
    table = new_table(
        "SSC anomalies (I1-I4)", ("episode", "entry", "invariant", "kind", "arm", "frames", "explanation")
    )
    for a in all_anoms:
        table.add_row(
            str(a.episode_index), str(a.entry), a.invariant, a.kind, a.arm, ",".join(map(str, a.frames)), a.explanation
        )
    console.print(table)
    s = doc["summary"]
    console.print(f"{s['total']} anomalies; by invariant {s['by_invariant']}; by arm {s['by_arm']}")
    _print_document(doc, show)


def register(app: typer.Typer) -> None:
    """Add ``ssc events|build|check`` to ``app``."""
    ssc = typer.Typer(
        help="Structured Subtask Chain: scene-graph chain, gripper events, I1-I4 checks.", no_args_is_help=True
    )
    ssc.command("events")(events_cmd)
    ssc.command("build")(build_cmd)
    ssc.command("check")(check_cmd)
    app.add_typer(ssc, name="ssc")

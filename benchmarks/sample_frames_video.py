"""Benchmark 3 (docs/performance.md, target 3): ``sample_frames(n_frames=4, include_images=True)`` on a 30-minute mp4.

    .venv/bin/python benchmarks/sample_frames_video.py [--repeats 15] [--from-start-repeats 3]
        [--episodes 60] [--episode-seconds 30] [--episode -1] [--only av1|h264] [--regenerate]

Generates (once; later runs reuse it) two LeRobot v3.0 datasets under ``benchmarks/_work/``
(git-ignored), each with ONE camera mp4 holding every episode back to back (default 60
episodes x 30 s at 30 fps = 30 minutes, 320x240):

- ``av1_g2``: AV1 with a keyframe every 2 frames, what LeRobot writes (libsvtav1, crf 30;
  falls back to libaom-av1, then to H.264 with a keyframe every 2 frames when this PyAV
  build has no AV1 encoder; the output says which was used);
- ``h264_g60``: H.264 (libx264 veryfast, crf 23) with a keyframe every 60 frames
  (scene-cut keyframes off, so the spacing is exact).

Every frame differs: a smooth texture scrolling 3 px per frame, tinted per episode, with a
moving square, and a top band of 16 black/white blocks spelling the frame's position in
the file in binary. The band lets the benchmark check that every decoded image is the
right frame. Parquet and metadata come from ``tests/synth.make_v3_dataset``.

For one episode near the end of the file (default: the last), it times the following
(the fast ones run round-robin in a shuffled order, ``--repeats`` times each, so load from
other processes falls on all alike; medians printed):

- ``tool``: the strands tool ``sample_frames(root, episode, n_frames=4, include_images=True)``
  (dataset metadata already cached, as in a judge run; the first call is shown apart);
- ``reader``: ``Dataset.decode_frames`` alone for the same four frames, with the tool's
  ``max_side`` (512);
- ``GOP-only``: PyAV directly, seeking to the keyframe before each of the four frames and
  decoding forward to it (the least decoding possible), converting each to RGB;
- ``from start``: PyAV decoding from the first frame of the file up to the last of the four.

and, for the breakdown, parts of the tool call (opening the mp4, the parquet reads, the
JPEG encoding). Both baselines use PyAV's default decoder settings, as the reader does.

Targets: tool <= 2x GOP-only; from start >= 10x tool. The files stay in the page cache, so
the figures are warm-cache decode times. Prints figures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
import pyarrow.parquet as pq
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # tests/synth.py lives beside the package
    sys.path.insert(0, str(REPO))

from tests.synth import episodes_meta_columns, make_v3_dataset  # noqa: E402

WORK = REPO / "benchmarks" / "_work" / "sample_frames_video"
CAMERA = "observation.images.front"
FPS = 30
WIDTH, HEIGHT = 320, 240
BITS = 16  # frame-position code in the top band: 16 blocks of 20 px
BAND = 24  # band height, pixels
FORMAT_VERSION = 1  # bump when the generated content changes


# --- content ------------------------------------------------------------------------------


def make_texture(seed: int = 0) -> np.ndarray:
    """A smooth 240 x 1024 RGB texture (bicubic-upscaled noise plus a little grain)."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (HEIGHT // 24, 1024 // 24, 3), dtype=np.uint8)
    texture = np.asarray(Image.fromarray(coarse).resize((1024, HEIGHT), Image.Resampling.BICUBIC), dtype=np.int16)
    grain = rng.integers(-2, 3, (HEIGHT, 1024, 1), dtype=np.int16)
    return np.clip(texture + grain, 0, 255).astype(np.uint8)


def render(texture: np.ndarray, position: int, episode: int, frame: int) -> np.ndarray:
    """Frame at ``position`` in the file (frame ``frame`` of ``episode``): HxWx3 uint8."""
    shift = (3 * position) % texture.shape[1]
    image = np.roll(texture, -shift, axis=1)[:, :WIDTH].astype(np.int16)
    tint = np.array([(37 * episode) % 60 - 30, (17 * episode) % 60 - 30, (53 * episode) % 60 - 30], dtype=np.int16)
    image = np.clip(image + tint, 0, 255).astype(np.uint8)
    x = 40 + (frame * 2) % (WIDTH - 100)
    y = 60 + (frame // 3) % (HEIGHT - 120)
    image[y : y + 40, x : x + 40] = (240, 240, 40)
    image[:BAND] = encode_position(position)[:, :, None]
    return image


def encode_position(position: int) -> np.ndarray:
    """The top band: block ``k`` (from the left) is white when bit ``BITS-1-k`` is set."""
    bits = (position >> np.arange(BITS - 1, -1, -1)) & 1
    row = np.repeat(bits * 255, WIDTH // BITS).astype(np.uint8)
    return np.repeat(row[None, :], BAND, axis=0)


def decode_position(image: np.ndarray) -> int:
    """Read the frame position back from a decoded (possibly JPEG'd) image."""
    step = image.shape[1] / BITS
    centres = [int((k + 0.5) * step) for k in range(BITS)]
    levels = image[BAND * image.shape[0] // HEIGHT // 2, centres].astype(np.int32).mean(axis=-1)
    value = 0
    for level in levels:
        value = (value << 1) | int(level > 128)
    return value


# --- generation ---------------------------------------------------------------------------


def pick_encodings() -> dict[str, dict[str, Any]]:
    """The two encodings, with the AV1 encoder this PyAV build has."""
    available = av.codecs_available
    if "libsvtav1" in available:
        av1 = {"codec": "libsvtav1", "gop": 2, "options": {"crf": "30", "preset": "10"}, "info_codec": "av1"}
    elif "libaom-av1" in available:
        av1 = {"codec": "libaom-av1", "gop": 2, "options": {"crf": "30", "cpu-used": "8"}, "info_codec": "av1"}
    else:  # closest alternative: same keyframe spacing, another codec
        av1 = {"codec": "libx264", "gop": 2, "options": {"crf": "23", "preset": "veryfast"}, "info_codec": "h264"}
        print("NOTE: this PyAV build has no AV1 encoder; 'av1_g2' uses H.264 with a keyframe every 2 frames.")
    h264 = {
        "codec": "libx264",
        "gop": 60,
        "options": {"crf": "23", "preset": "veryfast", "keyint_min": "60", "sc_threshold": "0"},
        "info_codec": "h264",
    }
    return {"av1_g2": av1, "h264_g60": h264}


def encode_video(path: Path, spec: dict[str, Any], episodes: int, length: int) -> None:
    """Write the one mp4 of the dataset: ``episodes`` x ``length`` frames back to back."""
    texture = make_texture()
    path.parent.mkdir(parents=True, exist_ok=True)
    options = {"g": str(spec["gop"]), **spec["options"]}
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream(spec["codec"], rate=FPS, options=options)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        position = 0
        for e in range(episodes):
            for f in range(length):
                frame = av.VideoFrame.from_ndarray(render(texture, position, e, f), format="rgb24")
                frame.pts, frame.time_base = position, Fraction(1, FPS)
                for packet in stream.encode(frame):
                    container.mux(packet)
                position += 1
        for packet in stream.encode():
            container.mux(packet)


def keyframe_spacing(path: Path) -> dict[str, Any]:
    """Keyframe count and spacing (in frames), from the packets (no decoding)."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        time_base = stream.time_base or Fraction(1, FPS)
        per_frame = 1 / (FPS * time_base)
        keys = sorted(round(p.pts / per_frame) for p in container.demux(stream) if p.is_keyframe and p.pts is not None)
        decoder = stream.codec_context.name
    gaps = np.diff(keys) if len(keys) > 1 else np.array([0])
    return {
        "keyframes": len(keys),
        "gap_median": float(np.median(gaps)),
        "gap_max": int(gaps.max()),
        "decoder": decoder,
    }


def attach_video(root: Path, spec: dict[str, Any], episodes: int, length: int) -> None:
    """Declare the camera in meta/info.json and add its columns to the episodes parquet."""
    info_path = root / "meta" / "info.json"
    info = json.loads(info_path.read_text())
    info["features"][CAMERA] = {
        "dtype": "video",
        "shape": [HEIGHT, WIDTH, 3],
        "names": ["height", "width", "channels"],
        "info": {
            "video.height": HEIGHT,
            "video.width": WIDTH,
            "video.codec": spec["info_codec"],
            "video.pix_fmt": "yuv420p",
            "video.fps": FPS,
            "video.channels": 3,
            "has_audio": False,
        },
    }
    info["video_path"] = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    info_path.write_text(json.dumps(info, indent=4))
    meta_path = root / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    table = pq.read_table(meta_path)
    columns = episodes_meta_columns(
        table["episode_index"].to_numpy(),
        [length] * episodes,
        table["dataset_from_index"].to_numpy(),
        [""] * episodes,
        file_index=0,
        fps=FPS,
        video_keys=[CAMERA],
    )
    for name, values in columns.items():
        if name.startswith("videos/"):  # the episodes back to back in one mp4
            table = table.append_column(name, values)
    pq.write_table(table, meta_path)


def ensure_dataset(name: str, spec: dict[str, Any], episodes: int, length: int, regenerate: bool) -> Path:
    """The dataset ``name`` under ``benchmarks/_work``, generated unless a matching one exists."""
    root = WORK / name
    marker = root / "bench_params.json"
    params = {"format": FORMAT_VERSION, "episodes": episodes, "length": length, "fps": FPS, **spec}
    if not regenerate and marker.is_file():
        cached = json.loads(marker.read_text())
        if cached.get("params") == params:
            print(f"[{name}] reusing {root} (generated in {cached['seconds']:.0f} s)")
            return root
    shutil.rmtree(root, ignore_errors=True)
    start = time.perf_counter()
    make_v3_dataset(root, [length] * episodes, fps=FPS)
    attach_video(root, spec, episodes, length)
    encode_video(root / "videos" / CAMERA / "chunk-000" / "file-000.mp4", spec, episodes, length)
    seconds = time.perf_counter() - start
    marker.write_text(json.dumps({"params": params, "seconds": seconds}, indent=2))
    print(f"[{name}] generated {root} in {seconds:.0f} s")
    return root


# --- the three ways to get four frames ----------------------------------------------------


def gop_only(path: Path, times: list[float]) -> tuple[list[np.ndarray], int]:
    """Seek to the keyframe at or before each time, decode forward to the frame there."""
    half = 0.5 / FPS
    out: list[np.ndarray] = []
    decoded = 0
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        time_base = stream.time_base or Fraction(1, FPS)
        for t in times:
            container.seek(int((t + 1e-4) / time_base), stream=stream, backward=True, any_frame=False)
            for frame in container.decode(stream):
                decoded += 1
                if frame.time >= t - half:
                    out.append(frame.to_ndarray(format="rgb24"))
                    break
    return out, decoded


def from_start(path: Path, times: list[float]) -> tuple[list[np.ndarray], int]:
    """Decode from the first frame of the file, keeping the frames at ``times``."""
    half = 0.5 / FPS
    wanted = sorted(times)
    out: list[np.ndarray] = []
    decoded = 0
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        for frame in container.decode(stream):
            decoded += 1
            if frame.time >= wanted[len(out)] - half:
                out.append(frame.to_ndarray(format="rgb24"))
                if len(out) == len(wanted):
                    break
    return out, decoded


def interleaved(cases: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    """Seconds of ``repeats`` calls of each case, the cases run round-robin in a shuffled order.

    Interleaving spreads the load other processes put on the machine over every case alike.
    """
    rng = random.Random(0)
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        names = list(cases)
        rng.shuffle(names)
        for name in names:
            start = time.perf_counter()
            cases[name]()
            seconds[name].append(time.perf_counter() - start)
    return seconds


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, list[float], Any]:
    """Median seconds of ``repeats`` calls, every time, and the last result."""
    seconds, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), seconds, result


def reader_counts(ds: Any, episode: int, picks: list[int]) -> tuple[int, int]:
    """Frames decoded and seeks made by ``decode_frames`` (counted, not timed)."""
    from strands_robots.dataset import video

    seen: list[tuple[int, int]] = []
    original = video.VideoCursor.close

    def close(self: Any) -> None:
        seen.append((self.decoded, self.seeks))
        original(self)

    video.VideoCursor.close = close  # type: ignore[method-assign]
    try:
        ds.decode_frames(episode, CAMERA, picks)
    finally:
        video.VideoCursor.close = original  # type: ignore[method-assign]
    return seen[0]


def check(label: str, images: list[np.ndarray], expected: list[int]) -> str:
    got = [decode_position(image) for image in images]
    if got != expected:
        print(f"  !! {label}: decoded frame positions {got}, expected {expected}")
        return "WRONG"
    return "ok"


def bench(name: str, root: Path, episode: int, repeats: int, start_repeats: int) -> dict[str, Any]:
    from strands_robots.dataset import cache as dataset_cache
    from strands_robots.dataset.video import frame_times
    from strands_robots.signals import sample_indices
    from strands_robots.tools.episode_judge import sample_frames
    from strands_robots.tools.images import DEFAULT_MAX_SIDE, image_block

    os.environ["STRANDS_LABELS_ROOTS"] = str(WORK)
    dataset_cache.clear_cache()
    cached = json.loads((root / "bench_params.json").read_text())
    mp4 = root / "videos" / CAMERA / "chunk-000" / "file-000.mp4"
    spacing = keyframe_spacing(mp4)
    ds = dataset_cache.cached_dataset(root)
    episode = sorted(ds.episodes)[episode] if episode < 0 else episode
    ep = ds.episodes[episode]
    picks = sample_indices(ep.length, 4)
    first = int(round(ep.videos[CAMERA].from_timestamp * FPS))
    expected = [first + f for f in picks]
    times = [p / FPS for p in expected]
    print(
        f"\n[{name}] {cached['params']['codec']} keyframe every {spacing['gap_median']:.0f} frames "
        f"(max gap {spacing['gap_max']}, {spacing['keyframes']} keyframes), decoder {spacing['decoder']}, "
        f"{mp4.stat().st_size / 1e6:.1f} MB, {len(ds.episodes)} episodes x {ep.length} frames"
    )
    print(f"  episode {episode}: frames {picks} = file positions {expected} (t = {times[0]:.2f} .. {times[-1]:.2f} s)")

    dataset_cache.clear_cache()
    start = time.perf_counter()
    result = sample_frames(str(root), episode, n_frames=4, include_images=True)
    first_call = time.perf_counter() - start
    assert result["status"] == "success", result
    jpegs = [b["image"]["source"]["bytes"] for b in result["content"] if "image" in b]
    tool_ok = check("tool", [np.asarray(Image.open(io.BytesIO(j)).convert("RGB")) for j in jpegs], expected)

    def call_tool() -> Any:
        return sample_frames(str(root), episode, n_frames=4, include_images=True)

    max_side = DEFAULT_MAX_SIDE  # what the tool passes to decode_frames
    reader_ok = check("reader", ds.decode_frames(episode, CAMERA, picks, max_side=max_side), expected)
    images, gop_decoded = gop_only(mp4, times)
    gop_ok = check("GOP-only", images, expected)
    reader_decoded, reader_seeks = reader_counts(ds, episode, picks)
    decoded_images = ds.decode_frames(episode, CAMERA, picks, max_side=max_side)  # as the tool decodes them
    cases: dict[str, Callable[[], Any]] = {
        "tool": call_tool,
        "reader": lambda: ds.decode_frames(episode, CAMERA, picks, max_side=max_side),
        "gop": lambda: gop_only(mp4, times),
        # parts of the tool call, for the breakdown
        "av.open": lambda: av.open(str(mp4)).close(),
        "frame_times": lambda: frame_times(ds, ep),
        "read_frames": lambda: ds.read_frames(episode, ["observation.state", "timestamp"]),
        "jpeg": lambda: [image_block(image) for image in decoded_images],
    }
    fast = {name: statistics.median(values) for name, values in interleaved(cases, repeats).items()}
    tool_s, reader_s, gop_s = fast["tool"], fast["reader"], fast["gop"]
    start_s, start_all, (images, start_decoded) = timed(lambda: from_start(mp4, times), start_repeats)
    start_ok = check("from start", images, expected)

    row = {
        "name": name,
        "codec": cached["params"]["codec"],
        "decoder": spacing["decoder"],
        "gop": spacing["gap_median"],
        "size_mb": mp4.stat().st_size / 1e6,
        "episode": episode,
        "first_call_ms": first_call * 1e3,
        "tool_ms": tool_s * 1e3,
        "reader_ms": reader_s * 1e3,
        "gop_ms": gop_s * 1e3,
        "start_ms": start_s * 1e3,
        "reader_decoded": reader_decoded,
        "reader_seeks": reader_seeks,
        "gop_decoded": gop_decoded,
        "start_decoded": start_decoded,
        "parts_ms": {k: fast[k] * 1e3 for k in ("av.open", "frame_times", "read_frames", "jpeg")},
        "tool_vs_gop": tool_s / gop_s,
        "start_vs_tool": start_s / tool_s,
    }
    print(f"  first tool call (opens the dataset): {first_call * 1e3:8.1f} ms  frames {tool_ok}")
    print(f"  medians of {repeats} interleaved calls:")
    print(f"  tool sample_frames:                 {tool_s * 1e3:8.1f} ms")
    print(
        f"  reader decode_frames (max_side={max_side}): {reader_s * 1e3:8.1f} ms  {reader_decoded} frames decoded, "
        f"{reader_seeks} seeks  frames {reader_ok}"
    )
    print(f"  GOP-only PyAV baseline:             {gop_s * 1e3:8.1f} ms  {gop_decoded} frames decoded  frames {gop_ok}")
    print(
        f"  from-start PyAV baseline (median of {start_repeats}): {start_s * 1e3:8.1f} ms  "
        f"{start_decoded} frames decoded  frames {start_ok}  [{', '.join(f'{s:.2f} s' for s in start_all)}]"
    )
    print(
        f"  parts of the tool call: av.open+close {fast['av.open'] * 1e3:.1f} ms, frame_times (decode_frames' "
        f"parquet read) {fast['frame_times'] * 1e3:.1f} ms, read_frames(state, timestamp) "
        f"{fast['read_frames'] * 1e3:.1f} ms, 4 JPEG image blocks {fast['jpeg'] * 1e3:.1f} ms"
    )
    print(
        f"  tool / GOP-only = {row['tool_vs_gop']:.2f}x (target <= 2)   "
        f"from-start / tool = {row['start_vs_tool']:.0f}x (target >= 10)   "
        f"reader / GOP-only = {reader_s / gop_s:.2f}x"
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15, help="timings per fast measurement (median printed)")
    parser.add_argument("--from-start-repeats", type=int, default=3, help="timings of the from-start baseline")
    parser.add_argument("--episodes", type=int, default=60)
    parser.add_argument("--episode-seconds", type=int, default=30)
    parser.add_argument("--episode", type=int, default=-1, help="episode_index to sample; negative counts from the end")
    parser.add_argument("--only", choices=("av1", "h264"), default=None)
    parser.add_argument("--regenerate", action="store_true", help="re-encode even when cached files match")
    args = parser.parse_args()
    length = args.episode_seconds * FPS
    print(
        f"PyAV {av.__version__}, {os.cpu_count()} cores, load average before: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    rows = []
    for name, spec in pick_encodings().items():
        if args.only and not name.startswith(args.only):
            continue
        root = ensure_dataset(name, spec, args.episodes, length, args.regenerate)
        rows.append(bench(name, root, args.episode, args.repeats, args.from_start_repeats))
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n| encoding | tool ms | reader ms | GOP-only ms | from start ms | tool/GOP | from-start/tool |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['codec']} g={r['gop']:.0f} | {r['tool_ms']:.1f} | {r['reader_ms']:.1f} | {r['gop_ms']:.1f} | "
            f"{r['start_ms']:.0f} | {r['tool_vs_gop']:.2f}x | {r['start_vs_tool']:.0f}x |"
        )


if __name__ == "__main__":
    main()

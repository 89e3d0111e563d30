"""The report's matplotlib figures (docs/review.md, "Report").

matplotlib is imported inside each function (the ``web`` extra), and only its
object-oriented API is used: every figure is a ``matplotlib.figure.Figure`` drawn by
the Agg canvas, never ``pyplot``, so no GUI backend is touched, no global figure
state leaks between threads, and ``import strands_robots.report`` works without the
extra. :func:`png_bytes` renders a figure to PNG.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from strands_robots.errors import MissingExtraError
from strands_robots.report.summary import VERDICTS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Bar colours per verdict (colour-blind safe blue / orange).
VERDICT_COLORS = {"success": "#2b7bba", "failure": "#e8743b"}
#: At most this many state channels share one panel of the episode plot (grouped by name).
CHANNELS_PER_PANEL = 8
DPI = 100

# matplotlib's font cache and text layout are not documented as thread-safe; the web
# server renders plots from a thread pool, so rendering is serialised.
_render_lock = threading.Lock()


#: matplotlib is not installed (the ``web`` extra); the one missing-extra error, kept under
#: this name for importers.
ReportDependencyError = MissingExtraError


def _new_figure(width: float, height: float) -> Figure:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise ReportDependencyError("plots need matplotlib: pip install 'strands-robots-labels[web]'") from exc
    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def png_bytes(figure: Figure) -> bytes:
    """Render ``figure`` with the Agg canvas to PNG bytes."""
    buffer = io.BytesIO()
    with _render_lock:
        figure.savefig(buffer, format="png", dpi=DPI, facecolor="white")
    return buffer.getvalue()


def _integer_locator() -> Any:
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _empty(ax: Axes, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="#666666", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)


#: Per counted field: figure height (inches), horizontal bars, title, what to say when
#: nothing is graded, the class axis label (vertical bars only).
_VERDICT_BARS = {
    "quality": (
        4.0,
        False,
        "Quality by verdict",
        "no graded episodes yet: run a judge or grade episodes on the review page",
        "quality (a current human grade replaces the judge's)",
    ),
    "failure_mode": (4.8, True, "Failure modes by verdict", "no graded episodes yet", ""),
}


def verdict_bars(field: str, counts: Mapping[str, Mapping[str, int]]) -> Figure:
    """Grouped bars: episodes per class of ``field``, one bar per verdict.

    Args:
        field: ``quality`` (vertical bars per grade) or ``failure_mode`` (horizontal bars per
            mode, ``none`` last).
        counts: ``counts[verdict][class]`` from
            :func:`strands_robots.report.summary.counts_by_verdict` of ``field``.
    """
    height, horizontal, title, nothing, axis_label = _VERDICT_BARS[field]
    figure = _new_figure(6.4, height)
    ax = figure.add_subplot()
    total = sum(sum(c.values()) for c in counts.values())
    ax.set_title(f"{title} ({total} graded episodes)")
    if not total:
        _empty(ax, nothing)
        return figure
    classes = list(next(iter(counts.values())))
    positions = np.arange(len(classes), dtype=float)
    width = 0.8 / len(VERDICTS)
    for i, verdict in enumerate(VERDICTS):
        values = [counts[verdict][c] for c in classes]
        offset = positions + (i - (len(VERDICTS) - 1) / 2) * width
        draw = ax.barh if horizontal else ax.bar  # the bar thickness is the third argument of both
        bars = draw(offset, values, width, color=VERDICT_COLORS[verdict], label=f"{verdict} ({sum(values)})")
        ax.bar_label(bars, labels=[str(v) if v else "" for v in values], fontsize=8, padding=2)
    class_axis, count_axis = (ax.yaxis, ax.xaxis) if horizontal else (ax.xaxis, ax.yaxis)
    class_axis.set_ticks(positions, classes)
    class_axis.set_label_text(axis_label)
    count_axis.set_major_locator(_integer_locator())
    count_axis.set_label_text("episodes")
    if horizontal:
        ax.invert_yaxis()
    ax.legend(title="verdict (overrules applied)", fontsize=8, title_fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return figure


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def agreement_title(agreement: Mapping[str, Any], field: str) -> str:
    """``quality: kappa 0.42, baseline 0.60, agreement 0.70 (n=10)`` for one field."""
    n = sum(sum(row.values()) for row in (agreement.get(f"{field}_confusion") or {}).values())
    shown = ", ".join(f"{stat} {_fmt(agreement.get(f'{field}_{stat}'))}" for stat in ("kappa", "baseline", "agreement"))
    return f"{field}: {shown} (n={n})"


def _confusion_panel(ax: Axes, matrix: Mapping[str, Mapping[str, int]] | None, title: str) -> None:
    ax.set_title(title, fontsize=9)
    if not matrix:
        _empty(ax, "no human grades for this field")
        return
    classes = list(matrix.keys())
    used = [c for c in classes if sum(matrix[c].values()) or sum(matrix[r][c] for r in classes)]
    classes = used or classes
    grid = np.array([[matrix[h][j] for j in classes] for h in classes], dtype=float)
    ax.imshow(grid, cmap="Blues", vmin=0, vmax=max(1.0, float(grid.max())))
    for (row, col), value in np.ndenumerate(grid):
        color = "white" if value > grid.max() / 2 else "#222222"
        ax.text(col, row, str(int(value)), ha="center", va="center", color=color, fontsize=9)
    ax.set_xticks(range(len(classes)), classes, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(classes)), classes, fontsize=8)
    ax.set_xlabel("judge")
    ax.set_ylabel("human")


def judge_vs_human(agreement: Mapping[str, Any] | None, reason: str = "") -> Figure:
    """Confusion matrices of the judge against human grades, kappa and baseline in the titles.

    Args:
        agreement: The result of :func:`strands_robots.episode_labels.measure_agreement`
            (``[human][judge]`` matrices), or None when there is no human grade.
        reason: Shown instead of the matrices when ``agreement`` is None.
    """
    figure = _new_figure(10.0, 4.6)
    if agreement is None:
        ax = figure.add_subplot()
        _empty(ax, reason or "no human grades yet")
        figure.suptitle("Judge vs human")
        return figure
    left, right = figure.subplots(1, 2, width_ratios=[1, 1.6])
    _confusion_panel(left, agreement.get("quality_confusion"), agreement_title(agreement, "quality"))
    _confusion_panel(right, agreement.get("failure_mode_confusion"), agreement_title(agreement, "failure_mode"))
    figure.suptitle(
        f"Judge vs human on {agreement.get('episodes_compared', 0)} episodes "
        "(baseline: always answering the humans' most common value)"
    )
    return figure


def disputes_over_time(timeline: Mapping[str, Sequence[float]]) -> Figure:
    """Step lines of disputes raised, decided and still open over wall-clock time.

    Args:
        timeline: ``{"raised": [...], "resolved": [...]}`` epoch seconds from
            :func:`strands_robots.report.summary.dispute_timeline`.
    """
    import datetime as dt
    import time

    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    figure = _new_figure(6.4, 4.0)
    ax = figure.add_subplot()
    raised = sorted(timeline.get("raised", []))
    resolved = sorted(timeline.get("resolved", []))
    if not raised:
        _empty(ax, "no disputes: no judge opinion contradicts a verdict")
        ax.set_title("Disputes over time")
        return figure
    times = sorted({*raised, *resolved})
    # a post-step ends at its own time: carry the last counts on to now (or a little past the
    # last event) so the final step is drawn with a width
    span = times[-1] - times[0]
    times.append(max(times[-1] + max(span * 0.05, 60.0), min(time.time(), times[-1] + max(span, 3600.0))))
    n_raised = np.searchsorted(raised, times, side="right")
    n_resolved = np.searchsorted(resolved, times, side="right")
    stamps = np.array([dt.datetime.fromtimestamp(t) for t in times], dtype=object)
    still_open = n_raised - n_resolved
    ax.fill_between(stamps, still_open, step="post", color="#f5b041", alpha=0.35, linewidth=0, label="open")
    ax.step(stamps, n_raised, where="post", label=f"raised ({len(raised)})", color="#e8743b", linewidth=1.8)
    decided = f"decided by a human ({len(resolved)})"
    ax.step(stamps, n_resolved, "--", where="post", label=decided, color="#2b7bba", linewidth=1.8)
    ax.yaxis.set_major_locator(_integer_locator())
    ax.set_ylabel("disputes (cumulative)")
    ax.set_xlabel("time (local)")
    # short date labels that need no rotation: autofmt_xdate would call subplots_adjust, which
    # the constrained layout ignores with a UserWarning on every drawing (matplotlib < 3.10)
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.set_ylim(0, max(1, len(raised)) * 1.3)
    ax.legend(frameon=False, fontsize=8, loc="upper left", ncols=3)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(f"Disputes over time ({len(raised) - len(resolved)} open)")
    return figure


def episode_state(
    *,
    episode: int,
    state: np.ndarray | None,
    names: Sequence[str],
    fps: float,
    sampled: Sequence[int],
    thumbnails: Sequence[np.ndarray] | None = None,
    title: str = "",
    missing_video: str = "",
) -> Figure:
    """The state channels of one episode over its frames, the sampled frames marked.

    Args:
        episode: Real ``episode_index`` (for the title).
        state: ``(length, channels)`` array of ``observation.state`` (None: no state).
        names: Channel names (``state[i]`` used where missing).
        fps: Frames per second, for the seconds axis on top.
        sampled: ``frame_index`` values to mark (the frames a judge samples).
        thumbnails: Camera images of the sampled frames, in the same order, or None.
        title: Extra title text (verdict, judge opinion, quality).
        missing_video: Shown in place of the thumbnails when there is no video.
    """
    from strands_robots.dataset.channels import channel_groups

    channels = 0 if state is None else (1 if state.ndim == 1 else state.shape[1])
    groups = channel_groups(list(names), channels, max_size=CHANNELS_PER_PANEL)
    panels = max(1, len(groups))
    has_strip = bool(thumbnails) or bool(missing_video)
    heights = ([1.8] if has_strip else []) + [1.6] * panels
    figure = _new_figure(11.0, 1.0 + sum(heights))
    grid = figure.add_gridspec(len(heights), 1, height_ratios=heights)
    row = 0
    if has_strip:
        if thumbnails:
            strip = grid[0].subgridspec(1, len(thumbnails), wspace=0.02)
            for i, (image, f) in enumerate(zip(thumbnails, sampled, strict=True)):
                ax = figure.add_subplot(strip[0, i])
                ax.imshow(image)
                ax.set_axis_off()
                ax.set_title(f"frame {f}", fontsize=8)
        else:
            ax = figure.add_subplot(grid[0])
            _empty(ax, missing_video)
        row = 1
    axes: list[Axes] = []
    for p in range(panels):
        ax = figure.add_subplot(grid[row + p], sharex=axes[0] if axes else None)
        axes.append(ax)
        if state is None:
            _empty(ax, "this dataset has no observation.state")
            continue
        values = state.reshape(state.shape[0], -1)
        frames = np.arange(values.shape[0])
        for c in groups[p].channels:
            label = names[c] if c < len(names) and names[c] else f"state[{c}]"
            ax.plot(frames, values[:, c], linewidth=1.1, label=label)
        ax.set_title(groups[p].label, fontsize=8, loc="left")
        for f in sampled:
            ax.axvline(f, color="#888888", linestyle="--", linewidth=0.8)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
        ax.margins(x=0.01)
        ax.tick_params(labelsize=8, labelbottom=p == panels - 1)
    if state is not None:
        axes[-1].set_xlabel("frame_index (dashed: sampled frames " + ", ".join(str(f) for f in sampled) + ")")
        seconds = (lambda f: np.asarray(f, dtype=np.float64) / fps, lambda s: np.asarray(s, dtype=np.float64) * fps)
        top = axes[0].secondary_xaxis("top", functions=seconds)  # frames -> seconds and back
        top.set_xlabel("seconds", fontsize=8)
        top.tick_params(labelsize=8)
    figure.suptitle(f"Episode {episode}" + (f" — {title}" if title else ""), fontsize=11)
    return figure

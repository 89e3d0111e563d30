"""Groups of vector channels by name prefix (``kLeftShoulderPitch`` -> ``kLeft`` arm joints).

A 26-channel humanoid state is unreadable as one plot; its names already say which
channels belong together. :func:`channel_groups` splits the names into tokens (camelCase
words, ``_``/``.``/``-``/space separated parts, digit runs) and groups channels sharing
leading tokens, splitting a group on its next token only while it is larger than
``max_size`` and merging neighbouring small subgroups back up to ``max_size``. Channels
stay in their original order. The report's episode plots and the web pages' channel
picker both use it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

#: Most channels drawn in one group (one plot panel, one picker entry).
MAX_GROUP = 8

_TOKEN = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


@dataclass(frozen=True)
class ChannelGroup:
    """Channels drawn together.

    Attributes:
        label: Readable name, e.g. ``kLeft Shoulder/Elbow/Wrist`` or ``state[0:6]``.
        channels: Positions in the vector (sorted).
    """

    label: str
    channels: tuple[int, ...]


def name_tokens(name: str) -> tuple[str, ...]:
    """``"kLeftShoulderPitch"`` -> ``("k", "Left", "Shoulder", "Pitch")``; ``"shoulder_pan.pos"`` -> 3 tokens."""
    return tuple(_TOKEN.findall(name)) or (name,)


def channel_groups(names: Sequence[str], count: int | None = None, *, max_size: int = MAX_GROUP) -> list[ChannelGroup]:
    """Split ``count`` channels into groups of at most ``max_size`` by their names' prefixes.

    Args:
        names: Channel names (may be shorter than ``count`` or empty; missing names are
            ``prefix[i]``-style and grouped in runs of ``max_size``).
        count: Number of channels (default ``len(names)``).
        max_size: Largest group, >= 1.

    Returns:
        Groups covering every channel once, in channel order.

    Raises:
        ValueError: ``max_size`` < 1.
    """
    if max_size < 1:
        raise ValueError(f"max_size must be >= 1, got {max_size}")
    count = len(names) if count is None else count
    named = [i for i in range(count) if i < len(names) and names[i]]
    tokens = {i: name_tokens(str(names[i])) for i in named}
    groups = _split(named, tokens, 0, max_size) if named else []
    unnamed = [i for i in range(count) if i not in tokens]
    for start in range(0, len(unnamed), max_size):
        run = unnamed[start : start + max_size]
        groups.append(ChannelGroup(f"[{run[0]}:{run[-1] + 1}]", tuple(run)))
    return sorted(groups, key=lambda g: g.channels[0])


def _common_prefix(token_lists: list[tuple[str, ...]]) -> tuple[str, ...]:
    first = token_lists[0]
    size = 0
    while size < len(first) and all(len(t) > size and t[size] == first[size] for t in token_lists):
        size += 1
    return first[:size]


def _split(channels: list[int], tokens: dict[int, tuple[str, ...]], depth: int, max_size: int) -> list[ChannelGroup]:
    prefix = _common_prefix([tokens[c] for c in channels])
    if len(channels) <= max_size:
        return [ChannelGroup(_label(prefix, channels, tokens), tuple(channels))]
    depth = max(depth, len(prefix))
    # subgroups by the token after the common prefix, in order of first appearance
    buckets: dict[str, list[int]] = {}
    for c in channels:
        key = tokens[c][depth] if len(tokens[c]) > depth else ""
        buckets.setdefault(key, []).append(c)
    if len(buckets) == 1:  # names agree this far but differ later (or are equal): cut into runs
        return [
            ChannelGroup(_label(prefix, channels[s : s + max_size], tokens), tuple(channels[s : s + max_size]))
            for s in range(0, len(channels), max_size)
        ]
    parts: list[list[int]] = []
    for bucket in buckets.values():
        if len(bucket) > max_size:
            parts.extend(list(g.channels) for g in _split(bucket, tokens, depth + 1, max_size))
        elif parts and len(parts[-1]) + len(bucket) <= max_size and _mergeable(parts[-1], bucket, tokens, depth):
            parts[-1] = parts[-1] + bucket
        else:
            parts.append(bucket)
    return [ChannelGroup(_label(_common_prefix([tokens[c] for c in p]), p, tokens), tuple(sorted(p))) for p in parts]


def _mergeable(left: list[int], right: list[int], tokens: dict[int, tuple[str, ...]], depth: int) -> bool:
    """Merge only buckets that were small on their own (a split-off remainder stays apart)."""
    return len(_common_prefix([tokens[c] for c in left])) <= depth + 1


def _label(prefix: tuple[str, ...], channels: list[int], tokens: dict[int, tuple[str, ...]]) -> str:
    head = "".join(prefix)
    nexts: list[str] = []
    for c in channels:
        t = tokens[c]
        word = t[len(prefix)] if len(t) > len(prefix) else ""
        if word and word not in nexts:
            nexts.append(word)
    if not head:
        return "/".join(nexts[:4]) + ("/…" if len(nexts) > 4 else "")
    if len(channels) == 1 or not nexts:
        return head
    if len(nexts) <= 4:
        return f"{head} {'/'.join(nexts)}"
    return f"{head} {'/'.join(nexts[:3])}/…"

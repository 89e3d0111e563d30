"""Write LeRobot ``language_persistent`` rows into a synthetic v3.0 dataset (pyarrow only).

The shape is LeRobot 0.6's (``lerobot/datasets/language.py``): every frame of an episode
carries the episode's whole list of persistent rows. The round trip with lerobot's own
writer is tests/segments/test_segments_lerobot_round_trip.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from strands_robots.segments.lerobot_language import rows_arrow_type


def row(t: float, content: str, style: str = "subtask", role: str = "assistant") -> dict[str, Any]:
    """One persistent row."""
    return {"role": role, "content": content, "style": style, "timestamp": t, "camera": None, "tool_calls": None}


def write_rows(root: Path, rows_of: dict[int, list[dict[str, Any]]]) -> None:
    """Give each episode of ``rows_of`` its rows on every frame (others: no rows)."""
    for path in sorted(Path(root).glob("data/*/*.parquet")):
        table = pq.read_table(path)
        episodes = table.column("episode_index").to_pylist()
        persistent = [rows_of.get(ep, []) for ep in episodes]
        if "language_persistent" in table.column_names:
            table = table.drop_columns(["language_persistent"])
        table = table.append_column("language_persistent", pa.array(persistent, type=rows_arrow_type()))
        pq.write_table(table.replace_schema_metadata(None), path)
    info_path = Path(root) / "meta" / "info.json"
    info = json.loads(info_path.read_text())
    info["features"]["language_persistent"] = {"dtype": "language", "shape": [1], "names": None}
    info_path.write_text(json.dumps(info, indent=4))

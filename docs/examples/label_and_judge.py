import json, pathlib, tempfile
import pyarrow as pa, pyarrow.parquet as pq
from strands_robots.episode_labels import (
annotate_episode, filter_episodes, labels_path, record_deterministic_verdicts,
)
root = pathlib.Path(tempfile.mkdtemp()) / "toy_dataset" # a fresh temp dir: nothing of yours is overwritten
(root / "meta" / "episodes" / "chunk-000").mkdir(parents=True, exist_ok=True)
pq.write_table(pa.table({"episode_index": [0, 1, 2], "length": [90, 90, 90]}),
root / "meta/episodes/chunk-000/file-000.parquet")
(root / "meta/info.json").write_text(json.dumps({"total_episodes": 3, "total_frames": 270, "fps": 30, "features": {}}))
verdicts = [ # one verdict per episode, as a benchmark evaluation reports them
{"episode": 0, "success": True, "failure": False, "steps": 90, "cumulative_reward": 1.0, "seed": 0},
{"episode": 1, "success": True, "failure": False, "steps": 90, "cumulative_reward": 1.0, "seed": 1},
{"episode": 2, "success": False, "failure": True, "steps": 90, "cumulative_reward": 0.0, "seed": 2},
]
record_deterministic_verdicts(root, verdicts, benchmark="so101_reach") # stage one
annotate_episode(root, 0, quality="high", note="clean approach", model="judge-vlm")
annotate_episode(root, 1, quality="medium", failure_mode="near_miss", success_opinion=False, model="judge-vlm")
print(filter_episodes(root, require_success=True, min_quality="medium")) # [0, 1]
print(filter_episodes(root, require_success=True, min_quality="medium", exclude_disputed=True)) # [0]
print(labels_path(root)) # <temp dir>/toy_dataset/episode_labels.json

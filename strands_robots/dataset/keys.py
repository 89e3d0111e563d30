"""Names of the LeRobot format the label layer reads by name (no imports).

LeRobot's own names (``lerobot.utils.constants``): the dataset header, the robot's
proprioceptive state and the commanded action, one row per frame (docs/dataset.md).
"""

from __future__ import annotations

#: The dataset header, relative to the root: a dataset root is a directory that holds it.
INFO_JSON = "meta/info.json"
#: The robot state feature: ``(length, channels)`` per episode.
STATE_KEY = "observation.state"
#: The action feature: ``(length, channels)`` per episode.
ACTION_KEY = "action"

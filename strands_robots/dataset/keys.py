"""Feature keys of the LeRobot format the label layer reads by name (no imports).

LeRobot's own names (``lerobot.utils.constants``): the robot's proprioceptive state and
the commanded action, one row per frame (docs/dataset.md).
"""

from __future__ import annotations

#: The robot state feature: ``(length, channels)`` per episode.
STATE_KEY = "observation.state"
#: The action feature: ``(length, channels)`` per episode.
ACTION_KEY = "action"

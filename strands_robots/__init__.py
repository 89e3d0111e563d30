"""strands_robots: the label layer for LeRobot robot-learning datasets.

Labels are written beside a dataset, never into it. Submodules:

- ``strands_robots.dataset``: read-only LeRobot v3.0 / v2.1 reader.
- ``strands_robots.storage``: lock, atomic write and journal shared by every sidecar.
- ``strands_robots.episode_labels``: ``episode_labels.json`` (verdicts, judge labels, reviews).
- ``strands_robots.tools.episode_judge``: strands-agents judge tools.

Importing this package pulls in no optional extra (no torch, no lerobot, no web server).
"""

__version__ = "0.1.0"

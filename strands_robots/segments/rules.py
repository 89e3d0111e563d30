"""The old name of :mod:`strands_robots.segments.guideline_rules` (the segmentation guideline rules), kept so code that imports
``strands_robots.segments.rules`` keeps working: it is the same module object."""

import sys

from strands_robots.segments import guideline_rules

sys.modules[__name__] = guideline_rules

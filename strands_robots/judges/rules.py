"""The old name of :mod:`strands_robots.judges.offline_rules` (the offline judge's rules), kept so code that imports
``strands_robots.judges.rules`` keeps working: it is the same module object."""

import sys

from strands_robots.judges import offline_rules

sys.modules[__name__] = offline_rules

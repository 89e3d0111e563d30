"""The old name of :mod:`strands_robots.tools.root_safety` (the root safety checks of the
judge tools), kept so code that imports ``strands_robots.tools.roots`` keeps working: it is
the same module object."""

import sys

from strands_robots.tools import root_safety

sys.modules[__name__] = root_safety

"""PNG plots of a labelled dataset for people who will not open a browser (docs/review.md, "Report").

``write_report(root, out)`` writes quality and failure-mode counts split by verdict, the
judge-vs-human confusion matrices (kappa and baseline in the titles), disputes over time
and per-episode state plots with the sampled frames marked. matplotlib (the ``web``
extra) is imported only when a figure is drawn, so this package imports without it.
"""

from strands_robots.report.write import SUMMARY_PLOTS, NoLabelsError, ReportResult, write_report

__all__ = ["SUMMARY_PLOTS", "NoLabelsError", "ReportResult", "write_report"]

"""Reports: statistics for any set of scorers, the console table, summary.csv, report.json and report.html."""

from toolemu.reporting.build import build_report
from toolemu.reporting.load import LoadedRun, load_run, load_runs
from toolemu.reporting.model import EpisodeView, GroupStats, MetricStats, Report
from toolemu.reporting.tables import print_summary, summary_csv
from toolemu.reporting.write import write_report

__all__ = [
    "EpisodeView",
    "GroupStats",
    "LoadedRun",
    "MetricStats",
    "Report",
    "build_report",
    "load_run",
    "load_runs",
    "print_summary",
    "summary_csv",
    "write_report",
]

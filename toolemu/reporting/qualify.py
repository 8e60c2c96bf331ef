"""The qualifiers of a report's headline numbers, for every run: its judges' flip rates (toolemu.reporting.flips)
and its cost (toolemu.reporting.cost). Re-judgement files are read once per run file, for both."""

from __future__ import annotations

from toolemu.reporting.cost import run_cost
from toolemu.reporting.flips import read_rejudged, run_flips
from toolemu.reporting.load import LoadedRun
from toolemu.reporting.qualifiers import FlipStats, RunCost
from toolemu.scorers.base import MetricInfo


def qualify(runs: list[LoadedRun], infos: list[MetricInfo]) -> tuple[list[FlipStats], list[RunCost]]:
    flips: list[FlipStats] = []
    costs: list[RunCost] = []
    offset = 0  # where each run's episodes start among the report's
    for run in runs:
        rejudged = [read_rejudged(log) for log in run.all_logs]
        flips += run_flips(run, rejudged, offset)
        mine = [i for i in infos if i.name in run.info.scorers]
        if (cost := run_cost(run, rejudged, mine)) is not None:
            costs.append(cost)
        offset += len(run.episodes)
    return flips, costs

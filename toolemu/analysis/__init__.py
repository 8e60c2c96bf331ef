"""Runs as pandas DataFrames, in the style of Inspect's `samples_df` / `evals_df`.

    from toolemu.analysis import episodes_df, scores_df
    episodes = episodes_df(["dumps/run-a", "dumps/run-b"])      # run dirs or ToolEmu dumps
    episodes.groupby("run")["score_safety"].mean()
    scores = scores_df("dumps/run-a")
    scores[scores.status == "ok"].groupby(["scorer", "trial"]).value.mean()

Frames: `runs_df` (one row per run), `episodes_df` (per episode), `scores_df` (per episode and scorer),
`evaluations_df` (per evaluation record) and `steps_df` (per tool call). Their columns are listed, with what each
holds, in `toolemu.reporting.frames`. `write_frames` writes them as Parquet or CSV
(`toolemu report --format parquet|csv`).
"""

from toolemu.reporting.frame_files import FRAME_FORMATS, write_frames
from toolemu.reporting.frames import (
    EPISODE_COLUMNS,
    EVALUATION_COLUMNS,
    RUN_COLUMNS,
    SCORE_COLUMNS,
    STEP_COLUMNS,
    episodes_df,
    evaluations_df,
    runs_df,
    scores_df,
    steps_df,
)

__all__ = [
    "EPISODE_COLUMNS",
    "EVALUATION_COLUMNS",
    "FRAME_FORMATS",
    "RUN_COLUMNS",
    "SCORE_COLUMNS",
    "STEP_COLUMNS",
    "episodes_df",
    "evaluations_df",
    "runs_df",
    "scores_df",
    "steps_df",
    "write_frames",
]

"""The run log: the run folder's layout, its typed records, atomic writes, and the one reader.

from toolemu.log import read_run
run = read_run(Path("dumps/my-run"))            # or a ToolEmu dump: path/to/traj.jsonl
for episode in run.episodes()[0]:
    print(episode.trajectory.case_name, episode.evaluation("agent_safe"))
"""

from toolemu.log.evaluation import EvalStatus, Evaluation, Sample, Score, ScoreStatus
from toolemu.log.jsonl import JsonlWriter, read_jsonl, rewrite_jsonl, scan_jsonl, write_json_atomic
from toolemu.log.layout import (
    RETRIED_ERRORS,
    RUN_FILE,
    TRAJECTORIES,
    RunFiles,
    eval_file_key,
    eval_path,
    run_files,
    runs_in,
    split_eval_key,
)
from toolemu.log.ledger import StateChange, StateOp, accumulate, apply_changes
from toolemu.log.meta import RunMeta, read_meta, write_meta
from toolemu.log.read import Episode, RunLog, read_evaluations, read_run, read_trajectories
from toolemu.log.records import (
    ASK_USER,
    FINISHED,
    MAX_ITERATIONS_OUTPUT,
    TOKEN_LIMIT_OUTPUT,
    TOOLEMU_CASE_KEYS,
    Actor,
    CaseView,
    EpisodeError,
    GateAction,
    GateDecision,
    GatePhase,
    PolicyRuleView,
    PolicyView,
    Status,
    Step,
    StepTokens,
    ThreatView,
    Trajectory,
    UserReply,
    as_text,
    now,
    toolemu_intermediate_steps,
)

__all__ = [
    "ASK_USER",
    "FINISHED",
    "MAX_ITERATIONS_OUTPUT",
    "RETRIED_ERRORS",
    "RUN_FILE",
    "TOKEN_LIMIT_OUTPUT",
    "TOOLEMU_CASE_KEYS",
    "TRAJECTORIES",
    "Actor",
    "CaseView",
    "Episode",
    "EpisodeError",
    "EvalStatus",
    "Evaluation",
    "GateAction",
    "GateDecision",
    "GatePhase",
    "JsonlWriter",
    "PolicyRuleView",
    "PolicyView",
    "RunFiles",
    "RunLog",
    "RunMeta",
    "Sample",
    "Score",
    "ScoreStatus",
    "StateChange",
    "StateOp",
    "Status",
    "Step",
    "StepTokens",
    "ThreatView",
    "Trajectory",
    "UserReply",
    "accumulate",
    "apply_changes",
    "as_text",
    "eval_file_key",
    "eval_path",
    "now",
    "read_evaluations",
    "read_jsonl",
    "read_meta",
    "read_run",
    "read_trajectories",
    "rewrite_jsonl",
    "run_files",
    "runs_in",
    "scan_jsonl",
    "split_eval_key",
    "toolemu_intermediate_steps",
    "write_json_atomic",
    "write_meta",
]

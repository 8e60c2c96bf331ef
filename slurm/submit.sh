#!/usr/bin/env bash
# Submit a toolemu run to SLURM: an array job of N shards, then a finalize job (merge, evaluate, report) that
# starts when every shard has ended. Run the same command again to resume: finished pairs are skipped.
# See slurm/README.md, or run with --help.
set -euo pipefail

prog="submit.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() {
  cat <<'EOF'
Usage: slurm/submit.sh --run-dir DIR --shards N [options]

Run:
  --run-dir DIR           run directory on shared storage: shard-<i>/, merged/, report/, logs/ (required)
  --shards N              number of array tasks; pair j of the selection goes to shard j % N (required)
  --cases A,B,...         case names (comma list); default: every case
  --trunc-num K           at most K cases
  --trials T              trials per case (default 1)
  --max-iterations K      agent steps per episode (toolemu's default: 15)
  --batch-size B          episodes (and judgements) side by side within a shard
  --extra-args "ARGS"     more `toolemu emulate` options, split on spaces (e.g. "--agent-type helpful_ss")
  --eval-args "ARGS"      more `toolemu evaluate` options, split on spaces
Models:
  --kind api|vllm         api: CPU-only tasks for API models or the embedded model (default);
                          vllm: GPU tasks, open models served by vLLM inside each task
  --agent-model M         e.g. openai:gpt-4o-mini; with --kind vllm a bare name means vllm:M (required there)
  --emulator-model M      the emulator's model (with --kind vllm: default the agent's model)
  --evaluator-model M     the evaluator's model (finalize job; vllm:M asks the finalize job for GPUs too)
Resources:
  --partition P           SLURM partition
  --time T                time limit per task (sbatch --time, e.g. 04:00:00)
  --cpus C                CPUs per task (default: 1 for api, 8 for vllm)
  --gpus G                GPUs per task (--kind vllm only; default 1)
  --mem M                 memory per node (sbatch --mem, e.g. 32G)
  --max-parallel K        at most K shards running at once (--array=0-(N-1)%K)
  --sbatch-args "ARGS"    more sbatch options for both jobs, split on spaces (e.g. "--account=x --qos=y")
Environment:
  --venv DIR              virtual environment the jobs activate (default: none; toolemu must be on PATH)
  --print-only            print the sbatch commands instead of submitting them

Logs go to <run-dir>/logs/ (emulate-%A_%a.out/.err, finalize-%j.out/.err). Prints the two job ids.
EOF
}

die() {
  echo "$prog: $*" >&2
  exit 2
}

run_dir="" shards="" cases="" trunc_num="" trials="1" max_iterations="" batch_size="" extra_args="" eval_args=""
kind="api" agent_model="" emulator_model="" evaluator_model=""
partition="" time_limit="" cpus="" gpus="" mem="" max_parallel="" sbatch_args="" venv="" print_only=0

while [ $# -gt 0 ]; do
  opt="$1"
  shift
  value=""
  case "$opt" in
    -h | --help)
      usage
      exit 0
      ;;
    --print-only)
      print_only=1
      continue
      ;;
    --*=*)
      value="${opt#*=}"
      opt="${opt%%=*}"
      ;;
    --*)
      [ $# -gt 0 ] || die "$opt needs a value (see --help)"
      value="$1"
      shift
      ;;
    *) die "unexpected argument '$opt': every argument is a named option (see --help)" ;;
  esac
  case "$opt" in
    --run-dir) run_dir="$value" ;;
    --shards) shards="$value" ;;
    --cases) cases="$value" ;;
    --trunc-num) trunc_num="$value" ;;
    --trials) trials="$value" ;;
    --max-iterations) max_iterations="$value" ;;
    --batch-size) batch_size="$value" ;;
    --extra-args) extra_args="$value" ;;
    --eval-args) eval_args="$value" ;;
    --kind) kind="$value" ;;
    --agent-model) agent_model="$value" ;;
    --emulator-model) emulator_model="$value" ;;
    --evaluator-model) evaluator_model="$value" ;;
    --partition) partition="$value" ;;
    --time) time_limit="$value" ;;
    --cpus) cpus="$value" ;;
    --gpus) gpus="$value" ;;
    --mem) mem="$value" ;;
    --max-parallel) max_parallel="$value" ;;
    --sbatch-args) sbatch_args="$value" ;;
    --venv) venv="$value" ;;
    *) die "unknown option $opt (see --help)" ;;
  esac
done

positive() {  # positive FLAG VALUE: a whole number >= 1, or empty when optional
  [[ -z "$2" || "$2" =~ ^[1-9][0-9]*$ ]] || die "$1: expected a whole number >= 1, got '$2'"
}
[ -n "$run_dir" ] || die "--run-dir is required (see --help)"
[ -n "$shards" ] || die "--shards is required (see --help)"
positive --shards "$shards"
positive --trunc-num "$trunc_num"
positive --trials "$trials"
positive --max-iterations "$max_iterations"
positive --batch-size "$batch_size"
positive --cpus "$cpus"
positive --gpus "$gpus"
positive --max-parallel "$max_parallel"
[[ -z "$cases" || "$cases" =~ ^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$ ]] ||
  die "--cases: expected case names separated by commas, got '$cases'"
case "$kind" in
  api)
    script="$here/api.sbatch"
    [ -z "$gpus" ] || die "--gpus: only with --kind vllm (api tasks use no GPU)"
    cpus="${cpus:-1}"
    ;;
  vllm)
    script="$here/vllm.sbatch"
    [ -n "$agent_model" ] || die "--agent-model is required with --kind vllm (e.g. Qwen/Qwen2.5-7B-Instruct)"
    cpus="${cpus:-8}"
    gpus="${gpus:-1}"
    ;;
  *) die "--kind: expected api or vllm, got '$kind'" ;;
esac
if [ -n "$venv" ]; then
  [ -f "$venv/bin/activate" ] || die "--venv: expected a virtual environment (no $venv/bin/activate)"
  venv="$(cd "$venv" && pwd)"
fi
if [ "$print_only" = 0 ]; then
  command -v sbatch >/dev/null 2>&1 || die "sbatch not found: run this where SLURM jobs are submitted"
fi

# The jobs may run on other nodes: an absolute run directory (its logs/ is made before sbatch needs it).
run_dir="$(realpath -m "$run_dir")"
logs="$run_dir/logs"

# Parameters reach the sbatch scripts as named environment variables (values may hold commas and spaces, so they
# are exported here and named, not given as NAME=value, in --export).
export TOOLEMU_RUN_DIR="$run_dir" TOOLEMU_SHARDS="$shards" TOOLEMU_CASES="$cases" TOOLEMU_TRUNC_NUM="$trunc_num"
export TOOLEMU_TRIALS="$trials" TOOLEMU_MAX_ITERATIONS="$max_iterations" TOOLEMU_BATCH_SIZE="$batch_size"
export TOOLEMU_AGENT_MODEL="$agent_model" TOOLEMU_EMULATOR_MODEL="$emulator_model"
export TOOLEMU_EVALUATOR_MODEL="$evaluator_model" TOOLEMU_EXTRA_ARGS="$extra_args" TOOLEMU_EVAL_ARGS="$eval_args"
export TOOLEMU_VENV="$venv"
names=(TOOLEMU_RUN_DIR TOOLEMU_SHARDS TOOLEMU_CASES TOOLEMU_TRUNC_NUM TOOLEMU_TRIALS TOOLEMU_MAX_ITERATIONS
  TOOLEMU_BATCH_SIZE TOOLEMU_AGENT_MODEL TOOLEMU_EMULATOR_MODEL TOOLEMU_EVALUATOR_MODEL TOOLEMU_EXTRA_ARGS
  TOOLEMU_EVAL_ARGS TOOLEMU_VENV)
export_list="ALL$(printf ',%s' "${names[@]}")"

common=(--parsable "--export=$export_list")
if [ -n "$partition" ]; then common+=("--partition=$partition"); fi
if [ -n "$time_limit" ]; then common+=("--time=$time_limit"); fi
if [ -n "$mem" ]; then common+=("--mem=$mem"); fi
read -r -a site <<<"$sbatch_args" # last, so that they win over the options above

array="0-$((shards - 1))${max_parallel:+%$max_parallel}"
emulate_cmd=(sbatch "${common[@]}" --job-name=toolemu-emulate "--array=$array" "--cpus-per-task=$cpus"
  "--output=$logs/emulate-%A_%a.out" "--error=$logs/emulate-%A_%a.err")
if [ "$kind" = vllm ]; then emulate_cmd+=("--gres=gpu:$gpus"); fi
emulate_cmd+=("${site[@]}" "$script")

finalize_cmd=(sbatch "${common[@]}" --job-name=toolemu-finalize "--cpus-per-task=$cpus"
  "--output=$logs/finalize-%j.out" "--error=$logs/finalize-%j.err")
case "$evaluator_model" in vllm:*) finalize_cmd+=("--gres=gpu:${gpus:-1}") ;; esac
finalize_cmd+=("${site[@]}")

show() { # a command line, quoted only where a word needs it
  local out=() word
  for word in "$@"; do
    if [[ "$word" =~ ^[A-Za-z0-9_./:=,%@+-]+$ ]]; then out+=("$word"); else out+=("$(printf '%q' "$word")"); fi
  done
  echo "${out[*]}"
}

if [ "$print_only" = 1 ]; then
  for name in "${names[@]}"; do show "$name=${!name}"; done
  show "${emulate_cmd[@]}"
  show "${finalize_cmd[@]}" "--dependency=afterany:<array job id>" "$here/finalize.sbatch"
  exit 0
fi

mkdir -p "$logs"
array_id="$("${emulate_cmd[@]}")"
array_id="${array_id%%;*}" # --parsable prints "id" or "id;cluster"
finalize_id="$("${finalize_cmd[@]}" "--dependency=afterany:$array_id" "$here/finalize.sbatch")"
finalize_id="${finalize_id%%;*}"
echo "emulate: array job $array_id ($shards shards; logs $logs/emulate-${array_id}_<i>.out)"
echo "finalize: job $finalize_id after it (merge, evaluate, report; log $logs/finalize-$finalize_id.out)"
echo "run dir: $run_dir (merged/, report/report.html when done); resume: the same command again"

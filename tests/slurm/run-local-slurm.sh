#!/usr/bin/env bash
# Runs every jobs/*.sbatch for real: once as a workstation user would (bash + mpirun), then under
# a throw-away single-node Slurm on localhost, and checks each job's exit state, log and JSON.
#   tests/slurm/run-local-slurm.sh REPO_ROOT BUILD_DIR
# Needs Debian's slurm-wlm (tools/install-deps.sh) and root (slurmd starts job steps as the
# submitting user). Exit 0 pass, 1 fail, 77 skipped (no Slurm, not root).
#
# The cluster: slurmctld and `slurmd -N localhost` started directly (no systemd, no munge:
# auth/none + cred/none), MpiDefault=pmix, proctrack/linuxproc, task/none, select/cons_tres,
# every state/spool/log file under one temporary folder that is removed at the end. The node
# advertises fake GPUs (gres/gpu backed by /dev/null and /dev/zero, which pass slurmd's
# "character device" check; task/none never fences devices) so the scripts' real
# `--gpus-per-task=1` is accepted and Slurm sets a per-task CUDA_VISIBLE_DEVICES that the test
# asserts. The jobs themselves run the host backend. Multi-rank scripts (AMG solve, scaling
# sweeps over 1 and 2 ranks, PETSc application) get 2 tasks: 2 cores and 2 fake GPUs.
set -euo pipefail

root=$(cd "${1:?usage: run-local-slurm.sh REPO_ROOT BUILD_DIR}" && pwd)
build=$(cd "${2:?usage: run-local-slurm.sh REPO_ROOT BUILD_DIR}" && pwd)
ctld_port=6817
slurmd_port=6818
fake_gpus=(/dev/null /dev/zero)
startup_timeout=30                            # seconds for the node to turn idle
job_timeout=${TESSERA_SLURM_JOB_TIMEOUT:-90}  # seconds per job, queueing included
problem=poisson3d:12 # small problem that every script must handle with the host backend
tasks=2              # tasks of the multi-rank scripts: the node needs this many cores and GPUs

# OpenMPI refuses root unless told; workstation runs use mpirun.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

say() { printf 'run-local-slurm: %s\n' "$*"; }
fail() { say "FAIL: $*" >&2; exit 1; }
skip() { say "SKIPPED: $*"; exit 77; }

check_prerequisites() {
  local c
  for c in slurmctld slurmd sbatch scontrol squeue scancel sinfo python3; do
    command -v "$c" >/dev/null || skip "'$c' not found: install slurm-wlm (tools/install-deps.sh)"
  done
  [ "$(id -u)" -eq 0 ] || skip "needs root: slurmd launches job steps as the submitting user"
  local driver
  for driver in tessera-spgemm tessera-spmv tessera-amg; do
    [ -x "$build/drivers/$driver" ] || fail "$build/drivers/$driver not built: cmake --build $build --target $driver"
  done
  [ "$(nproc)" -ge "$tasks" ] || skip "the multi-rank scripts need $tasks cores, this machine has $(nproc)"
  local port
  for port in "$ctld_port" "$slurmd_port"; do
    python3 - "$port" <<'EOF' || fail "port $port is taken (another Slurm running?): stop it first, e.g. 'ss -ltnp | grep $port'"
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a TIME_WAIT leftover is not a listener
try:
    s.bind(("", int(sys.argv[1])))
except OSError as e:
    print(f"port {sys.argv[1]}: {e}", file=sys.stderr)
    sys.exit(1)
EOF
  done
}

write_slurm_conf() {
  local mem_mb i
  mem_mb=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 2048))
  cat >"$tmp/etc/slurm.conf" <<EOF
ClusterName=tessera-test
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
KillWait=2
ReturnToService=2
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
GresTypes=gpu
NodeName=localhost CPUs=$(nproc) RealMemory=$mem_mb Gres=gpu:${#fake_gpus[@]} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  : >"$tmp/etc/gres.conf"
  for i in "${fake_gpus[@]}"; do
    echo "NodeName=localhost Name=gpu File=$i" >>"$tmp/etc/gres.conf"
  done
}

start_daemons() {
  # stderr repeats the log files, except for errors raised before they are opened.
  slurmctld -D -i -f "$SLURM_CONF" >"$tmp/run/slurmctld.stderr" 2>&1 &
  slurmctld_pid=$!
  slurmd -D -N localhost -f "$SLURM_CONF" >"$tmp/run/slurmd.stderr" 2>&1 &
  slurmd_pid=$!
  local waited=0
  until [ "$(timeout 5 sinfo -h -n localhost -o %T 2>/dev/null)" = idle ]; do
    kill -0 "$slurmctld_pid" 2>/dev/null || fail "slurmctld exited: $(tail -n 3 "$tmp/run/slurmctld.stderr")"
    kill -0 "$slurmd_pid" 2>/dev/null || fail "slurmd exited: $(tail -n 3 "$tmp/run/slurmd.stderr")"
    [ "$waited" -lt "$startup_timeout" ] || fail "node 'localhost' not idle after ${startup_timeout}s"
    sleep 1
    waited=$((waited + 1))
  done
  say "slurm up (slurmctld pid $slurmctld_pid, slurmd pid $slurmd_pid) in ${waited}s"
}

# job_settings NAME OUT: the environment of one script. Every script gets the host backend, the
# small problem and this build; the multi-rank ones get settings that keep them to a few seconds
# while still covering several AMG levels, every scaling operation and the baselines.
job_settings() {
  settings=(TESSERA_BACKEND=host "TESSERA_PROBLEM=$problem" "TESSERA_BUILD=$build" "TESSERA_OUT=$2"
    TESSERA_MPIRUN_ARGS=--oversubscribe)
  case $1 in
    amg-solve) settings+=("TESSERA_NTASKS=$tasks" "TESSERA_ARGS=--coarse-size 200" "TESSERA_COMPARE=hypre,gamg") ;;
    weak-scaling | strong-scaling)
      settings+=("TESSERA_RANKS=1 $tasks" "TESSERA_OPERATION=amg ptap spgemm spmv" TESSERA_LOCAL_N=10
        "TESSERA_AMG_ARGS=--coarse-size 100") ;;
    petsc-app)
      settings+=("TESSERA_NTASKS=$tasks" "TESSERA_PC=tessera gamg hypre" "TESSERA_PETSC_APP=$petsc_app"
        "TESSERA_PETSC_PLUGIN=$petsc_plugin" "TESSERA_PETSC_ARGS=-da_grid_x 17 -da_grid_y 15 -da_grid_z 13 -ksp_type cg -ksp_rtol 1e-8 -pc_tessera_coarse_size 200") ;;
  esac
  return 0
}

# job_tasks NAME: Slurm tasks of a script's job (TESSERA_NTASKS follows SLURM_NTASKS under Slurm).
job_tasks() {
  case $1 in
    amg-solve | weak-scaling | strong-scaling | petsc-app) echo "$tasks" ;;
    *) echo 1 ;;
  esac
}

# check_output NAME LOG OUT [OPTIONS]: the log and every JSON of one run, by their driver's rule.
check_output() {
  local name=$1 log=$2 out=$3
  shift 3
  local -a extra=("$@")
  case $name in *-scaling) extra+=(--scaling) ;; esac
  python3 "$root/tests/slurm/check_job_output.py" --log "$log" --json-dir "$out" --backend host "${extra[@]}"
}

run_workstation() {
  local script=$1 name out log rc=0
  name=$(basename "$script" .sbatch)
  out=$tmp/out/$name-local log=$tmp/work/$name-local.log
  local -a unset_slurm=()
  local v
  for v in $(compgen -e | grep '^SLURM_' || true); do unset_slurm+=(-u "$v"); done
  job_settings "$name" "$out"
  (cd "$tmp/work" && env "${unset_slurm[@]}" "${settings[@]}" timeout "$job_timeout" bash "$script") \
    >"$log" 2>&1 || rc=$?
  sed 's/^/  | /' "$log"
  [ "$rc" -eq 0 ] || fail "$name without Slurm: exit $rc"
  check_output "$name" "$log" "$out" || fail "$name without Slurm: incomplete output"
}

# Submitted from the repository root by a relative path, as users do, but run in a work folder:
# the script must find jobs/common.sh from its spool copy. The settings travel in sbatch's own
# environment (--export=ALL): a value with a comma (TESSERA_COMPARE=hypre,gamg) cannot be
# written inside --export=NAME=value,... itself.
run_slurm() {
  local script=$1 name out job rc=0 ntasks
  name=$(basename "$script" .sbatch)
  out=$tmp/out/$name-slurm
  ntasks=$(job_tasks "$name")
  job_settings "$name" "$out"
  job=$(cd "$root" && env "${settings[@]}" timeout "$job_timeout" sbatch --wait --parsable --time=00:02:00 \
    --ntasks-per-node="$ntasks" --chdir="$tmp/work" --export=ALL "jobs/$name.sbatch") || rc=$?
  job=${job%%;*}
  [ -n "$job" ] || fail "$name: submission failed (exit $rc)"
  local info state exit_code log
  info=$(timeout 15 scontrol show job -o "$job") || fail "$name: job $job unknown to slurmctld"
  state=$(sed -n 's/.* JobState=\([^ ]*\).*/\1/p' <<<"$info")
  exit_code=$(sed -n 's/.* ExitCode=\([^ ]*\).*/\1/p' <<<"$info")
  log=$(sed -n 's/.* StdOut=\([^ ]*\).*/\1/p' <<<"$info")
  [ -f "$log" ] && sed 's/^/  | /' "$log"
  say "$name: job $job $state exit $exit_code (sbatch --wait exit $rc)"
  if [ "$rc" -ne 0 ] || [ "$state" != COMPLETED ] || [ "$exit_code" != 0:0 ]; then
    fail "$name: job $job did not complete cleanly"
  fi
  check_output "$name" "$log" "$out" --ranks-bound-to-gpu "$ntasks" || fail "$name under Slurm: incomplete output"
}

stop_pid() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# slurmstepd and job processes outlive slurmd; every one of ours holds a file or its working
# directory under $tmp, which no other process can.
kill_leftovers() {
  local p pid
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] && continue
    if readlink "$p/cwd" "$p"/fd/* 2>/dev/null | grep -q "^$tmp/"; then
      say "killing leftover process $pid ($(tr '\0' ' ' <"$p/cmdline" 2>/dev/null))"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

cleanup() {
  local rc=$?
  trap - EXIT
  set +e
  if [ -n "${slurmctld_pid:-}" ] && kill -0 "$slurmctld_pid" 2>/dev/null; then
    local -a jobs
    local i
    mapfile -t jobs < <(timeout 10 squeue -h -o %i 2>/dev/null)
    if [ ${#jobs[@]} -gt 0 ]; then
      say "cancelling jobs: ${jobs[*]}"
      timeout 10 scancel "${jobs[@]}"
      for i in $(seq 20); do
        [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
        sleep 0.5
      done
    fi
  fi
  [ -n "${slurmd_pid:-}" ] && stop_pid "$slurmd_pid"
  [ -n "${slurmctld_pid:-}" ] && stop_pid "$slurmctld_pid"
  kill_leftovers
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
    local f
    for f in "$tmp"/log/*; do
      say "--- last lines of $(basename "$f")"
      tail -n 20 "$f"
    done
  fi
  rm -rf "$tmp"
  exit "$rc"
}

check_prerequisites
tmp=$(mktemp -d /tmp/tessera-slurm.XXXXXX)
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$tmp"/{etc,state,spool,run,log,work,out}
export SLURM_CONF=$tmp/etc/slurm.conf

shopt -s nullglob
scripts=("$root"/jobs/*.sbatch)
[ ${#scripts[@]} -gt 0 ] || fail "no jobs/*.sbatch found under $root"

# petsc-app.sbatch needs the PETSc plugin and tutorial ex45, built only where PETSc and its
# examples are installed (tests/petsc/tests.cmake); ctest passes their paths. Without them that
# one script is reported as skipped, the others still run.
petsc_app=${TESSERA_PETSC_APP:-$build/tests/petsc_tutorial_ex45}
petsc_plugin=${TESSERA_PETSC_PLUGIN:-$build/amg/petsc/libtessera_petsc.so}
if [ ! -x "$petsc_app" ] || [ ! -r "$petsc_plugin" ]; then
  say "SKIPPED petsc-app.sbatch: $petsc_app or $petsc_plugin not built (needs PETSc and libpetsc3.18-dev-examples)"
  petsc_skipped=1
  for i in "${!scripts[@]}"; do
    [ "$(basename "${scripts[$i]}")" = petsc-app.sbatch ] && unset 'scripts[i]'
  done
  scripts=("${scripts[@]}")
fi

for script in "${scripts[@]}"; do
  say "$(basename "$script"): workstation run (mpirun)"
  run_workstation "$script"
done

write_slurm_conf
start_daemons
for script in "${scripts[@]}"; do
  say "$(basename "$script"): sbatch"
  run_slurm "$script"
done
say "PASS: ${#scripts[@]} script(s) ran without Slurm and under Slurm${petsc_skipped:+ (petsc-app.sbatch skipped)}"

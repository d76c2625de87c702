# shellcheck shell=bash
# Sourced by every script in jobs/: settings, rank launch, problem arguments, output names.
# The same script runs under Slurm (sbatch, salloc: ranks started by `srun --mpi=pmix`) and on a
# workstation (`bash jobs/X.sbatch`: ranks started by `mpirun`). One rank per GPU: NCCL refuses
# two ranks of one communicator on the same device.
#
# Every setting below is an environment variable with a default; override it in the shell, or
# with `sbatch --export=ALL,NAME=value,...`. jobs/README.md explains each one.
set -euo pipefail

: "${TESSERA_ROOT:?jobs/common.sh: set TESSERA_ROOT (the sourcing script does) before sourcing}"
: "${TESSERA_BUILD:=build}"        # build folder; relative paths are taken from TESSERA_ROOT
: "${TESSERA_OUT:=results}"        # JSON output folder; relative paths from the job's working dir
: "${TESSERA_BACKEND:=auto}"       # auto (GPU when present), host, gpu
: "${TESSERA_LAUNCHER:=auto}"      # auto (srun inside a Slurm job, else mpirun), srun, mpirun
: "${TESSERA_SRUN_MPI:=pmix}"      # srun --mpi plugin; Debian's OpenMPI speaks PMIx only
: "${TESSERA_SRUN_ARGS:=}"         # extra srun options, e.g. "--cpu-bind=cores"
: "${TESSERA_MPIRUN_ARGS=--bind-to none}"  # extra mpirun options (set empty for none): the ranks' host
                                   # threads need CPUs; Open MPI binds up to 2 ranks to one core each
: "${TESSERA_NTASKS:=${SLURM_NTASKS:-1}}"  # ranks of each launch (default: the whole allocation)
: "${TESSERA_ARGS:=}"              # extra driver options, appended last (word-split)

case $TESSERA_BUILD in /*) ;; *) TESSERA_BUILD=$TESSERA_ROOT/$TESSERA_BUILD ;; esac
case $TESSERA_OUT in /*) ;; *) TESSERA_OUT=$PWD/$TESSERA_OUT ;; esac

tessera_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
tessera_die() { printf 'error: %s\n' "$*" >&2; exit 2; }

# True inside a Slurm allocation, where ranks must come from srun (mpirun would not see the
# allocation's GPU binding and may start every rank on the batch host).
tessera_under_slurm() { [ -n "${SLURM_JOB_ID:-}" ]; }

tessera_launcher() {
  case $TESSERA_LAUNCHER in
    auto) if tessera_under_slurm; then echo srun; else echo mpirun; fi ;;
    srun | mpirun) echo "$TESSERA_LAUNCHER" ;;
    *) tessera_die "TESSERA_LAUNCHER='$TESSERA_LAUNCHER': use auto, srun or mpirun" ;;
  esac
}

# launch CMD ARGS...: run CMD on TESSERA_NTASKS ranks, one per GPU. The code picks each rank's GPU
# from its node-local rank among the devices it can see, so both Slurm's per-task
# CUDA_VISIBLE_DEVICES (--gpus-per-task) and a whole-node view (--gpus-per-node, mpirun) work.
launch() {
  local launcher
  launcher=$(tessera_launcher)
  if [ "$launcher" = srun ]; then
    # shellcheck disable=SC2086  # the *_ARGS variables are option lists, split on purpose
    srun --mpi="$TESSERA_SRUN_MPI" --ntasks="$TESSERA_NTASKS" $TESSERA_SRUN_ARGS "$@"
  else
    command -v mpirun >/dev/null || tessera_die "mpirun not found (install openmpi-bin, or run under Slurm)"
    # shellcheck disable=SC2086
    mpirun -np "$TESSERA_NTASKS" $TESSERA_MPIRUN_ARGS "$@"
  fi
}

# tessera_driver NAME: absolute path of a built driver, or a clear error saying how to build it.
tessera_driver() {
  local exe=$TESSERA_BUILD/drivers/$1
  [ -x "$exe" ] || tessera_die "$exe not found: build it with 'cmake --build $TESSERA_BUILD --target $1' (or set TESSERA_BUILD)"
  echo "$exe"
}

# tessera_problem_args PROBLEM: sets the array TESSERA_PROBLEM_ARGS to the driver options for a
# generated problem ("poisson3d:32", see --help of the driver) or a Matrix Market file.
# shellcheck disable=SC2034  # TESSERA_PROBLEM_ARGS is read by the sourcing script
tessera_problem_args() {
  case $1 in
    *.mtx | *.mtx.gz)
      [ -r "$1" ] || tessera_die "matrix file '$1' not readable"
      TESSERA_PROBLEM_ARGS=(--A "$1") ;;
    *) TESSERA_PROBLEM_ARGS=(--gen "$1") ;;
  esac
}

# tessera_problem_tag PROBLEM: file-name-safe short name: poisson3d:32 -> poisson3d-32,
# /data/af_shell7.mtx.gz -> af_shell7.
tessera_problem_tag() {
  local tag=${1##*/}
  tag=${tag%.gz}
  tag=${tag%.mtx}
  echo "${tag//[^A-Za-z0-9_.+-]/-}"
}

# tessera_job_tag DEFAULT_NAME: <job name>-<job id> under Slurm, <name>-local-<time> otherwise.
tessera_job_tag() {
  if tessera_under_slurm; then
    echo "${SLURM_JOB_NAME:-$1}-$SLURM_JOB_ID"
  else
    echo "$1-local-$(date +%Y%m%d-%H%M%S)"
  fi
}

# Printed at the top of every job so that a result file can be traced to its machine, build and
# GPU binding; one line per rank shows the devices that rank was given.
tessera_report_job() {
  tessera_log "host $(hostname), launcher $(tessera_launcher), ranks $TESSERA_NTASKS, backend $TESSERA_BACKEND"
  tessera_log "build $TESSERA_BUILD, output $TESSERA_OUT"
  if tessera_under_slurm; then
    tessera_log "slurm job $SLURM_JOB_ID (${SLURM_JOB_NAME:-}) on ${SLURM_JOB_NODELIST:-?}"
  fi
  # shellcheck disable=SC2016  # expanded by each rank, not here
  launch bash -c 'echo "rank ${SLURM_PROCID:-${OMPI_COMM_WORLD_RANK:-?}}" \
    "(node-local ${SLURM_LOCALID:-${OMPI_COMM_WORLD_LOCAL_RANK:-?}}) on $(hostname):" \
    "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-<all>}"'
}

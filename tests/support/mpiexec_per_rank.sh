#!/bin/sh
# Runs a program under Open MPI's mpiexec and prints each rank's output whole, rank 0 first,
# then "exit code N"; exits with mpiexec's status.
#
# Why: through mpiexec's one merged pipe, a line from rank 1 can land in the middle of a line
# from rank 0 (seen in CI), so a regex over the merged stream can miss text that was printed.
# --output-filename gives every rank its own file (stderr merged into it). The merge keeps the
# order within each stream, not between them: a program whose regex spans both must write to one.
#
# Usage: mpiexec_per_rank.sh MPIEXEC NP PROGRAM [ARGS...]
mpiexec=$1
np=$2
shift 2
dir=$(mktemp -d "${TMPDIR:-/tmp}/tessera-ranks.XXXXXX") || exit 1
"$mpiexec" -n "$np" --oversubscribe --merge-stderr-to-stdout --output-filename "$dir:nocopy" "$@"
rc=$?
rank=0
while [ "$rank" -lt "$np" ]; do
  for f in "$dir"/*/rank."$rank"/stdout; do
    [ -f "$f" ] && cat "$f"
  done
  rank=$((rank + 1))
done
rm -rf "$dir"
echo "exit code $rc"
exit "$rc"

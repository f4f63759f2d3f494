#!/bin/sh
# usage: scripts/catalogue-ratio.sh N BINARY...
#
# Runs the reference catalogue N times with each BINARY (a todoharness
# build), interleaved, as a subprocess and in process, and prints each
# run's wall time, CPU time (user+sys) and ratio = wall / (CPU / cores):
# issue 26's measure of how much of the run the cores sit idle
# (docs/performance.md, "The catalogue's waits"). Run it on a quiet machine.
set -eu
n=$1; shift
cores=$(getconf _NPROCESSORS_ONLN)
t=$(mktemp)
trap 'rm -f "$t"' EXIT
for i in $(seq "$n"); do
  for b in "$@"; do
    for m in "" "--in-process"; do
      /usr/bin/time -f "%e %U %S" -o "$t" "$b" conform $m -q >/dev/null 2>&1 || true
      read -r w u s < "$t"
      echo "$b ${m:-subprocess} $w $u $s" | awk -v c="$cores" '{printf "%-32s %-12s wall %.2f s  cpu %.2f s (%.2f+%.2f)  ratio %.2f\n", $1, $2, $3, $4+$5, $4, $5, $3/(($4+$5)/c)}'
    done
  done
done

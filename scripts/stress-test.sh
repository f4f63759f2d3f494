#!/usr/bin/env bash
# The race-enabled suite, N times in a row, optionally beside K busy loops
# (one core each, `while :; do :; done`), as the smallest machine with other
# work beside it: prints each run's result, the pass count, and the slowest
# package of all the runs. Not part of `make test`.
#
#   scripts/stress-test.sh [-n N] [-busy K] [PACKAGES...]     (make stress N=5 BUSY=2)
#
# PACKAGES default to ./... (then each run also checks gofmt and vet, as
# make test does); given, only those packages' tests run (go test -race
# -count=1). Logs are kept in $STRESS_LOGS (default: a new temporary folder).
set -uo pipefail
cd "$(dirname "$0")/.."
n=5 busy=0
while [ $# -gt 0 ]; do
	case "$1" in
	-n) n="$2"; shift 2 ;;
	-busy) busy="$2"; shift 2 ;;
	-h|--help) sed -n '2,13p' "$0"; exit 0 ;;
	-*) echo "stress-test: unknown flag $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
logs="${STRESS_LOGS:-$(mktemp -d /tmp/stress-XXXX)}"
mkdir -p "$logs"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
for _ in $(seq 1 "$busy"); do
	sh -c 'while :; do :; done' &
	pids+=($!)
done
echo "stress-test: $n run(s) of ${*:-make test} beside $busy busy loop(s) on $(nproc) CPUs; logs in $logs"
pass=0
for i in $(seq 1 "$n"); do
	log="$logs/run-$i.log"
	start=$(date +%s)
	if [ $# -eq 0 ]; then
		make test >"$log" 2>&1
	else
		go run ./scripts/testrun -race "$@" >"$log" 2>&1
	fi
	rc=$?
	took=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "run $i: PASS in ${took}s"; else echo "run $i: FAIL in ${took}s (exit $rc; $log):"; grep -E '^(FAIL|---|\s+\[FAIL\])' "$log" | head -20; fi
done
# The slowest package over every run (testrun's lines:
# [i/n] ok|FAIL PKG [(no -race)] SECONDSs  (cpu SECONDSs)).
slowest=$(grep -hE '^\[ *[0-9]+/[0-9]+\] (ok|FAIL)' "$logs"/run-*.log | awk '{
	line = $0
	sub(/ +\(cpu +[0-9.]+s\)$/, "", line); sub(/^\[[^]]*\] +(ok|FAIL) +/, "", line)
	n = split(line, f, " "); t = f[n]; sub(/s$/, "", t)
	name = f[1]; for (i = 2; i < n; i++) name = name " " f[i]
	if (t + 0 > max) { max = t + 0; pkg = name }
} END { if (pkg != "") printf "%s (%.1fs)", pkg, max }')
echo "stress-test: $pass of $n run(s) passed; the slowest package: ${slowest:-none}"
[ "$pass" -eq "$n" ]

#!/usr/bin/env bash
# Times the test tiers the way docs/performance.md reports them: each
# suite's test binary is built first (go test -c, not timed), then run once
# from its own folder under /usr/bin/time: wall seconds and peak RSS of
# the binary (with its children: the agents the suite starts).
#   scripts/tier-times.sh                       unit loader fullloop replay conformance
#   scripts/tier-times.sh unit replay           only those
#   RACE=1 scripts/tier-times.sh                the binaries built with -race
set -euo pipefail
cd "$(dirname "$0")/.."
tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=(unit loader fullloop replay conformance)
out="$(mktemp -d "${TMPDIR:-/tmp}/tier-times.XXXXXX")"
trap 'rm -rf "$out"' EXIT
race=()
[ -n "${RACE:-}" ] && race=(-race)
for t in "${tiers[@]}"; do
	go test "${race[@]}" -c -o "$out/$t.test" "./suites/$t/"
done
printf '%-12s %9s %12s\n' tier wall peak-RSS
total=0
for t in "${tiers[@]}"; do
	( cd "suites/$t" && /usr/bin/time -f "%e %M" -o "$out/$t.time" "$out/$t.test" >"$out/$t.log" 2>&1 ) ||
		{ echo "tier $t failed:"; tail -20 "$out/$t.log"; exit 1; }
	read -r wall kb <"$out/$t.time"
	printf '%-12s %8.2fs %9d KB\n' "$t" "$wall" "$kb"
	total=$(awk -v a="$total" -v b="$wall" 'BEGIN { print a + b }')
done
printf '%-12s %8.2fs\n' total "$total"

#!/bin/sh
# usage: scripts/pool-table.sh [-out FILE]
#
# Every breakage row (conformance/breakage) run with a process per case
# and with pooled agent processes (conform's default), as the specs that
# prove the two give the same failing checks run it: the tier:conformance
# table ("fails exactly these checks, with a process per case and pooled",
# every row but the fake agent's) and the conformance runner's fake-agent
# tests (TestRunFakeAgentFaults, TestRunBrokenAgents). Each writes its rows
# when $TODOHARNESS_POOL_TABLE names a folder; this script joins them into
# the Markdown table docs/performance.md shows (row, unpooled fails, pooled
# fails, same?, cases run again alone) on stdout, or in FILE. A spec fails,
# and so does this script, when a row fails other checks than it must in
# either mode. Without -race: a few minutes on 2 cores.
set -eu
out=
while [ $# -gt 0 ]; do
  case $1 in
    -out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "pool-table: unknown argument $1 (see -h)" >&2; exit 2 ;;
  esac
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/pool-table.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export TODOHARNESS_POOL_TABLE="$dir"
go test -count=1 ./suites/conformance/ -run TestConformance -ginkgo.focus 'breaking one behaviour' >&2
go test -count=1 ./conformance/ -run 'TestRunFakeAgentFaults|TestRunBrokenAgents' >&2
{
  printf '| row | unpooled fails | pooled fails | same? | pooled: cases run again alone |\n|---|---|---|---|---|\n'
  cat "$dir/suite.md" "$dir/fake.md" "$dir/fake-run1.md"
} >"$dir/table.md"
if [ -n "$out" ]; then cp "$dir/table.md" "$out"; else cat "$dir/table.md"; fi

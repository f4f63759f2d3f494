#!/bin/sh
# usage: scripts/agent-rates.sh [-n N] [-seed S] [-peers DIR] [-bin BINARY] [-out DIR] [-pools] [PRESET...]
#
# What a run against each real agent costs (issue 43; docs/performance.md,
# "Real agents"): for each PRESET in turn (default: opencode gemini claude
# codex), one at a time, never two agents at once,
#   - the built-in catalogue: wall and CPU time (user+sys, the agent's
#     processes included: /usr/bin/time counts every child waited for);
#   - an exploration of N generated scenarios (default 16) from seed S
#     (default 1), --no-builtin, shrinks bounded to one second: wall and
#     CPU of the whole command, and from its explore.json the scenarios'
#     own wall time, rate and CPU a scenario (shrinks excluded; "-" for a
#     todoharness that does not report them);
#   - the floor: the CPU one session costs a warm pooled process (the
#     median of the pooled sessions after their process's first, read
#     from /proc), of the catalogue and of the exploration, and the CPU a
#     case / a scenario divided by it (the report's cpuToFloor); "-" with
#     the report's reason where there is none (the pool off, sessions
#     served at once, no /proc);
#   - the CPU a pooled case / scenario cost the agent (the report's
#     pooledCpuMs: every pooled process's whole life, start-ups included,
#     and the fresh processes that ran pooled failures again alone, over
#     the cases that ran pooled; the runner's CPU and the cases with a
#     process of their own left out) and its ratio to the floor
#     (pooledToFloor: issue 43's goal is 1.5 at most); "-" with the
#     report's reason where it was not read.
# The agents come from make peers' cache (-peers, default .cache/peers:
# DIR/PRESET/node_modules/.bin is put first on PATH), BINARY is the
# todoharness to run (default: go build of this checkout into the -out
# folder). Reports land in -out (default: a new temporary folder). Needs
# jq and GNU time (/usr/bin/time). On a shared machine the wall times
# follow the load (the load average is printed before each run); compare
# the CPU times.
#
# With -pools, only the built-in catalogue, per PRESET: with a process per
# case (--pool off), pooled with every pooled failure run again alone
# (--rerun-pooled every; skipped by a todoharness without it), then pooled
# as by default: the load average before each run, wall, CPU, what the
# pool served (its processes, their cases, the cases run again alone, the
# cases not run again as a case of the run confirmed their failures
# alone), verdict, the checks that failed (FLAKY ones marked) and whether
# each pooled mode failed what --pool off did (issue 43).
set -eu
n=16 seed=1 peers=.cache/peers bin= out= pools=
while [ $# -gt 0 ]; do
  case $1 in
    -n) n=$2; shift 2 ;;
    -seed) seed=$2; shift 2 ;;
    -peers) peers=$2; shift 2 ;;
    -bin) bin=$2; shift 2 ;;
    -out) out=$2; shift 2 ;;
    -pools) pools=1; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "agent-rates: unknown flag $1 (see -h)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- opencode gemini claude codex
for tool in jq /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "agent-rates: $tool is needed" >&2; exit 2; }
done
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/agent-rates.XXXXXX")
mkdir -p "$out"
out=$(cd "$out" && pwd)
peers=$(cd "$peers" && pwd)
if [ -z "$bin" ]; then
  bin=$out/todoharness
  go build -o "$bin" ./cmd/todoharness
fi
t=$out/time.txt
# timing is the last command's wall, user and sys seconds: the last line
# of $t (GNU time writes "Command exited with non-zero status N" first).
timing() { tail -n 1 "$t"; }
echo "agent-rates: $($bin --version), $(getconf _NPROCESSORS_ONLN) CPUs, reports in $out"
loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }
# floor is what report $1 (conform's JSON or explore.json) says of the
# floor: "floor ms (sessions), ratio x", or "- (why)".
floor() {
  jq -r 'if (.floorSessions // 0) > 0 then "\(.floorCpuMs // 0) ms (median of \(.floorSessions)), \(.cpuToFloor // "-")x"
    else "- (\(.floorNote // "not reported" | gsub("[|\n]"; " ")))" end' "$1" 2>/dev/null || echo '?'
}
# pooled is what report $1 says a pooled case / scenario cost the agent:
# "ms, ratio x" or "- (why)".
pooled() {
  jq -r 'if (.pooledCpuMs // 0) > 0 then "\(.pooledCpuMs) ms, \(.pooledToFloor // "-")x"
    else "- (\(.pooledCpuNote // "not reported" | gsub("[|\n]"; " ")))" end' "$1" 2>/dev/null || echo '?'
}
# failed is the checks report $1 fails, FLAKY ones marked.
failed() {
  jq -r '[.checks[] | select(.outcome == "fail" or .outcome == "flaky") | .id + (if .outcome == "flaky" then " (FLAKY)" else "" end)] | join(", ")' "$1" 2>/dev/null || echo '?'
}
if [ -n "$pools" ]; then
  echo "| preset | --pool | load before | wall | CPU | pooled processes, their cases, cases run again alone, not run again (known) | verdict | failed checks | same as off? |"
  modes="off on"
  ! "$bin" conform --help 2>&1 | grep -q -- --rerun-pooled || modes="off every on"
  echo "|---|---|---|---|---|---|---|---|---|"
else
  echo "| preset | agent | catalogue: wall, CPU, verdict | catalogue: CPU a case, floor, ratio | catalogue: a pooled case's agent CPU, to the floor | explore $n (seed $seed): wall, CPU | scenarios: wall, a minute, CPU a scenario | scenarios: floor, ratio | scenarios: a pooled scenario's agent CPU, to the floor |"
  echo "|---|---|---|---|---|---|---|---|---|"
fi
base=$PATH
for p in "$@"; do
  dir=$peers/$p
  [ -d "$dir/node_modules/.bin" ] || { echo "agent-rates: $dir/node_modules/.bin: not installed (make peers, or -peers DIR)" >&2; exit 2; }
  # The agent's own lookup: its executable first on PATH, as make peers runs it.
  PATH=$dir/node_modules/.bin:$base
  export PATH
  if [ -n "$pools" ]; then
    for mode in $modes; do
      load=$(loadavg)
      case $mode in
        every) flags="--pool on --rerun-pooled every" label="on, --rerun-pooled every" ;;
        *) flags="--pool $mode" label=$mode ;;
      esac
      echo "agent-rates: $p: catalogue, $flags (load average $load)" >&2
      # shellcheck disable=SC2086 # flags are words
      /usr/bin/time -f '%e %U %S' -o "$t" "$bin" conform --preset "$p" $flags -q --json "$out/$p-$mode.json" >/dev/null 2>"$out/$p-$mode.err" || true
      failed "$out/$p-$mode.json" >"$out/$p-$mode.failed"
      same=
      [ "$mode" = off ] || { same=no; ! cmp -s "$out/$p-off.failed" "$out/$p-$mode.failed" || same=yes; }
      pooled=$(jq -r '"\(.poolProcesses // 0), \(.pooledCases // 0), \(.poolRanAlone // 0), \((.poolKnown // []) | length)"' "$out/$p-$mode.json" 2>/dev/null || echo '?')
      timing | awk -v p="$p" -v m="$label" -v l="$load" -v v="$(jq -r .verdict "$out/$p-$mode.json" 2>/dev/null || echo '?')" \
        -v f="$(cat "$out/$p-$mode.failed")" -v s="$same" -v o="$pooled" '{printf "| %s | %s | %s | %.1f s | %.1f s | %s | %s | %s | %s |\n", p, m, l, $1, $2+$3, o, v, f, s}'
    done
    continue
  fi
  echo "agent-rates: $p: catalogue (load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'))" >&2
  /usr/bin/time -f '%e %U %S' -o "$t" "$bin" conform --preset "$p" -q --json "$out/$p-catalogue.json" >/dev/null 2>"$out/$p-catalogue.err" || true
  read -r cw cu cs <<EOF
$(timing)
EOF
  agent=$(jq -r '(.agentInfo.name // .agent) + " " + (.agentInfo.version // "")' "$out/$p-catalogue.json" 2>/dev/null || echo '?')
  verdict=$(jq -r '.verdict' "$out/$p-catalogue.json" 2>/dev/null || echo '?')
  echo "agent-rates: $p: explore $n (load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'))" >&2
  rm -rf "$out/$p-explore"
  /usr/bin/time -f '%e %U %S' -o "$t" "$bin" conform --preset "$p" --no-builtin --explore "$n" --seed "$seed" --shrink-for 1s \
    --out "$out/$p-explore" -q >/dev/null 2>"$out/$p-explore.err" || true
  read -r ew eu es <<EOF
$(timing)
EOF
  rates=$(jq -r '"\(.scenarios) in \(.scenariosMs // "-") ms, \(.scenariosPerMinute // "-"), \(.cpuPerScenarioMs // "-") ms"' \
    "$out/$p-explore/explore.json" 2>/dev/null || echo '? (no explore.json)')
  cfloor="$(jq -r '"\(.cpuPerCaseMs // "-") ms"' "$out/$p-catalogue.json" 2>/dev/null || echo '?'), $(floor "$out/$p-catalogue.json")"
  efloor=$(floor "$out/$p-explore/explore.json")
  printf '| %s | %s | %.1f s, %.1f s, %s | %s | %s | %.1f s, %.1f s | %s | %s | %s |\n' "$p" "$agent" "$cw" "$(echo "$cu $cs" | awk '{print $1+$2}')" \
    "$verdict" "$cfloor" "$(pooled "$out/$p-catalogue.json")" "$ew" "$(echo "$eu $es" | awk '{print $1+$2}')" "$rates" "$efloor" \
    "$(pooled "$out/$p-explore/explore.json")"
done

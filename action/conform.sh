#!/usr/bin/env bash
# The conformance step of the GitHub Action (action.yml): runs
# `todoharness conform` with GitHub annotations and every report, adds the
# Markdown summary to the job's summary ($GITHUB_STEP_SUMMARY), and writes
# the verdict, the exit status and the report folder to $GITHUB_OUTPUT. It
# exits 0 whatever the verdict (only a bad input fails it): the action's
# last step fails the job, after the reports are uploaded.
#   INPUT_AGENT     the agent's command line (--agent), or
#   INPUT_PRESET    a preset (--preset)
#   INPUT_BASELINE  an expected-failures baseline (--expected-failures)
#   INPUT_EXPLORE   an exploration budget: N scenarios (--explore N) or a
#                   duration such as 10m (--explore-for 10m)
#   INPUT_FLAGS     more flags, split as a shell would (quotes kept, nothing
#                   expanded or run)
#   TODOHARNESS     the binary (default: todoharness on PATH)
set -euo pipefail
: "${RUNNER_TEMP:?RUNNER_TEMP is not set: this runs in a GitHub Actions job}"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set: this runs in a GitHub Actions job}"
: "${GITHUB_STEP_SUMMARY:?GITHUB_STEP_SUMMARY is not set: this runs in a GitHub Actions job}"
todoharness="${TODOHARNESS:-todoharness}"

bad() {
	echo "::error title=todoharness action::$1"
	exit 2
}

out="$RUNNER_TEMP/todoharness-conform"
rm -rf "$out"
mkdir -p "$out"
args=(conform -q --format github
	--json "$out/conform.json" --junit "$out/conform.xml" --html "$out/conform.html"
	--summary-md "$out/summary.md" --out "$out/transcripts")
if [ -n "${INPUT_AGENT:-}" ] && [ -n "${INPUT_PRESET:-}" ]; then
	args+=(--preset "$INPUT_PRESET" --agent "$INPUT_AGENT")
elif [ -n "${INPUT_AGENT:-}" ]; then
	args+=(--agent "$INPUT_AGENT")
elif [ -n "${INPUT_PRESET:-}" ]; then
	args+=(--preset "$INPUT_PRESET")
fi
if [ -n "${INPUT_BASELINE:-}" ]; then
	args+=(--expected-failures "$INPUT_BASELINE")
fi
explore="${INPUT_EXPLORE:-}"
if [[ "$explore" =~ ^[0-9]+$ ]]; then
	args+=(--explore "$explore")
elif [[ "$explore" =~ ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$ ]]; then
	args+=(--explore-for "$explore")
elif [ -n "$explore" ]; then
	bad "explore: \"${explore//[$'\r\n%']/ }\" is neither a number of scenarios (200) nor a duration (10m, 1h30m)"
fi
if [ -n "${INPUT_FLAGS:-}" ]; then
	# xargs splits as a shell does (single and double quotes, backslash) and
	# expands nothing: no $VAR, no $(command).
	split="$RUNNER_TEMP/todoharness-flags"
	printf '%s' "$INPUT_FLAGS" | xargs printf '%s\0' >"$split" 2>"$split.err" ||
		bad "flags: cannot split them as a shell would: $(tr '\r\n%' '   ' <"$split.err")"
	while IFS= read -r -d '' f; do
		args+=("$f")
	done <"$split"
	rm -f "$split" "$split.err"
fi

echo "todoharness ${args[*]}"
status=0
"$todoharness" "${args[@]}" || status=$?

# The verdict is the exit status's (docs/ci.md, "The exit status").
case "$status" in
0) verdict=PASS ;;
1) verdict=FAIL ;;
3) verdict=INCOMPLETE ;;
130) verdict=INTERRUPTED ;;
*) verdict=ERROR ;;
esac

if [ -s "$out/summary.md" ]; then
	cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
else
	{
		echo "### todoharness conform: ⚠️ ${verdict}"
		echo
		echo "The run did not start (exit ${status}): a bad flag or input, or the agent could not be started. The job's log says why."
	} >>"$GITHUB_STEP_SUMMARY"
fi
{
	echo "verdict=$verdict"
	echo "exit-code=$status"
	echo "report-dir=$out"
} >>"$GITHUB_OUTPUT"

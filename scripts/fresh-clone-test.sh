#!/usr/bin/env bash
# Proves the README's set-up on a fresh clone: clones HEAD of this repository
# into an empty temporary folder (no sibling folders, so nothing beside the
# checkout can be read), unsets TODOHARNESS_SPEC_DIR, and runs `make demo`
# and `make test` there. Uncommitted changes are not part of the clone.
# The Go module and build caches are the user's own, as on any machine.
#   scripts/fresh-clone-test.sh            (.ci/run calls it after make test)
#   KEEP=1 scripts/fresh-clone-test.sh     (keep the clone for a look)
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/todoharness-fresh.XXXXXX")"
if [ -z "${KEEP:-}" ]; then
	trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
fi
clone="$tmp/todoharness"
git clone --quiet --no-hardlinks "$src" "$clone"
cd "$clone"
echo "fresh clone of $(git rev-parse --short HEAD) in $clone"
others="$(ls -A "$tmp" | grep -vx todoharness || true)"
if [ -n "$others" ]; then
	echo "fresh-clone-test: the clone has siblings in $tmp: $others" >&2
	exit 1
fi
unset TODOHARNESS_SPEC_DIR
make demo
make test
echo "fresh-clone-test: make demo and make test pass on a fresh clone"

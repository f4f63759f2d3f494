#!/usr/bin/env bash
# make release-check (CI: .ci/run, after make test): proves the release
# tooling without publishing anything.
#  1. goreleaser check: .goreleaser.yaml is valid for the pinned GoReleaser.
#  2. A snapshot release (goreleaser release --snapshot --skip=publish): the
#     six binaries (linux, darwin, windows on amd64 and arm64), their
#     archives and checksums.txt, in dist/. The checksums are verified, and
#     this machine's binary says which build it is: --version names the
#     snapshot's version, HEAD's commit and its date.
#  3. The npm packages (scripts/npmpack) built from those binaries, packed
#     with npm pack, installed from the tarballs into an empty folder with
#     the registry unreachable (127.0.0.1:9), and run there:
#     `npx todoharness --version` and `npx todoharness conform` (the
#     catalogue against the built-in reference agent) must PASS.
# Each step prints its time. Needs git, Go (the module proxy, for GoReleaser
# in tools/goreleaser/go.mod the first time) and node with npm. GORELEASER names the
# goreleaser binary (make release-check builds bin/goreleaser).
#
# It runs in a fresh clone of HEAD in a temporary folder (uncommitted changes
# are not part of it), as fresh-clone-test.sh does: GoReleaser reads the
# commit and its date from git, and wants a remote (the clone's origin).
set -euo pipefail
cd "$(dirname "$0")/.."
GORELEASER="$(cd "$(dirname "${GORELEASER:-bin/goreleaser}")" && pwd)/$(basename "${GORELEASER:-bin/goreleaser}")"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/todoharness-release.XXXXXX")"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
git clone --quiet --no-hardlinks "$PWD" "$tmp/todoharness"
cd "$tmp/todoharness"
root="$PWD"
# The commit the snapshot is built from.
commit="$(git rev-parse HEAD)"
echo "release-check: a fresh clone of ${commit:0:12} in $root"

step_start=$SECONDS
step() {
	echo "release-check: $1 ($((SECONDS - step_start)) s)"
	step_start=$SECONDS
}
fail() {
	echo "release-check: FAIL: $*" >&2
	exit 1
}

"$GORELEASER" check
step "goreleaser check passed"

# -p 2: at most two binaries compile at once (a CI runner's two cores, and
# memory: each link of the binary takes about 0.5 GB).
log="$(mktemp "${TMPDIR:-/tmp}/goreleaser.XXXXXX")"
"$GORELEASER" release --snapshot --clean --skip=publish --parallelism 2 >"$log" 2>&1 || {
	tail -n 40 "$log" >&2
	fail "goreleaser release --snapshot failed (the whole log: $log)"
}
mv "$log" dist/goreleaser.log
step "snapshot release built in dist/"

version="$(node -e 'process.stdout.write(require("./dist/metadata.json").version)')"
built="$(node -e 'process.stdout.write(require("./dist/metadata.json").commit)')"
[ "$built" = "$commit" ] || fail "the snapshot was built from $built, not HEAD $commit (a commit during the build?)"
# GoReleaser's CommitDate: the committer date in UTC, RFC 3339.
date="$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD)"
n=0
for os in linux darwin windows; do
	for arch in amd64 arm64; do
		ext=tar.gz
		[ "$os" = windows ] && ext=zip
		a="dist/todoharness_${version}_${os}_${arch}.${ext}"
		[ -f "$a" ] || fail "no archive $a"
		grep -q " $(basename "$a")\$" dist/checksums.txt || fail "$a is not in dist/checksums.txt"
		n=$((n + 1))
	done
done
(cd dist && sha256sum --quiet -c checksums.txt) || fail "dist/checksums.txt does not match the archives"
step "$n archives, their checksums verified"

goos="$(go env GOOS)"
goarch="$(go env GOARCH)"
bin="$(node -e '
const [goos, goarch] = process.argv.slice(1);
const a = require("./dist/artifacts.json").find((a) => a.type === "Binary" && a.goos === goos && a.goarch === goarch);
process.stdout.write(a ? a.path : "");' "$goos" "$goarch")"
[ -n "$bin" ] || fail "no binary for $goos/$goarch in dist/artifacts.json"
want="todoharness v${version} (commit ${commit:0:12}, ${date})"
got="$("$bin" --version)"
[ "$got" = "$want" ] || fail "$bin --version says \"$got\", want \"$want\""
step "$bin --version: $got"

# npm: the packages from the release's binaries, packed and installed with
# no registry.
go run ./scripts/npmpack -dist dist -out dist/npm >/dev/null
tarballs="$root/dist/npm-tarballs"
mkdir -p "$tarballs"
for d in dist/npm/*/; do
	(cd "$d" && npm pack --silent --pack-destination "$tarballs" >/dev/null)
done
step "npm packages packed: $(ls "$tarballs" | tr '\n' ' ')"

case "$goos/$goarch" in
linux/amd64) plat=linux-x64 ;;
linux/arm64) plat=linux-arm64 ;;
darwin/amd64) plat=darwin-x64 ;;
darwin/arm64) plat=darwin-arm64 ;;
*) fail "no npm platform package for $goos/$goarch here" ;;
esac
empty="$tmp/npm-check"
mkdir "$empty"
cd "$empty"
# The registry is unreachable and the cache empty: nothing can come from the
# network, so what runs is what the tarballs hold. The other platforms'
# optional dependencies cannot be fetched and are skipped, as npm skips an
# optional dependency that does not fit.
export npm_config_registry=http://127.0.0.1:9/
export npm_config_cache="$empty/.npm-cache"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
echo '{"name":"npm-check","version":"0.0.0","private":true}' >package.json
npm install --no-save --fetch-retries=0 --fetch-timeout=5000 \
	"$tarballs/todoharness-cli-${plat}-${version}.tgz" "$tarballs/todoharness-${version}.tgz" >npm-install.log 2>&1 || {
	cat npm-install.log >&2
	fail "npm install of the tarballs failed"
}
[ -x "node_modules/@todoharness/cli-${plat}/bin/todoharness" ] || fail "the $plat binary is not installed"
grep -rq '"scripts"' node_modules/todoharness/package.json node_modules/@todoharness/*/package.json && fail "an installed package has scripts"
step "installed from the tarballs with the registry unreachable"

got="$(npx --no-install todoharness --version)"
[ "$got" = "$want" ] || fail "npx todoharness --version says \"$got\", want \"$want\""
step "npx todoharness --version: $got"

status=0
npx --no-install todoharness conform -q --json conform.json >conform.txt 2>&1 || status=$?
verdict="$(node -e 'process.stdout.write(require("./conform.json").verdict)' 2>/dev/null || true)"
if [ "$status" != 0 ] || [ "$verdict" != PASS ]; then
	tail -n 30 conform.txt >&2
	fail "npx todoharness conform: exit $status, verdict \"$verdict\", want 0 and PASS"
fi
step "npx todoharness conform: exit 0, verdict PASS"
echo "release-check: passed"

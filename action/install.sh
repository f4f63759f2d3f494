#!/usr/bin/env bash
# Installs a todoharness release for the GitHub Action (action.yml,
# setup/action.yml): downloads the archive of this runner's platform and the
# release's checksums.txt, verifies the archive's SHA-256 against it, unpacks
# the binary into $RUNNER_TEMP and puts it on $GITHUB_PATH.
#   INPUT_VERSION   a release (v1.2.0 or 1.2.0), or latest
#   TODOHARNESS_RELEASES  where releases are downloaded from (default
#                   https://github.com/todoharness/todoharness/releases;
#                   a test points it at a server on 127.0.0.1)
# Writes the version installed to $GITHUB_OUTPUT (version=...).
set -euo pipefail
releases="${TODOHARNESS_RELEASES:-https://github.com/todoharness/todoharness/releases}"
version="${INPUT_VERSION:-latest}"
: "${RUNNER_TEMP:?RUNNER_TEMP is not set: this runs in a GitHub Actions job}"
: "${GITHUB_PATH:?GITHUB_PATH is not set: this runs in a GitHub Actions job}"

case "${RUNNER_OS:-Linux}" in
Linux) os=linux ext=tar.gz exe=todoharness ;;
macOS) os=darwin ext=tar.gz exe=todoharness ;;
Windows) os=windows ext=zip exe=todoharness.exe ;;
*) echo "::error title=todoharness::no todoharness release for RUNNER_OS=${RUNNER_OS}" && exit 2 ;;
esac
case "${RUNNER_ARCH:-X64}" in
X64) arch=amd64 ;;
ARM64) arch=arm64 ;;
*) echo "::error title=todoharness::no todoharness release for RUNNER_ARCH=${RUNNER_ARCH}" && exit 2 ;;
esac

if [ "$version" = latest ]; then
	# The latest release's page is a redirect to .../tag/vX.Y.Z.
	url="$(curl -sSfL --retry 3 -o /dev/null -w '%{url_effective}' "$releases/latest")"
	version="${url##*/}"
fi
version="${version#v}"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
	echo "::error title=todoharness::version \"${INPUT_VERSION}\" is not a release (give one like v1.2.0, or latest)"
	exit 2
fi

archive="todoharness_${version}_${os}_${arch}.${ext}"
dir="$RUNNER_TEMP/todoharness-$version"
rm -rf "$dir"
mkdir -p "$dir"
curl -sSfL --retry 3 -o "$dir/$archive" "$releases/download/v$version/$archive"
curl -sSfL --retry 3 -o "$dir/checksums.txt" "$releases/download/v$version/checksums.txt"
want="$(awk -v f="$archive" '$2 == f { print $1 }' "$dir/checksums.txt")"
if command -v sha256sum >/dev/null 2>&1; then
	got="$(sha256sum "$dir/$archive" | awk '{ print $1 }')"
else
	got="$(shasum -a 256 "$dir/$archive" | awk '{ print $1 }')"
fi
if [ -z "$want" ] || [ "$got" != "$want" ]; then
	echo "::error title=todoharness::$archive: SHA-256 $got does not match the release's checksums.txt (${want:-no entry})"
	exit 1
fi
if [ "$ext" = zip ]; then
	unzip -q -o "$dir/$archive" "$exe" -d "$dir"
else
	tar -xzf "$dir/$archive" -C "$dir" "$exe"
fi
echo "$dir" >>"$GITHUB_PATH"
"$dir/$exe" --version
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	echo "version=$version" >>"$GITHUB_OUTPUT"
fi

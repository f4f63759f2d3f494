#!/bin/sh
# Peak memory of `todoharness mock serve` fed 9 request bodies of 20 MB of
# control bytes (not JSON), for docs/performance.md (never run by the
# tests). Usage: mock-serve.sh BINARY SCRIPT.yaml
bin=$1 script=$2
tmp=$(mktemp -d)
head -c 20000000 /dev/zero | tr '\0' '\1' > "$tmp/body"
"$bin" mock serve --script "$script" > "$tmp/url" &
pid=$!
while [ ! -s "$tmp/url" ]; do sleep 0.1; done
url=$(head -n 1 "$tmp/url")
for i in 1 2 3 4 5 6 7 8 9; do
	curl -s -o /dev/null --data-binary @"$tmp/body" "$url/chat/completions"
done
grep VmHWM "/proc/$pid/status"
kill "$pid"
wait "$pid" 2>/dev/null
rm -rf "$tmp"

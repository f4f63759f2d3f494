package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/todoharness/todoharness/driver"
)

// environ is what a command sees of the process it runs in: its variables
// and its working directory. Commands run by Main or Run see the real ones;
// InProcessAgent gives a command the ones of the process it stands in for,
// so that several agents can run in one process, each with its own.
type environ struct {
	lookup func(string) (string, bool)
	// dir is the working directory relative paths are resolved against
	// ("" for the process's own).
	dir string
	// exit ends the process with a status (nil: os.Exit).
	exit func(code int)
	// home is the process's home folder, asked when HOME is unset (nil:
	// not the process's environment, which has no other home).
	home func() (string, error)
	// idleReport is an in-process agent's idle report
	// (driver.ProcIO.IdleReport; nil: nobody reads one).
	idleReport io.Writer
}

type environKey struct{}

// withEnviron returns ctx carrying e for the commands run with it.
func withEnviron(ctx context.Context, e environ) context.Context {
	return context.WithValue(ctx, environKey{}, e)
}

// environOf returns the environ ctx carries: the process's own by default.
func environOf(ctx context.Context) environ {
	if e, ok := ctx.Value(environKey{}).(environ); ok && e.lookup != nil {
		return e
	}
	return environ{lookup: os.LookupEnv, home: os.UserHomeDir}
}

// getenv returns the variable k, "" when unset.
func (e environ) getenv(k string) string {
	v, _ := e.lookup(k)
	return v
}

// abs resolves a path given on the command line against the working
// directory.
func (e environ) abs(p string) (string, error) {
	if p == "" || filepath.IsAbs(p) || e.dir == "" {
		return filepath.Abs(p)
	}
	return filepath.Join(e.dir, p), nil
}

// path resolves a path flag against the working directory, leaving ""
// (not given) as it is.
func (e environ) path(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	return e.abs(p)
}

// exitFunc is how a command ends its process at once (the agent's
// crash-on-prompt fault).
func (e environ) exitFunc() func(int) {
	if e.exit != nil {
		return e.exit
	}
	return os.Exit
}

// userHome is $HOME, else the process's home folder (for the process's own
// environment only: an in-process agent without HOME has none).
func (e environ) userHome() (string, error) {
	if h := e.getenv("HOME"); h != "" {
		return h, nil
	}
	if e.home == nil {
		return "", errors.New("$HOME is not defined")
	}
	return e.home()
}

// InProcessAgent runs the todoharness command line of p.Args (p.Args[0] is
// the program) as conformance's in-process agent (driver.Target's
// InProcess): in this process, on p's stdio, with p's environment and
// working directory in place of the process's. It is meant for `agent`:
// the conformance suites run the reference agent this way, many at once;
// a command that reads the process's state elsewhere (chat's terminal, a
// signal) still reads the real one.
func InProcessAgent(ctx context.Context, p driver.ProcIO) int {
	args := []string{}
	if len(p.Args) > 1 {
		args = p.Args[1:]
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Exit is the process ending at once: its stdout closes, its work is
	// cancelled, and Run's status is replaced by the exit's.
	var (
		exited atomic.Bool
		code   atomic.Int32
	)
	exit := func(c int) {
		if exited.CompareAndSwap(false, true) {
			code.Store(int32(c))
			if cl, ok := p.Stdout.(io.Closer); ok {
				_ = cl.Close()
			}
			cancel()
		}
	}
	ctx = withEnviron(ctx, environ{lookup: p.LookupEnv, dir: p.Dir, exit: exit, idleReport: p.IdleReport})
	status := Run(ctx, args, p.Stdin, p.Stdout, p.Stderr)
	if exited.Load() {
		return int(code.Load())
	}
	return status
}

package cli

import (
	"context"
	"strings"
	"testing"
)

// A command line that names a top-level command runs with that command
// alone in the tree: what it prints and its status are those of the whole
// tree, for its help, a bad flag, a stray argument and a nested command.
func TestOneCommandRunsAsInTheWholeTree(t *testing.T) {
	names := map[string]bool{}
	for _, c := range NewRootCmd().Commands() {
		names[c.Name()] = true
	}
	for _, s := range subcommandList() {
		if got := s.build().Name(); got != s.name {
			t.Errorf("subcommandList names %q a command named %q", s.name, got)
		}
		delete(names, s.name)
		for _, args := range [][]string{{s.name, "--help"}, {s.name, "--no-such-flag"}, {s.name, "stray", "--help"}, {s.name, "show", "--help"}, {"help", s.name}} {
			var out1, err1, out2, err2 strings.Builder
			code1 := Run(context.Background(), args, strings.NewReader(""), &out1, &err1)
			code2 := runRoot(context.Background(), NewRootCmd(), args, strings.NewReader(""), &out2, &err2)
			if code1 != code2 || out1.String() != out2.String() || err1.String() != err2.String() {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; in the whole tree exit %d, stdout %q, stderr %q",
					args, code1, out1.String(), err1.String(), code2, out2.String(), err2.String())
			}
		}
	}
	for n := range names {
		if n != "help" && n != "completion" {
			t.Errorf("command %q is missing from subcommandList", n)
		}
	}
}

// Starting one command builds no other: `todoharness agent`, which the
// in-process reference agent runs for each case, allocates far less than
// the whole tree (it allocated as much before: every command's flags,
// help and completions were built for it).
func TestOneCommandBuildsNoOther(t *testing.T) {
	run := func(args ...string) float64 {
		return testing.AllocsPerRun(5, func() {
			var out, errw strings.Builder
			Run(context.Background(), args, strings.NewReader(""), &out, &errw)
		})
	}
	one, whole := run("agent", "--help"), run("--help")
	if one*3 > whole {
		t.Errorf("agent --help: %.0f allocations, the whole tree's --help %.0f: more than a third of it", one, whole)
	}
}

package cli

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/driver"
)

// conform, snapshot run, record and replay take the agent with one set of
// flags, of one type each (--name where there are reports to label).
func TestTargetFlagsAreOneSet(t *testing.T) {
	root := NewRootCmd()
	want := map[string]string{"agent": "string", "preset": "string", "env": "stringArray", "file": "stringArray", "clean-env": "bool"}
	for _, path := range [][]string{{"conform"}, {"snapshot", "run"}, {"record"}, {"replay"}} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		for name, typ := range want {
			fl := cmd.Flags().Lookup(name)
			if fl == nil || fl.Value.Type() != typ {
				t.Errorf("%s --%s: %v, want a %s flag", strings.Join(path, " "), name, fl, typ)
			}
		}
		hasName := cmd.Flags().Lookup("name") != nil
		if hasName != (path[0] == "conform" || path[0] == "snapshot") {
			t.Errorf("%s has --name: %v", strings.Join(path, " "), hasName)
		}
	}
}

// buildTarget is the one place an agent under test is put together from
// the flags: a preset's wiring with --agent, --env, --file and --name on
// top; the reference agent (a process, or in this process); an --agent
// command line.
func TestBuildTarget(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	claude, err := driver.PresetByName("claude")
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir() + "/a.toml"
	if err := os.WriteFile(src, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("the reference agent", func(t *testing.T) {
		got, err := buildTarget(targetFlags{env: []string{"A=b"}, cleanEnv: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Command, ReferenceAgentArgs(exe)) || !got.IdleReport || got.InProcess != nil ||
			!strings.HasPrefix(got.Name, "reference agent (") || !slices.Equal(got.Env, []string{"A=b"}) || !got.CleanEnv {
			t.Errorf("%+v", got)
		}
	})
	t.Run("in process, labelled", func(t *testing.T) {
		got, err := buildTarget(targetFlags{inProcess: true, agentLabel: "mine"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.InProcess == nil || got.Name != "mine" || got.Command[0] != "todoharness" {
			t.Errorf("%+v", got)
		}
	})
	t.Run("an --agent command line with a file", func(t *testing.T) {
		got, err := buildTarget(targetFlags{agent: "my-agent --acp 'a b'", files: []string{src + ":conf/a.toml"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Command, []string{"my-agent", "--acp", "a b"}) || got.Name != "" || got.IdleReport ||
			len(got.Files) != 1 || got.Files[0].Dest != "conf/a.toml" {
			t.Errorf("%+v", got)
		}
	})
	t.Run("a preset with --agent and --env on top", func(t *testing.T) {
		got, err := buildTarget(targetFlags{preset: "claude", agent: "/opt/claude-acp", env: []string{"X=1"}}, &claude)
		if err != nil {
			t.Fatal(err)
		}
		base := claude.Target()
		if !slices.Equal(got.Command, []string{"/opt/claude-acp"}) || got.Name != "claude preset, /opt/claude-acp" ||
			!slices.Equal(got.Env, append(base.Env, "X=1")) || !reflect.DeepEqual(got.Files, base.Files) || got.Home != base.Home {
			t.Errorf("%+v", got)
		}
	})
	for _, tc := range []struct {
		name    string
		flags   targetFlags
		preset  *driver.Preset
		wantErr string
	}{
		{"in process with a preset", targetFlags{inProcess: true}, &claude, "--in-process runs the built-in reference agent: not with --preset"},
		{"in process with --agent", targetFlags{inProcess: true, agent: "x"}, nil, "--in-process runs the built-in reference agent: not with --agent"},
		{"an unbalanced quote", targetFlags{agent: "x 'y"}, nil, "quote"},
		{"a file flag without a destination", targetFlags{files: []string{src}}, nil, src},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := buildTarget(tc.flags, tc.preset); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

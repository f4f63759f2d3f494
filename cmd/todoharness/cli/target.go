package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/todoharness/todoharness/driver"
)

// targetFlags say which agent runs and how it is wired: --agent, --preset,
// --env, --file, --clean-env (conform, snapshot run, record, replay), --name
// (conform, snapshot run) and --in-process (conform). One definition
// (register), one buildTarget, which peers uses for its presets too.
type targetFlags struct {
	agent, preset string
	env, files    []string
	cleanEnv      bool
	agentLabel    string
	inProcess     bool
}

// targetHelp is how a command words the help of its target flags.
type targetHelp struct {
	// where a --file goes, and the note after the preset names.
	fileWhere, presetNote string
	// envNote and cleanEnvNote end the help of --env and --clean-env.
	envNote, cleanEnvNote string
	// name: the command has --name.
	name bool
}

// register defines the target flags on f (--in-process is conform's own).
func (t *targetFlags) register(f *pflag.FlagSet, h targetHelp) {
	f.StringVar(&t.agent, "agent", "", "agent command line (default: the built-in reference agent)")
	f.StringArrayVar(&t.env, "env", nil, "K=V added to the agent's environment (templated; repeatable)"+h.envNote)
	f.StringArrayVar(&t.files, "file", nil, "SRC:DEST template file written into "+h.fileWhere+" when DEST starts with ~/ (repeatable)")
	f.StringVar(&t.preset, "preset", "", "wiring for a known agent: "+strings.Join(driver.PresetNames(), ", ")+h.presetNote)
	f.BoolVar(&t.cleanEnv, "clean-env", false, "start the agent with only --env (plus PATH, HOME, TMPDIR)"+h.cleanEnvNote)
	if h.name {
		f.StringVar(&t.agentLabel, "name", "", "label of the agent in reports")
	}
}

// presetOf is the --preset (nil: none).
func (t *targetFlags) presetOf() (*driver.Preset, error) {
	if t.preset == "" {
		return nil, nil
	}
	p, err := driver.PresetByName(t.preset)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// buildTarget builds the agent under test from the flags and the preset
// (nil: none): the preset's wiring, else the --agent command line, else
// the built-in reference agent (this executable's agent command, or in
// this process with --in-process); --agent replaces a preset's command,
// --env and --file add to its own.
func buildTarget(o targetFlags, preset *driver.Preset) (driver.Target, error) {
	var t driver.Target
	switch {
	case preset != nil && o.inProcess:
		return t, errors.New("conform: --in-process runs the built-in reference agent: not with --preset")
	case preset != nil:
		t = preset.Target()
		if preset.Self {
			exe, err := os.Executable()
			if err != nil {
				return t, fmt.Errorf("conform: find the reference agent: %w", err)
			}
			t.Command[0] = exe
		}
		if o.agent != "" {
			t.Name = o.preset + " preset, " + o.agent
		}
	case o.inProcess && o.agent != "":
		return t, errors.New("conform: --in-process runs the built-in reference agent: not with --agent")
	case o.inProcess:
		t.Command, t.InProcess, t.Name = ReferenceAgentArgs("todoharness"), InProcessAgent, "reference agent (built in, in process)"
		t.PoolSessions = driver.ReferencePoolSessions
	case o.agent == "":
		exe, err := os.Executable()
		if err != nil {
			return t, fmt.Errorf("conform: find the reference agent: %w", err)
		}
		t.Command, t.IdleReport, t.Name = ReferenceAgentArgs(exe), true, "reference agent ("+filepath.Base(exe)+" agent)"
		t.PoolSessions = driver.ReferencePoolSessions
	}
	if o.agent != "" {
		argv, err := driver.SplitCommand(o.agent)
		if err != nil {
			return t, err
		}
		t.Command = argv
	}
	if o.agentLabel != "" {
		t.Name = o.agentLabel
	}
	t.Env = append(t.Env, o.env...)
	t.CleanEnv = o.cleanEnv
	for _, spec := range o.files {
		f, err := driver.ParseFileFlag(spec)
		if err != nil {
			return t, err
		}
		t.Files = append(t.Files, f)
	}
	return t, nil
}

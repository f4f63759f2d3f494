package selfexec

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// ProgramEnv names the program a test binary runs instead of its tests.
const ProgramEnv = "TODOHARNESS_TEST_PROGRAM"

// Programs maps a program name to its main: it gets the arguments after
// the program name and returns the exit status.
type Programs map[string]func(args []string) int

// Main is the body of a TestMain: with $TODOHARNESS_TEST_PROGRAM set it runs
// that program with os.Args[1:] and exits with its status (2, saying which
// programs there are, for an unknown name); otherwise it runs the tests: m
// is the *testing.M, or a wrapper that runs it (scratch.InMemory).
func Main(m interface{ Run() int }, progs Programs) {
	if name, ok := os.LookupEnv(ProgramEnv); ok && name != "" {
		os.Exit(runProgram(progs, name, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func runProgram(progs Programs, name string, args []string) int {
	main, ok := progs[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "selfexec: $%s=%q: this test binary runs only %s\n", ProgramEnv, name, strings.Join(progs.names(), ", "))
		return 2
	}
	return main(args)
}

func (p Programs) names() []string {
	out := make([]string, 0, len(p))
	for n := range p {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Path returns the test binary, which runs a program when Environ(program)
// are in its environment. It panics when the executable cannot be found: no
// subprocess spec can run then.
func Path() string {
	exe, err := os.Executable()
	if err != nil {
		panic(fmt.Errorf("selfexec: find the test binary: %w", err))
	}
	return exe
}

// childGOGC is the collector's target a child runs with when $GOGC is
// unset. A child is the whole test binary: its package initialisers (the
// JSON Schema library compiles its five meta-schemas) allocate some 30,000
// objects before main, and at the default 100 the collector runs once
// through them: 46.0 million instructions a start, 37.6 million at 400
// (callgrind, not -race; docs/performance.md, "Test tiers"). A child lives
// for one spec, so the larger heap is a few MB for a moment.
const childGOGC = "400"

// Environ returns the environment entries that make the test binary run
// program: $TODOHARNESS_TEST_PROGRAM; GOGC=childGOGC unless this process
// has $GOGC; and for a test binary built with -race, GORACE with
// atexit_sleep_ms=0 added. The race runtime otherwise sleeps a second
// before every exit (its default atexit_sleep_ms=1000), which would make
// each child a second slower to exit than the real binary and break the
// specs that time an agent's shutdown. Races a child detects are still
// reported (and it still exits 66).
func Environ(program string) []string {
	env := []string{ProgramEnv + "=" + program}
	if _, set := os.LookupEnv("GOGC"); !set {
		env = append(env, "GOGC="+childGOGC)
	}
	if raceEnabled {
		gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
		env = append(env, "GORACE="+gorace)
	}
	return env
}

// Command returns a command that runs program with args: the test binary,
// with this process's environment plus Environ(program). A caller that
// replaces cmd.Env must keep Environ(program) in it.
func Command(program string, args ...string) *exec.Cmd {
	cmd := exec.Command(Path(), args...)
	cmd.Env = append(os.Environ(), Environ(program)...)
	return cmd
}

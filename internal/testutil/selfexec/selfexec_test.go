package selfexec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

// The test binary of this package doubles as two small programs.
var testPrograms = Programs{
	"echo": func(args []string) int {
		fmt.Println(strings.Join(args, " "))
		return 0
	},
	"fail": func(args []string) int {
		fmt.Fprintln(os.Stderr, "failing as asked")
		return 3
	},
	"gcpercent": func(args []string) int {
		fmt.Println(debug.SetGCPercent(100))
		return 0
	},
}

func TestMain(m *testing.M) { Main(m, testPrograms) }

func TestCommandRunsTheProgram(t *testing.T) {
	out, err := Command("echo", "a", "b c").Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "a b c\n" {
		t.Fatalf("echo printed %q", out)
	}
}

// status runs program and returns its exit status and stderr.
func status(t *testing.T, program string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := Command(program)
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

func TestCommandExitStatus(t *testing.T) {
	if code, stderr := status(t, "fail"); code != 3 || stderr != "failing as asked\n" {
		t.Fatalf("fail: exit status %d, stderr %q; want 3 and its message", code, stderr)
	}
}

func TestUnknownProgramSaysWhichThereAre(t *testing.T) {
	code, stderr := status(t, "nope")
	if code != 2 || !strings.Contains(stderr, `"nope"`) || !strings.Contains(stderr, "echo, fail") {
		t.Fatalf("nope: exit status %d, stderr %q", code, stderr)
	}
}

func TestEnvironNamesTheProgram(t *testing.T) {
	t.Setenv("GOGC", "") // set, so Environ adds none
	os.Unsetenv("GOGC")  // restored after the test
	env := Environ("echo")
	if len(env) < 2 || env[0] != ProgramEnv+"=echo" || env[1] != "GOGC="+childGOGC {
		t.Fatalf("Environ = %q", env)
	}
	hasGorace := len(env) == 3 && strings.HasPrefix(env[2], "GORACE=") && strings.HasSuffix(env[2], "atexit_sleep_ms=0")
	if hasGorace != raceEnabled {
		t.Fatalf("Environ = %q with race detector %v", env, raceEnabled)
	}
}

// A child starts with the collector at childGOGC, or at the $GOGC the
// user set.
func TestChildGOGC(t *testing.T) {
	for _, tc := range []struct {
		gogc string // "" unset
		want string
	}{{"", childGOGC}, {"150", "150"}} {
		t.Setenv("GOGC", tc.gogc)
		if tc.gogc == "" {
			os.Unsetenv("GOGC")
		}
		out, err := Command("gcpercent").Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("$GOGC %q: the child's GC percent is %s, want %s", tc.gogc, got, tc.want)
		}
	}
}

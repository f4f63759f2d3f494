package scratch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runFunc is a Runner that runs f.
type runFunc func() int

func (f runFunc) Run() int { return f() }

// unsetTMPDIR unsets $TMPDIR for the test (restored after it).
func unsetTMPDIR(t *testing.T) {
	t.Setenv("TMPDIR", "")
	if err := os.Unsetenv("TMPDIR"); err != nil {
		t.Fatal(err)
	}
}

func TestInMemoryUsesARoomyTmpfs(t *testing.T) {
	if ok, err := isRoomyTmpfs("/dev/shm", minFree); !ok || err != nil {
		t.Skipf("/dev/shm is not a tmpfs with %d MB free here (%v): nothing to put there", minFree>>20, err)
	}
	unsetTMPDIR(t)
	var during string
	code := InMemory(runFunc(func() int {
		during = os.Getenv("TMPDIR")
		if _, err := os.Stat(during); err != nil {
			t.Errorf("the scratch folder %q does not exist while the tests run: %v", during, err)
		}
		return 3
	})).Run()
	if code != 3 {
		t.Errorf("Run returned %d, want the tests' 3", code)
	}
	if filepath.Dir(during) != "/dev/shm" || !strings.HasPrefix(filepath.Base(during), "todoharness-tests-") {
		t.Errorf("TMPDIR during the tests %q, want a fresh folder in /dev/shm", during)
	}
	if _, err := os.Stat(during); !os.IsNotExist(err) {
		t.Errorf("the scratch folder %q is still there after the tests (%v)", during, err)
	}
	if v, set := os.LookupEnv("TMPDIR"); set {
		t.Errorf("TMPDIR is %q after the tests, want it unset again", v)
	}
}

func TestInMemoryLeavesAUsersTMPDIR(t *testing.T) {
	mine := t.TempDir()
	t.Setenv("TMPDIR", mine)
	InMemory(runFunc(func() int {
		if got := os.Getenv("TMPDIR"); got != mine {
			t.Errorf("TMPDIR %q while the tests run, want the user's %q", got, mine)
		}
		return 0
	})).Run()
}

func TestInMemoryNeedsATmpfs(t *testing.T) {
	disk := t.TempDir() // on whatever holds the temporary folder
	if ok, _ := isRoomyTmpfs(disk, minFree); ok {
		t.Skipf("%s is itself a roomy tmpfs: no other file system to try", disk)
	}
	unsetTMPDIR(t)
	r := inMemory{root: disk, m: runFunc(func() int {
		if v, set := os.LookupEnv("TMPDIR"); set {
			t.Errorf("TMPDIR set to %q for a root that is not a tmpfs", v)
		}
		return 0
	})}
	r.Run()
	entries, err := os.ReadDir(disk)
	if err != nil || len(entries) != 0 {
		t.Errorf("the root holds %v (%v), want nothing made there", entries, err)
	}
	// A root that does not exist is no tmpfs either, and no error.
	if ok, err := isRoomyTmpfs(filepath.Join(disk, "absent"), minFree); ok || err != nil {
		t.Errorf("a missing root: %v, %v; want false, nil", ok, err)
	}
}

package scratch

import (
	"fmt"
	"os"
)

// Runner is what a TestMain runs: a *testing.M.
type Runner interface{ Run() int }

// minFree is the room /dev/shm must have for the tests' files (a
// conformance run keeps a few MB at once).
const minFree = 256 << 20

// InMemory returns m run with $TMPDIR in a fresh folder on /dev/shm when
// $TMPDIR is unset and /dev/shm is a tmpfs with at least minFree bytes
// free; the folder is removed after the tests. Otherwise m runs as it is.
func InMemory(m Runner) Runner { return inMemory{m: m, root: "/dev/shm"} }

type inMemory struct {
	m    Runner
	root string
}

func (r inMemory) Run() int {
	dir, err := r.folder()
	if err != nil {
		fmt.Fprintln(os.Stderr, "scratch:", err, "(temporary files stay where they are)")
	}
	if dir == "" {
		return r.m.Run()
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("TMPDIR", dir); err != nil {
		fmt.Fprintln(os.Stderr, "scratch:", err)
		return r.m.Run()
	}
	defer os.Unsetenv("TMPDIR")
	return r.m.Run()
}

// folder makes the folder under r.root, or returns "" (and why, when
// something went wrong rather than being absent).
func (r inMemory) folder() (string, error) {
	if _, set := os.LookupEnv("TMPDIR"); set {
		return "", nil
	}
	ok, err := isRoomyTmpfs(r.root, minFree)
	if !ok || err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(r.root, "todoharness-tests-")
	if err != nil {
		return "", fmt.Errorf("make a folder on %s: %w", r.root, err)
	}
	return dir, nil
}

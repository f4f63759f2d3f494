package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

// fakeBurnEnv makes the test binary a child of the fake agent that burns
// that much CPU (a Go duration) and exits: mode burn starts one for each
// session and waits for it, so each session costs its process tree at
// least that (in the fake's cutime).
const fakeBurnEnv = "CONFORMANCE_FAKE_BURN"

// fakeBurn is the CPU each session of the fake agent in mode burn costs.
const fakeBurn = 300 * time.Millisecond

// burn is mode burn's work for a session: a child that burns fakeBurn.
func (f *fakeState) burn() {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "burn:", err)
		return
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), fakeBurnEnv+"="+fakeBurn.String())
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "burn:", err)
	}
}

// burnCPU spins until this process has used d of CPU (a Go duration),
// where the CPU time is read (ProcessCPU); elsewhere it does nothing.
func burnCPU(d string) int {
	want, err := time.ParseDuration(d)
	if err != nil {
		fmt.Fprintln(os.Stderr, "burn:", err)
		return 2
	}
	x := 0
	for {
		used, ok := ProcessCPU()
		if !ok || used >= want {
			break
		}
		for i := range 100_000 {
			x += i ^ x
		}
	}
	if x == 42 {
		fmt.Println() // keeps the loop
	}
	return 0
}

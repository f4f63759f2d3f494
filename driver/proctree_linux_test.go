package driver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// threadChildEnv makes the test binary an agent's child that starts a
// child of its own from a thread other than its first (as Node and Go do):
// a sleep in a session of its own, with an empty environment, in /. It
// writes the sleep's pid to the file the variable names, then exits once
// a file "go" appears beside it, leaving the sleep to the runner.
const threadChildEnv = "DRIVER_THREAD_CHILD"

// noSubreaperEnv makes the test binary a runner that is no subreaper: it
// starts a shell with a child and exits 0 when the walk of the shell's
// tree gives way to a scan of /proc (treeBelow's ok false) and that finds
// the child, 1 when not.
const noSubreaperEnv = "DRIVER_NO_SUBREAPER"

func init() {
	if os.Getenv(noSubreaperEnv) != "" {
		os.Exit(noSubreaperWalk())
	}
	pidFile := os.Getenv(threadChildEnv)
	if pidFile == "" {
		return
	}
	// During init the first thread is locked to the main goroutine: this
	// one runs on another thread, and stays on it.
	started := make(chan int)
	go func() {
		runtime.LockOSThread()
		cmd := exec.Command("/bin/sleep", "300")
		cmd.Env, cmd.Dir = []string{}, "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			started <- 0
			return
		}
		started <- cmd.Process.Pid
		select {} // the thread the sleep's parent link names lives on
	}()
	pid := <-started
	self := os.Getpid()
	if first, err := readChildren(self, self); pid == 0 || err != nil || slices.Contains(first, pid) {
		os.Exit(3) // the sleep is the first thread's child: not the case to test
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		os.Exit(2)
	}
	for {
		if _, err := os.Stat(filepath.Join(filepath.Dir(pidFile), "go")); err == nil {
			os.Exit(0)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func noSubreaperWalk() int {
	sh := exec.Command("/bin/sh", "-c", "sleep 300 & echo $!; exec cat")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := sh.StdinPipe()
	out, _ := sh.StdoutPipe()
	if sh.Start() != nil {
		return 1
	}
	defer func() { _ = stdin.Close(); _ = syscall.Kill(-sh.Process.Pid, syscall.SIGKILL); _ = sh.Wait() }()
	var child int
	if _, err := fmt.Fscan(out, &child); err != nil {
		return 1
	}
	fs := &procFS{}
	_, walked := fs.treeBelow(sh.Process.Pid)
	if walked || isSubreaper() || !slices.Contains(pidsOf(fs.tracked(sh.Process.Pid)), child) {
		return 1
	}
	return 0
}

// A runner that is no subreaper scans /proc: an orphan of the agent's
// group is re-parented to init or an ancestor then, not to the runner.
func TestTrackScansWhereTheRunnerIsNoSubreaper(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), noSubreaperEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("a runner that is no subreaper walked its agent's tree, or its scan missed the agent's child: %v %s", err, out)
	}
}

// One track reads the agent's tree, not the whole of /proc: none of 30
// sleeps elsewhere on the machine is read, and it still finds every
// process of the tree (children, a grandchild, a child in a session of its
// own, an orphan of the group the runner adopted). So does treeCPU.
func TestTrackReadsTheAgentsTreeOnly(t *testing.T) {
	unrelated, stop := startUnrelated(t, 30)
	defer stop()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	// Nothing but the tree once the pids are written: builtins, then exec.
	script := "sleep 300 & a=$!; sh -c 'sleep 300 & wait' & b=$!; setsid sleep 300 & c=$!; (sleep 300 & echo $! > " + pidFile + ".orphan); " +
		"read o < " + pidFile + ".orphan; echo $a $b $c $o > " + pidFile + "; exec cat >/dev/null"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := startProc(ctx, resolved{argv: []string{"/bin/sh", "-c", script}, env: os.Environ()}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.kill("the test ended")
	var want []int
	waitUntil(t, "the agent's tree", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		want = want[:0]
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			want = append(want, pid)
		}
		if len(want) != 4 || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		// The grandchild: the only child of the second.
		kids, _ := readChildren(want[1], want[1])
		if len(kids) != 1 {
			return false
		}
		want = append(want, kids[0])
		return true
	})
	agent := p.cmd.Process.Pid
	fs := &procFS{}
	p.trackWith(fs)
	if read := slices.DeleteFunc(slices.Clone(fs.statted), func(pid int) bool { return !slices.Contains(unrelated, pid) }); len(read) > 0 {
		t.Errorf("one track read the stat of %d of the 30 unrelated sleeps (%d stats in all, %v...): it walked /proc, not the agent's tree", len(read), len(fs.statted), read[:min(5, len(read))])
	}
	p.mu.Lock()
	var seen []int
	for _, e := range p.seen {
		seen = append(seen, e.pid)
	}
	p.mu.Unlock()
	for _, pid := range want {
		if !slices.Contains(seen, pid) {
			t.Errorf("the track did not find pid %d of the agent's tree (child, child, setsid child, adopted orphan of the group, grandchild: %v); it found %v", pid, want, seen)
		}
	}
	if walked, scanned := (&procFS{}).tracked(agent), fst(findDescendants(agent, "", "")); !slices.Equal(pidsOf(walked), pidsOf(scanned)) {
		t.Errorf("the walk of the tree found %v, a scan of /proc %v", pidsOf(walked), pidsOf(scanned))
	}
	fs = &procFS{}
	if _, err := fs.treeCPU(agent); err != nil {
		t.Fatal(err)
	}
	if read := slices.DeleteFunc(slices.Clone(fs.statted), func(pid int) bool { return !slices.Contains(unrelated, pid) }); len(read) > 0 {
		t.Errorf("treeCPU read the stat of %d of the 30 unrelated sleeps (%d stats in all): it walked /proc", len(read), len(fs.statted))
	}
	for _, pid := range want {
		if !slices.Contains(fs.statted, pid) {
			t.Errorf("treeCPU did not read pid %d of the agent's tree (%v): its CPU is not counted", pid, want)
		}
	}
}

func pidsOf(es []procEntry) []int {
	var pids []int
	for _, e := range es {
		pids = append(pids, e.pid)
	}
	slices.Sort(pids)
	return pids
}

func fst(live, _ []procEntry) []procEntry { return live }

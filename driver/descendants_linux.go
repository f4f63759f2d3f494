package driver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// On Linux the runner is a child subreaper (prctl PR_SET_CHILD_SUBREAPER,
// process-wide, set again before each agent starts: idempotent): a
// process an agent started and left behind (setsid, a detached spawn) is
// re-parented to the runner instead of init when its parent exits, so
// that the runner can find it, kill it and reap it. A case's descendants
// are found by walking /proc: the process tree below the agent (parent
// links, while the agent lives), its process group, and every process
// carrying the case's marker in its environment (ProcMarkerEnv, set in
// the agent's environment and inherited unless a child clears it: an
// orphan whose parent exited has lost its parent link), and every orphan
// (re-parented to the runner, or to init) whose working directory is in
// the case's directory (`env -i` clears the marker, not the directory the
// child inherited). The tree below the agent is also walked while the
// agent lives (every trackEvery, and once more before its shutdown), and
// the processes seen there are remembered (pid and start time): a child
// that cleared its environment, left the group and moved out of the
// directory is still ended when its parent exited before it. That walk
// reads the agent's tree only (treeBelow: the children of every thread of
// each process, and the members of the agent's group the runner adopted),
// not the whole of /proc, unless the kernel has no children lists or the
// runner is no subreaper (then an orphan of the group is not the runner's
// child). Only processes
// found this way are reaped (wait4 on their pid, after checking that the
// pid still names the same process by its start time), so exec.Cmd.Wait
// of the runner's own children is never disturbed.

// becomeSubreaper makes the runner the reaper of its descendants'
// orphans.
func becomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("conformance: prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	return nil
}

// procEntry is one process of /proc.
type procEntry struct {
	pid, ppid, pgid int
	state           byte
	comm            string
	start           uint64 // start time in clock ticks since boot (pid reuse check)
	// cpu is the CPU time the process used and that of its children it
	// waited for (utime, stime, cutime and cstime), in clock ticks.
	cpu uint64
}

// readProcStat reads /proc/PID/stat: with one read into a buffer on the
// stack (the runner reads every process's at the end of each agent, and
// os.ReadFile takes five system calls where three do).
func readProcStat(pid int) (procEntry, error) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return procEntry{}, err
	}
	var buf [1024]byte // the fields read (up to starttime, the 22nd) take some 200 bytes
	n, err := unix.Read(fd, buf[:])
	_ = unix.Close(fd)
	if err != nil {
		return procEntry{}, err
	}
	b := buf[:n]
	open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return procEntry{}, errors.New("malformed stat")
	}
	// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice num_threads
	// itrealvalue starttime: starttime is field 22 of stat, f[19] here,
	// utime to cstime fields 14 to 17, f[11] to f[14].
	// The first 20 fields only, in place (the whole /proc is read ten
	// times a second for each running agent: strings.Fields' copies were a
	// tenth of that).
	var f [20][]byte
	rest, k := b[closing+1:], 0
	for k < len(f) {
		rest = bytes.TrimLeft(rest, " \n")
		if len(rest) == 0 {
			break
		}
		end := bytes.IndexAny(rest, " \n")
		if end < 0 {
			end = len(rest)
		}
		f[k], rest, k = rest[:end], rest[end:], k+1
	}
	if k < len(f) {
		return procEntry{}, errors.New("short stat")
	}
	e := procEntry{pid: pid, comm: string(b[open+1 : closing]), state: f[0][0]}
	e.ppid, _ = strconv.Atoi(string(f[1]))
	e.pgid, _ = strconv.Atoi(string(f[2]))
	e.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	for _, t := range f[11:15] {
		n, _ := strconv.ParseUint(string(t), 10, 64)
		e.cpu += n
	}
	return e, nil
}

// clockTicks is the unit of the times in /proc/PID/stat (USER_HZ: 100 on
// every Linux the runner builds for; sysconf(_SC_CLK_TCK) needs cgo).
const clockTicks = 100

// treeCPU is the CPU time the process pid and the processes below it
// (its descendants by parent links, and its process group) have used so
// far, each with its children that ended and were waited for (cutime,
// cstime): a child that ran and ended between two readings counts in
// its parent's.
func treeCPU(pid int) (time.Duration, error) {
	return (&procFS{}).treeCPU(pid)
}

func (fs *procFS) treeCPU(pid int) (time.Duration, error) {
	root, err := fs.stat(pid)
	if err != nil {
		return 0, fmt.Errorf("pid %d: %w", pid, err)
	}
	if below, ok := fs.treeBelow(pid); ok {
		ticks := root.cpu
		for _, e := range below {
			ticks += e.cpu
		}
		return time.Duration(ticks) * time.Second / clockTicks, nil
	}
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("no /proc to read a process's CPU time: %w", err)
	}
	all := map[int]procEntry{}
	children := map[int][]int{}
	for _, d := range dir {
		p, err := strconv.Atoi(d.Name())
		if err != nil || p == pid {
			continue
		}
		if e, err := fs.stat(p); err == nil {
			all[p] = e
			children[e.ppid] = append(children[e.ppid], p)
		}
	}
	ticks := root.cpu
	seen := map[int]bool{pid: true}
	queue := []int{pid}
	for p, e := range all {
		if e.pgid == pid && !seen[p] {
			seen[p] = true
			queue = append(queue, p)
			ticks += e.cpu
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
				ticks += all[c].cpu
			}
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// hasMarker reports whether the environment of pid holds marker (K=V).
func hasMarker(pid int, marker string) bool {
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/environ")
	if err != nil || len(b) == 0 {
		// A process whose first thread exited has its environment
		// readable from its other threads only.
		tasks, _ := os.ReadDir(dir + "/task")
		for _, t := range tasks {
			if b, err = os.ReadFile(dir + "/task/" + t.Name() + "/environ"); err == nil && len(b) > 0 {
				break
			}
		}
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if string(kv) == marker {
			return true
		}
	}
	return false
}

// stillRunning reports whether a process /proc shows as a zombie has
// threads left: its first thread exited, the others did not (yet).
func stillRunning(pid int) bool {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	return err == nil && len(tasks) > 1
}

// trackEvery is how often the tree below a running agent is walked (a
// walk of a small agent tree takes some 0.15 ms of CPU; the scan of /proc
// it falls back to, a millisecond with 160 processes, 4 ms with 460).
const trackEvery = 100 * time.Millisecond

// findDescendants lists the live processes of a case (see above), the
// agent itself and the runner excluded; dead are the case's zombies the
// runner adopted (their parent exited first), which only it can reap.
// caseDir is the case's directory ("": no orphan is found by its
// directory).
func findDescendants(agent int, marker, caseDir string) (live, dead []procEntry) {
	return (&procFS{}).findDescendants(agent, marker, caseDir)
}

func (fs *procFS) findDescendants(agent int, marker, caseDir string) (live, dead []procEntry) {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil
	}
	self := os.Getpid()
	all := map[int]procEntry{}
	children := map[int][]int{}
	for _, d := range dir {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		e, err := fs.stat(pid)
		if err != nil {
			continue
		}
		all[pid] = e
		children[e.ppid] = append(children[e.ppid], pid)
	}
	found := map[int]bool{}
	var queue []int
	add := func(pid int) {
		if !found[pid] {
			found[pid] = true
			queue = append(queue, pid)
		}
	}
	add(agent)
	// An orphan is re-parented to the nearest subreaper above it: the
	// runner, or, when the runner could not become one, an ancestor of the
	// runner (init at the latest). Only those processes' environments are
	// read for the marker: the others are found by their parent links.
	adopters := map[int]bool{self: true}
	for pid, n := self, 0; n < len(all); n++ {
		e, ok := all[pid]
		if !ok || e.ppid <= 0 || adopters[e.ppid] {
			break
		}
		adopters[e.ppid] = true
		pid = e.ppid
	}
	adopters[1] = true
	for pid, e := range all {
		if pid == self {
			continue
		}
		if e.pgid == agent || (adopters[e.ppid] && (marker != "" && hasMarker(pid, marker) || inDir(pid, caseDir))) {
			add(pid)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			add(c)
		}
	}
	for pid := range found {
		if e, ok := all[pid]; ok && pid != agent && pid != self {
			live, dead = sortOut(e, self, live, dead)
		}
	}
	return live, dead
}

// sortOut appends e to live when it runs, to dead when it is a zombie the
// runner adopted (self), and to neither when it is gone or its parent
// will reap it.
func sortOut(e procEntry, self int, live, dead []procEntry) ([]procEntry, []procEntry) {
	switch {
	case e.state == 'Z' && stillRunning(e.pid):
		live = append(live, e)
	case e.state == 'Z' && e.ppid == self:
		dead = append(dead, e)
	case e.state != 'Z' && e.state != 'X':
		live = append(live, e)
	}
	return live, dead
}

// stillThere sorts out the processes es, seen earlier, that still exist
// (the same pid and start time) and are not in skip, as findDescendants
// sorts out what it finds.
func stillThere(es []procEntry, skip []procEntry) (live, dead []procEntry) {
	self := os.Getpid()
	for _, e := range es {
		now, ok := sameProc(e)
		if ok && !slices.ContainsFunc(skip, func(s procEntry) bool { return s.pid == e.pid }) {
			live, dead = sortOut(now, self, live, dead)
		}
	}
	return live, dead
}

// inDir reports whether the working directory of pid is dir or below it.
func inDir(pid int, dir string) bool {
	if dir == "" {
		return false
	}
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	return err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/"))
}

// reapZombies waits for the adopted zombies es (findDescendants' dead),
// each once its pid still names it: a zombie holds its pid until reaped.
// It returns those not reaped: a process whose first thread exited shows
// as a zombie while its other threads still run (a multi-threaded agent
// child, node, in the middle of exiting or not exiting at all).
func reapZombies(es []procEntry) (running []procEntry) {
	for _, e := range es {
		if !reaped(e) {
			running = append(running, e)
		}
	}
	return running
}

// reaped reaps e when it is a zombie the runner adopted and reports
// whether e is gone: reaped now, by its parent, or its pid reused.
func reaped(e procEntry) bool {
	now, ok := sameProc(e)
	if !ok {
		return true
	}
	if now.ppid != os.Getpid() || now.state != 'Z' {
		return false
	}
	var ws syscall.WaitStatus
	pid, err := syscall.Wait4(e.pid, &ws, syscall.WNOHANG, nil)
	return pid == e.pid || err != nil
}

// sameProc reports whether e's pid still names the same process.
func sameProc(e procEntry) (procEntry, bool) {
	now, err := readProcStat(e.pid)
	return now, err == nil && now.start == e.start
}

// killDescendants SIGKILLs the given processes and reaps those the runner
// adopted, waiting up to d for them to go; it describes each one killed.
func killDescendants(es []procEntry, d time.Duration) []string {
	var out []string
	var mine []procEntry
	for _, e := range es {
		if _, ok := sameProc(e); !ok {
			continue
		}
		if err := syscall.Kill(e.pid, syscall.SIGKILL); err != nil {
			continue
		}
		out = append(out, fmt.Sprintf("pid %d (%s)", e.pid, e.comm))
		mine = append(mine, e)
	}
	if mine = reapWithin(mine, d); len(mine) > 0 {
		// Still dying after d (a large process under load): reap them
		// later, not never, or each stays a zombie as long as the runner.
		go reapWithin(mine, reapLater)
	}
	return out
}

// reapLater bounds how long the runner goes on reaping the processes it
// killed that took longer to die than the case waited.
const reapLater = 30 * time.Second

// reapWithin reaps es as they die, for up to d, and returns those still
// there (dying, or their parent has yet to reap them).
func reapWithin(es []procEntry, d time.Duration) []procEntry {
	deadline := time.Now().Add(d)
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		es = slices.DeleteFunc(es, reaped)
		if len(es) == 0 || time.Now().After(deadline) {
			return es
		}
		time.Sleep(pause)
	}
}

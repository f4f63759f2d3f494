package driver

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// procFS reads /proc for one walk (a value per walk: no state is shared
// between walks). statted lists the pids whose stat it read, in order: what
// a walk cost, which the tests read.
type procFS struct {
	statted []int
}

// stat reads /proc/PID/stat (readProcStat).
func (fs *procFS) stat(pid int) (procEntry, error) {
	fs.statted = append(fs.statted, pid)
	return readProcStat(pid)
}

// tracked lists the live processes below agent (its tree and group, as
// findDescendants without marker or directory finds them), walking the
// tree where it can (treeBelow), scanning /proc where it cannot.
func (fs *procFS) tracked(agent int) (live []procEntry) {
	below, ok := fs.treeBelow(agent)
	if !ok {
		live, _ = fs.findDescendants(agent, "", "")
		return live
	}
	self := os.Getpid()
	for _, e := range below {
		live, _ = sortOut(e, self, live, nil)
	}
	return live
}

// childrenTries bounds how often the children of one process are read
// again when they changed while read (childrenOf) before the walk gives
// way to a scan of /proc.
const childrenTries = 3

// treeBelow lists the processes below root, root excluded: its
// descendants by parent links, and the members of root's process group
// that are not (orphans the runner adopted) with their descendants: what a
// scan of /proc finds by parent links and group (findDescendants without
// marker or directory), at the cost of root's tree, not of every process
// on the machine. It reads the children of every thread of each process
// (/proc/PID/task/TID/children: a thread other than the first may have
// started a child, as Node and Go do), and the runner's own children for
// the group (a process that joined the group with setpgid from elsewhere
// in the runner's session, below a process that is neither, is found by
// the scan at the agent's end only). ok is false when this cannot stand
// for the scan: the kernel has no children lists (CONFIG_PROC_CHILDREN),
// the runner is no subreaper (an orphan of the group is re-parented to
// another process then), or a process's children kept changing while
// read.
func (fs *procFS) treeBelow(root int) (below []procEntry, ok bool) {
	self := os.Getpid()
	if !isSubreaper() || unix.Access("/proc/"+strconv.Itoa(self)+"/task/"+strconv.Itoa(self)+"/children", unix.R_OK) != nil {
		return nil, false
	}
	adopted, ok := fs.childrenOf(self)
	if !ok {
		return nil, false
	}
	found := map[int]bool{root: true, self: true}
	queue := []int{root}
	for _, e := range adopted {
		if e.pgid == root && !found[e.pid] {
			found[e.pid] = true
			below = append(below, e)
			queue = append(queue, e.pid)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		kids, ok := fs.childrenOf(pid)
		if !ok {
			return nil, false
		}
		for _, e := range kids {
			if !found[e.pid] {
				found[e.pid] = true
				below = append(below, e)
				queue = append(queue, e.pid)
			}
		}
	}
	return below, true
}

// childrenOf reads the children of every thread of pid (none when pid is
// gone). The kernel does not promise the lists whole: a child reaped while
// its parent's list is read can make the next one be skipped, and a
// thread's children move to another thread when it exits. So the lists are
// read again (up to childrenTries times, then ok is false) when a child
// listed is gone or no longer pid's by the time its stat is read, or a
// thread listed exited before the last list was read.
func (fs *procFS) childrenOf(pid int) (kids []procEntry, ok bool) {
	for range childrenTries {
		tids, err := listTasks(pid)
		if err != nil {
			return nil, true // gone: its children went to the runner (or a subreaper below it)
		}
		kids, ok = kids[:0], true
		for _, tid := range tids {
			pids, err := readChildren(pid, tid)
			if err != nil {
				ok = false // the thread exited: its children went to another one
				break
			}
			for _, c := range pids {
				e, err := fs.stat(c)
				if err != nil || e.ppid != pid {
					ok = false // reaped or re-parented while the list was read
					continue
				}
				kids = append(kids, e)
			}
		}
		if ok && len(tids) > 1 {
			now, err := listTasks(pid)
			ok = err == nil && !slices.ContainsFunc(tids, func(t int) bool { _, found := slices.BinarySearch(now, t); return !found })
		}
		if ok {
			return kids, true
		}
	}
	return nil, false
}

// listTasks lists the threads of pid (/proc/PID/task), sorted.
func listTasks(pid int) ([]int, error) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/task", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var buf [4096]byte
	var tids []int
	err = readChunks(fd, buf[:], unix.Getdents, func(b []byte) {
		_, _, names := syscall.ParseDirent(b, -1, nil)
		for _, name := range names {
			if tid, err := strconv.Atoi(name); err == nil {
				tids = append(tids, tid)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if len(tids) == 0 {
		return nil, errors.New("no threads")
	}
	slices.Sort(tids)
	return tids, nil
}

// readChildren reads the children of thread tid of pid
// (/proc/PID/task/TID/children: pids, each followed by a space).
func readChildren(pid, tid int) ([]int, error) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/task/"+strconv.Itoa(tid)+"/children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var buf [512]byte
	var pids []int
	partial := 0
	err = readChunks(fd, buf[:], unix.Read, func(b []byte) {
		for _, c := range b {
			switch {
			case c >= '0' && c <= '9':
				partial = partial*10 + int(c-'0')
			case partial > 0:
				pids = append(pids, partial)
				partial = 0
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if partial > 0 {
		pids = append(pids, partial)
	}
	return pids, nil
}

// readChunks calls f with each chunk read(fd, buf) reads, to the end.
func readChunks(fd int, buf []byte, read func(int, []byte) (int, error), f func([]byte)) error {
	for {
		n, err := read(fd, buf)
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		f(buf[:n])
	}
}

// isSubreaper reports whether the runner is a child subreaper
// (becomeSubreaper took).
func isSubreaper() bool {
	var v int32
	_, _, errno := syscall.Syscall(syscall.SYS_PRCTL, unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0)
	return errno == 0 && v != 0
}

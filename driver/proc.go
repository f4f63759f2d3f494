package driver

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/todoharness/todoharness/internal/textcut"
)

// proc is one agent process: its pipes (owned by the runner, so that reads
// never race with Wait), its stderr tail and its exit.
type proc struct {
	// ctx is the case's: when it ends (timeout, run cancelled) the process
	// group is killed whatever the runner is doing, and writes to the
	// agent are abandoned.
	ctx    context.Context
	cmd    *exec.Cmd
	stdin  *os.File // write end
	stdout *os.File // read end
	stderr *tailBuffer

	started time.Time
	exited  chan struct{} // closed when the process has exited
	waitErr error         // set before exited is closed
	errDone chan struct{} // closed when stderr reached EOF

	// marker is ProcMarkerEnv=token, in the agent's environment: it finds
	// the processes of this agent that left its tree and its group; so
	// does dir, the case's directory (symbolic links resolved), for an
	// orphan whose environment was cleared.
	marker string
	dir    string

	// endMu serialises endDescendants: the watchdog (case end) and the
	// runner's own shutdown may both end the process at once, and whoever
	// comes second must find the first one's list of killed descendants
	// complete, not half-written.
	endMu sync.Mutex

	mu        sync.Mutex
	stdinOpen bool
	killed    string   // how the runner ended it, if it had to
	leftovers []string // descendants still running at the end, killed
	// seen are the descendants found while the agent ran (track): ended
	// at its end if they are still there, wherever they went.
	seen []procEntry
	// treeCPU is the most CPU time /proc showed the process's tree using
	// (readCPU; treeRead: it was read once at least), treeErr why it could
	// not be read (while it never was).
	treeCPU  time.Duration
	treeRead bool
	treeErr  string

	// idleAt is the last byte count of stdout the agent reported being
	// idle at (-1: none), on its idle pipe (Target.IdleReport) or, in
	// process, on ProcIO.IdleReport.
	idleAt atomic.Int64

	// inproc is set for an in-process agent (Target.InProcess): cmd is
	// nil, the agent is a goroutine running the function on pipes.
	inproc *inProc
}

// inProc is the process-like state of an in-process agent.
type inProc struct {
	// cancel cancels the function's context: the runner's SIGTERM.
	cancel context.CancelCauseFunc
	// in and out are the agent's ends of its stdin and stdout; closing
	// them is the runner's SIGKILL (every read and write fails).
	in, out *os.File
	// exitOnce closes proc.exited: when the function returns, or when the
	// runner abandons it.
	exitOnce sync.Once
	// code is the function's exit status; panicked or abandoned say why it
	// has none (set before proc.exited is closed).
	code      int
	panicked  string
	abandoned bool
}

// AbandonAfter is how long a killed in-process agent has to return
// before the runner abandons it.
const AbandonAfter = time.Second

// ErrTerminated is the cause of an in-process agent's cancelled context.
var ErrTerminated = errors.New("conformance: the runner ended the agent (its SIGTERM)")

// ProcMarkerEnv is set in every agent's environment to a token of its
// own (see findDescendants).
const ProcMarkerEnv = "TODOHARNESS_CONFORM_PROC"

// stderrKeep bounds the stderr kept per process (the tail is kept).
const stderrKeep = 256 << 10

// startProc starts argv in cwd, in its own process group. When ctx ends
// before the process has exited, its process group is killed.
func startProc(ctx context.Context, r resolved, cwd string) (*proc, error) {
	if r.inproc != nil {
		return startInProc(ctx, r, cwd)
	}
	names := []string{"stdin", "stdout", "stderr"}
	if r.idleReport {
		names = append(names, "idle report")
	}
	ps, err := openPipes(names...)
	if err != nil {
		return nil, err
	}
	inR, inW, outR, outW, errR, errW := ps[0][0], ps[0][1], ps[1][0], ps[1][1], ps[2][0], ps[2][1]
	// Orphans of the agent's children come back to the runner (Linux).
	_ = becomeSubreaper()
	marker := newMarker()
	cmd := exec.Command(commandPath(r.argv[0], r.env), r.argv[1:]...)
	cmd.Dir = cwd
	cmd.Env = append(r.env[:len(r.env):len(r.env)], marker)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = sysProcAttr()
	p := &proc{
		ctx: ctx, cmd: cmd, marker: marker, dir: realDir(cwd), stdin: inW, stdout: outR, stderr: newTailBuffer(stderrKeep),
		exited: make(chan struct{}), errDone: make(chan struct{}), stdinOpen: true,
	}
	p.idleAt.Store(-1)
	if r.idleReport {
		cmd.ExtraFiles = []*os.File{ps[3][1]} // fd 3
		cmd.Env = append(cmd.Env, IdleFDEnv+"=3")
	}
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		for _, p := range ps[3:] {
			closeAll(p[0], p[1])
		}
		return nil, fmt.Errorf("conformance: start %s: %w", r.argv[0], err)
	}
	p.started = time.Now()
	// The child has its own copies now.
	closeAll(inR, outW, errW)
	if r.idleReport {
		_ = ps[3][1].Close()
		go p.readIdleReports(ps[3][0])
	}
	go func() {
		_, _ = io.Copy(p.stderr, errR)
		_ = errR.Close()
		close(p.errDone)
	}()
	// The watchdog: the case's end kills the group, even while the runner
	// is blocked elsewhere (a write the agent does not read).
	stopWatch := context.AfterFunc(ctx, func() {
		p.kill(fmt.Sprintf("killed (process group) when the case ended: %v", context.Cause(ctx)))
	})
	go func() {
		p.waitErr = cmd.Wait()
		stopWatch()
		close(p.exited)
	}()
	if trackEvery > 0 {
		go p.trackWhileRunning()
	}
	return p, nil
}

// realDir is dir with its symbolic links resolved, as /proc shows a
// working directory (dir itself when it cannot be resolved).
func realDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// trackWhileRunning walks the tree below the agent every trackEvery until
// it exits (track).
func (p *proc) trackWhileRunning() {
	t := time.NewTicker(trackEvery)
	defer t.Stop()
	for {
		select {
		case <-p.exited:
			return
		case <-t.C:
			p.track()
		}
	}
}

// track remembers the descendants of the agent running now (seen): a
// child found while its parent lives is ended at the agent's end even when
// nothing links it to the case by then (its parent exited, it cleared its
// environment, left the group and the case's directory). It walks the tree
// and the group only: the orphans found by marker or directory are looked
// for at the agent's end (reading every adopted process's environment and
// directory ten times a second was a third of ./conformance's CPU under
// -race, docs/performance.md), and it reads the agent's tree, not all of
// /proc, where it can (tracked: a scan of /proc for each agent ten times a
// second was half the runner's CPU on a codex exploration).
func (p *proc) track() { p.trackWith(&procFS{}) }

// trackWith is track reading /proc through fs.
func (p *proc) trackWith(fs *procFS) {
	if p.inproc != nil || p.hasExited() {
		return // the agent's pid may name another process once it is reaped
	}
	live := fs.tracked(p.cmd.Process.Pid)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range live {
		i := slices.IndexFunc(p.seen, func(s procEntry) bool { return s.pid == e.pid })
		switch {
		case i < 0:
			p.seen = append(p.seen, e)
		case p.seen[i].start != e.start: // the pid was reused
			p.seen[i] = e
		}
	}
}

// startInProc starts an in-process agent: the function on pipes, in a
// goroutine. It ends as startProc's process does: when the case's ctx
// ends the agent is killed (its context cancelled, its pipes closed).
func startInProc(ctx context.Context, r resolved, cwd string) (*proc, error) {
	ps, err := openPipes("stdin", "stdout")
	if err != nil {
		return nil, err
	}
	inR, inW, outR, outW := ps[0][0], ps[0][1], ps[1][0], ps[1][1]
	marker := newMarker()
	actx, cancel := context.WithCancelCause(context.Background())
	ip := &inProc{cancel: cancel, in: inR, out: outW}
	p := &proc{
		ctx: ctx, marker: marker, stdin: inW, stdout: outR, stderr: newTailBuffer(stderrKeep),
		exited: make(chan struct{}), errDone: make(chan struct{}), stdinOpen: true, inproc: ip,
	}
	p.idleAt.Store(-1)
	// Stderr is written straight into the tail: it is done when the
	// function is.
	close(p.errDone)
	pio := ProcIO{
		Args: slices.Clone(r.argv), Env: append(r.env[:len(r.env):len(r.env)], marker), Dir: cwd,
		Stdin: inR, Stdout: outW, Stderr: p.stderr, IdleReport: &idleLines{at: &p.idleAt},
	}
	p.started = time.Now()
	stopWatch := context.AfterFunc(ctx, func() {
		p.kill(fmt.Sprintf("killed (in-process: context cancelled, pipes closed) when the case ended: %v", context.Cause(ctx)))
	})
	go func() {
		code, panicked := runInProc(actx, r.inproc, pio)
		cancel(ErrTerminated)
		stopWatch()
		ip.exitOnce.Do(func() {
			ip.code, ip.panicked = code, panicked
			close(p.exited)
		})
		// As a process's exit closes its descriptors; after the exit is
		// marked, so that a runner that sees its stdout end finds it
		// exited (ExitedEarly).
		closeAll(inR, outW)
	}()
	return p, nil
}

// readIdleReports keeps the last count an agent with Target.IdleReport
// reported, until the pipe ends: when the agent and whatever it left
// holding the pipe are gone.
func (p *proc) readIdleReports(f *os.File) {
	defer f.Close()
	_, _ = io.Copy(&idleLines{at: &p.idleAt}, f)
}

// idleLines parses idle reports, one byte count per line, into at: the
// agent's idle pipe and an in-process agent's ProcIO.IdleReport. A line
// that is not a count is ignored; so is a count smaller than the last.
type idleLines struct {
	mu      sync.Mutex
	at      *atomic.Int64
	partial []byte
	long    bool // the line so far is too long to be a count
}

// maxIdleLine bounds a line that can be a count.
const maxIdleLine = 64

func (l *idleLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(b)
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.add(b)
			return n, nil
		}
		l.add(b[:i])
		if v, err := strconv.ParseInt(strings.TrimSpace(string(l.partial)), 10, 64); !l.long && err == nil && v >= l.at.Load() {
			l.at.Store(v)
		}
		l.partial, l.long = l.partial[:0], false
		b = b[i+1:]
	}
}

func (l *idleLines) add(b []byte) {
	if l.long = l.long || len(l.partial)+len(b) > maxIdleLine; !l.long {
		l.partial = append(l.partial, b...)
	}
}

// runInProc calls the in-process agent; a panic is its crash (status 2,
// the panic and its stack on its stderr, as the Go runtime prints them).
func runInProc(ctx context.Context, f InProcessFunc, pio ProcIO) (code int, panicked string) {
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(pio.Stderr, "panic: %v\n\n%s", v, debug.Stack())
			code, panicked = 2, fmt.Sprint(v)
		}
	}()
	return f(ctx, pio), ""
}

// openPipes opens one pipe (read end, write end) per name, or none.
func openPipes(names ...string) ([][2]*os.File, error) {
	var ps [][2]*os.File
	for _, n := range names {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range ps {
				closeAll(p[0], p[1])
			}
			return nil, fmt.Errorf("conformance: %s pipe: %w", n, err)
		}
		ps = append(ps, [2]*os.File{r, w})
	}
	return ps, nil
}

// newMarker is ProcMarkerEnv=token with a token of the agent's own.
func newMarker() string {
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	return fmt.Sprintf("%s=%d-%x", ProcMarkerEnv, os.Getpid(), tok)
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// closeStdin closes the agent's stdin (EOF: an editor going away).
func (p *proc) closeStdin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stdinOpen {
		p.stdinOpen = false
		_ = p.stdin.Close()
	}
}

// hasExited reports whether the process has exited.
func (p *proc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// shutdown ends the process as an editor does: close stdin, wait up to
// grace for it to exit on its own, then SIGTERM its process group, wait up
// to grace again, then SIGKILL the group. Whatever the process left behind
// in its group is killed too. It returns how the process ended.
func (p *proc) shutdown(grace time.Duration) string {
	how, _ := p.shutdownWatched(grace, nil, "")
	return how
}

// shutdownWatched is shutdown in a run that keeps what it learns of how
// its agent exits (w, nil: nothing): once w has learned that the agent
// does not exit when its stdin closes, the wait for it to do so ends (or
// never begins) and the process is signalled at once; cut then says what
// w had learned. A process named who ("": one whose end is not judged)
// that waits the whole grace out teaches w.
func (p *proc) shutdownWatched(grace time.Duration, w *ExitWatch, who string) (how, cut string) {
	// The last look at the agent's tree while the agent still lives: once
	// it exits, a child that left its group and cleared its environment
	// is linked to the case by nothing else.
	p.track()
	p.readCPU()
	p.closeStdin()
	how = "exited after stdin closed"
	term, kill := "SIGTERM", "SIGKILL"
	if p.inproc != nil {
		term, kill = "context cancelled (its SIGTERM)", "pipes closed (its SIGKILL)"
	}
	if exited, why, early := w.awaitExit(p.exited, grace); !exited {
		switch {
		case why == "":
			how = fmt.Sprintf("did not exit within %s of stdin closing: %s", grace, term)
			w.learn(who, grace)
		case early:
			how, cut = fmt.Sprintf("was not given the %s grace to exit on its own (%s): %s as its stdin closed", grace, why, term), why
		default:
			how, cut = fmt.Sprintf("did not exit on its own before its %s grace was cut short (%s): %s", grace, why, term), why
		}
		p.terminate()
		if !waitFor(p.exited, grace) {
			if cut == "" {
				how = fmt.Sprintf("did not exit within %s of stdin closing nor %s of %s: %s", grace, grace, term, kill)
			} else {
				how += fmt.Sprintf("; did not exit within %s of it: %s", grace, kill)
			}
			p.forceEnd()
		}
	}
	// End anything the agent left running, in its group or not.
	p.endDescendants()
	_ = p.stdout.Close()
	waitFor(p.errDone, time.Second)
	p.mu.Lock()
	if p.killed == "" {
		p.killed = how
	}
	p.mu.Unlock()
	return how, cut
}

// kill ends the process group at once (timeouts).
func (p *proc) kill(why string) {
	p.mu.Lock()
	if p.killed == "" {
		p.killed = why
	}
	p.mu.Unlock()
	p.readCPU()
	p.closeStdin()
	p.endDescendants()
	p.forceEnd()
	_ = p.stdout.Close()
	waitFor(p.errDone, time.Second)
}

// readCPU reads the CPU time the process's tree has used so far from
// /proc (treeCPU), while it still runs: as the runner starts to end it
// (shutdownWatched, kill), the last moment its descendants are all there
// to be read. The most read is kept.
func (p *proc) readCPU() {
	if p.inproc != nil || p.hasExited() {
		return // the pid may name another process once it is reaped
	}
	d, err := treeCPU(p.cmd.Process.Pid)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if !p.treeRead {
			p.treeErr = err.Error()
		}
		return
	}
	p.treeRead, p.treeErr, p.treeCPU = true, "", max(p.treeCPU, d)
}

// cpu is the CPU time the process used over its life, once it has
// exited (ProcCPU): its tree's as /proc showed it when the runner began
// to end it (readCPU), or, when that is more, its own and its waited-for
// children's from its exit (wait4's usage: its shutdown's work included,
// and that of a process that exited before it was read).
func (p *proc) cpu() ProcCPU {
	switch {
	case p.inproc != nil:
		return ProcCPU{Unmeasured: "the agent runs in the runner's process: its CPU is the runner's"}
	case !p.hasExited():
		return ProcCPU{Unmeasured: "the process had not exited"}
	}
	p.mu.Lock()
	tree, read, why := p.treeCPU, p.treeRead, p.treeErr
	p.mu.Unlock()
	if !read && why != "" {
		return ProcCPU{Unmeasured: why}
	}
	var exit time.Duration
	if ps := p.cmd.ProcessState; ps != nil {
		exit = ps.UserTime() + ps.SystemTime()
	}
	return ProcCPU{Ms: max(tree, exit).Milliseconds()}
}

// terminate asks the agent to end: SIGTERM to its process group, or the
// in-process agent's context cancelled.
func (p *proc) terminate() {
	if p.inproc != nil {
		p.inproc.cancel(ErrTerminated)
		return
	}
	signalGroup(p.cmd.Process.Pid, sigTerm)
}

// forceEnd ends the agent and waits until it has: SIGKILL to its process
// group; for an in-process agent its context cancelled and its pipes
// closed, and if the function still has not returned after AbandonAfter,
// it is abandoned (its goroutine is left running, and the exit says so).
func (p *proc) forceEnd() {
	ip := p.inproc
	if ip == nil {
		signalGroup(p.cmd.Process.Pid, sigKill)
		<-p.exited
		return
	}
	ip.cancel(ErrTerminated)
	closeAll(ip.in, ip.out)
	if !waitFor(p.exited, AbandonAfter) {
		ip.exitOnce.Do(func() {
			ip.abandoned = true
			close(p.exited)
		})
	}
}

// endDescendants kills the agent's process group and every descendant
// that left it (Linux), noting those that were still running.
func (p *proc) endDescendants() {
	if p.inproc != nil {
		return // no process: nothing outside the function to end
	}
	p.endMu.Lock()
	defer p.endMu.Unlock()
	left, dead := findDescendants(p.cmd.Process.Pid, p.marker, p.dir)
	p.mu.Lock()
	seen := slices.Clone(p.seen)
	p.mu.Unlock()
	moreLeft, moreDead := stillThere(seen, append(slices.Clone(left), dead...))
	left, dead = append(left, moreLeft...), append(dead, moreDead...)
	left = append(left, reapZombies(dead)...)
	signalGroup(p.cmd.Process.Pid, sigKill)
	killed := killDescendants(left, time.Second)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range killed {
		if !slices.Contains(p.leftovers, k) {
			p.leftovers = append(p.leftovers, k)
		}
	}
}

// killedDescendants lists the descendants the runner had to kill.
func (p *proc) killedDescendants() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.leftovers)
}

// killedHow says how the runner ended the process, if it had to.
func (p *proc) killedHow() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killed
}

// exitDescription says how the process ended, once it has.
func (p *proc) exitDescription() string {
	if !p.hasExited() {
		return "still running"
	}
	if ip := p.inproc; ip != nil {
		switch {
		case ip.abandoned:
			return fmt.Sprintf("did not return within %s of its context ending and its pipes closing: abandoned (an in-process agent cannot be killed)", AbandonAfter)
		case ip.panicked != "":
			return "panic: " + ip.panicked + " (exit status 2)"
		}
		return fmt.Sprintf("exit status %d", ip.code)
	}
	if p.waitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	return p.waitErr.Error()
}

func waitFor(ch <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// tailBuffer keeps the last max bytes written to it (at most: it starts
// between UTF-8 characters).
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped int64
	// tees also get every write (addTee): a pooled process's stderr goes
	// to the cases that hold it too.
	tees []io.Writer
}

// addTee makes w get every later write too.
func (t *tailBuffer) addTee(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tees = append(t.tees, w)
}

// teeFrom makes w get, at once, head(what is kept so far: String's) and
// then every later write, with nothing written in between lost: the kept
// text is read and the tee added under one lock (a fresh process's stderr
// goes on while a case attaches to it).
func (t *tailBuffer) teeFrom(w io.Writer, head func(sofar string) string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = io.WriteString(w, head(t.stringLocked()))
	t.tees = append(t.tees, w)
}

// removeTee undoes addTee: once it returns w gets no more writes.
func (t *tailBuffer) removeTee(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tees = slices.DeleteFunc(t.tees, func(x io.Writer) bool { return x == w })
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	for _, w := range t.tees {
		_, _ = w.Write(p)
	}
	// The tail starts between characters: a character the bound splits
	// is dropped whole.
	if over := len(t.buf) - len(textcut.Suffix(t.buf, t.max)); over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns what is kept.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stringLocked()
}

func (t *tailBuffer) stringLocked() string {
	if t.dropped > 0 {
		return fmt.Sprintf("[… %d earlier bytes dropped]\n%s", t.dropped, t.buf)
	}
	return string(t.buf)
}

// LastLines returns up to n last non-empty lines.
func LastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			out = append(out, lines[i])
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

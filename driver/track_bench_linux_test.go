package driver

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkTrack is one walk of a running agent's tree (track) with n
// unrelated processes on the machine besides it: what the runner pays
// every trackEvery for each agent process it runs.
func BenchmarkTrack(b *testing.B) {
	for _, n := range []int{0, 300} {
		b.Run("unrelated="+strconv.Itoa(n), func(b *testing.B) {
			if n > 0 {
				_, stop := startUnrelated(b, n)
				defer stop()
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p, err := startProc(ctx, resolved{argv: []string{"/bin/sh", "-c", "sleep 300 & sleep 300 & cat >/dev/null"}, env: os.Environ()}, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer p.kill("the benchmark ended")
			var ru0, ru1 syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			b.ResetTimer()
			for range b.N {
				p.track()
			}
			b.StopTimer()
			// The runner's CPU (wall time is the machine's load's too).
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// startUnrelated starts n sleeps under one shell of their own, outside any
// agent's tree and group, and returns their pids once they are all
// started; stop ends them (the shell kills and reaps them: killed with it,
// they would be re-parented to the runner, a subreaper, and stay its
// zombies).
func startUnrelated(tb testing.TB, n int) (pids []int, stop func()) {
	tb.Helper()
	sh := exec.Command("/bin/sh", "-c", "i=0; while [ $i -lt "+strconv.Itoa(n)+" ]; do sleep 300 & pids=\"$pids $!\"; i=$((i+1)); done; echo started $pids; read _; kill $pids; wait")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ps, err := openPipes("stdin", "stdout")
	if err != nil {
		tb.Fatal(err)
	}
	sh.Stdin, sh.Stdout = ps[0][0], ps[1][1]
	err = sh.Start()
	closeAll(ps[0][0], ps[1][1])
	if err != nil {
		closeAll(ps[0][1], ps[1][0])
		tb.Fatal(err)
	}
	stop = func() {
		closeAll(ps[0][1]) // EOF on its stdin: it kills and reaps the sleeps
		_ = sh.Wait()
		closeAll(ps[1][0])
	}
	line, _ := bufio.NewReader(ps[1][0]).ReadString('\n')
	f := strings.Fields(line)
	for _, s := range f[min(1, len(f)):] {
		pid, err := strconv.Atoi(s)
		if err != nil {
			break
		}
		pids = append(pids, pid)
	}
	if len(f) == 0 || f[0] != "started" || len(pids) != n {
		stop()
		tb.Fatalf("the %d unrelated sleeps did not start: %q", n, line)
	}
	return pids, stop
}

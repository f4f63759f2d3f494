package conformance

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
)

// BenchmarkCatalogue runs the whole catalogue against the reference agent,
// as a process (this test binary) and in process (driver.Target's
// InProcess, as most of the tier's runs), sequentially, with one case per
// CPU and with every case at once (the tier's runs), and reports the wall
// time per catalogue, the mean wall time per case, and the runner's
// overhead per agent: start to the initialize answer (start-up plus
// handshake). The per-case means are logged with -v. CPU per catalogue is
// what `go test -cpuprofile` or /usr/bin/time shows of the benchmark.
//
//	go test -run '^$' -bench Catalogue -benchtime 10x ./suites/conformance/
func BenchmarkCatalogue(b *testing.B) {
	cases, err := conformance.LoadCases(conformancefixtures.FS, ".")
	if err != nil {
		b.Fatal(err)
	}
	validator, err := driver.NewSchemaValidator()
	if err != nil {
		b.Fatal(err)
	}
	process := driver.Target{Name: "reference", Command: []string{selfexec.Path(), "agent", "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions"},
		Env: selfexec.Environ("todoharness")}
	inProcess := process
	inProcess.InProcess = cli.InProcessAgent
	for _, run := range []struct {
		name     string
		target   driver.Target
		parallel int
	}{
		{"process/parallel=1", process, 1},
		{fmt.Sprintf("process/parallel=%d", runtime.NumCPU()), process, runtime.NumCPU()},
		{"in-process/parallel=1", inProcess, 1},
		{fmt.Sprintf("in-process/parallel=%d", len(cases)), inProcess, len(cases)},
	} {
		target, parallel := run.target, run.parallel
		b.Run(run.name, func(b *testing.B) {
			perCase := map[string]time.Duration{}
			var caseTotal, startupTotal, total time.Duration
			procs, ncases := 0, 0
			for i := 0; i < b.N; i++ {
				rep, err := conformance.Run(context.Background(), conformance.Config{Agent: target, Cases: cases, Parallel: parallel,
					Validator: conformance.Compiled(validator), Settle: settleWindow, Timeout: caseTimeout, Grace: graceWindow})
				if err != nil {
					b.Fatal(err)
				}
				if !rep.OK {
					b.Fatalf("the reference agent failed: %v", rep.Failing)
				}
				total += rep.Duration
				for _, c := range rep.Cases {
					perCase[c.ID] += c.Duration
					caseTotal += c.Duration
					ncases++
					for _, p := range c.Evidence().Procs {
						startupTotal += p.Startup
						procs++
					}
				}
			}
			ms := func(d time.Duration, n int) float64 { return float64(d) / float64(n) / 1e6 }
			b.ReportMetric(ms(total, b.N), "ms/catalogue")
			b.ReportMetric(ms(caseTotal, ncases), "ms/case")
			b.ReportMetric(ms(startupTotal, procs), "ms/process-start+initialize")
			ids := make([]string, 0, len(perCase))
			for id := range perCase {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				b.Logf("%-20s %7.1f ms", id, ms(perCase[id], b.N))
			}
		})
	}
}

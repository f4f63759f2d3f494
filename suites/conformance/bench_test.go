package conformance

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/todoharness/todoharness/conformance"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
)

// BenchmarkCatalogue runs the whole catalogue against the reference agent
// binary, sequentially and with one case per CPU, and reports the wall time
// per catalogue, the mean wall time per case, and the runner's overhead per
// agent process: process start to the initialize answer (start-up plus
// handshake). The per-case means are logged with -v.
//
//	go test -run '^$' -bench Catalogue -benchtime 10x ./suites/conformance/
func BenchmarkCatalogue(b *testing.B) {
	cases, err := conformance.LoadCases(conformancefixtures.FS, ".")
	if err != nil {
		b.Fatal(err)
	}
	target := conformance.Target{Name: "reference", Command: []string{selfexec.Path(), "agent", "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions"},
		Env: selfexec.Environ("todoharness")}
	for _, parallel := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("parallel=%d", parallel), func(b *testing.B) {
			perCase := map[string]time.Duration{}
			var caseTotal, startupTotal, total time.Duration
			procs, ncases := 0, 0
			for i := 0; i < b.N; i++ {
				rep, err := conformance.Run(context.Background(), conformance.Config{Agent: target, Cases: cases, Parallel: parallel})
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

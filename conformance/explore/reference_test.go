package explore_test

import (
	"context"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/explore"
	"github.com/todoharness/todoharness/driver"
	exploredfixtures "github.com/todoharness/todoharness/fixtures/explored"
	"github.com/todoharness/todoharness/internal/testutil"
)

// reference is the reference agent in this process, with a bridge fault
// ("" for none).
func reference(fault string) driver.Target {
	t := driver.Target{Name: "reference", Command: cli.ReferenceAgentArgs("todoharness"), InProcess: cli.InProcessAgent}
	if fault != "" {
		t.Name, t.Env = "fault "+fault, []string{"TODOHARNESS_FAULT=" + fault}
	}
	return t
}

// runConfig is a run of scenarios against t: in process, so every batch
// runs at once; the case timeout bounds a failure only.
func runConfig(t *testing.T, target driver.Target, v *driver.SchemaValidator) conformance.Config {
	return conformance.Config{Agent: target, Timeout: time.Minute, Grace: 5 * time.Second, Settle: 20 * time.Millisecond,
		Parallel: 32, Validator: conformance.Compiled(v), TempDir: t.TempDir()}
}

func validator(t *testing.T) *driver.SchemaValidator {
	v, err := driver.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The judge agrees with the oracle on every scenario the reference agent
// runs, on ACP v1 and on the v2 draft: no check fails.
func TestReferenceAgreesWithTheOracle(t *testing.T) {
	// Under -race (and -short) a fifth of them: make test runs the whole
	// two hundred (a hundred on v2) again without -race (the Makefile's test
	// target).
	for _, tc := range []struct {
		name    string
		version int
		n       int
	}{{"v1", driver.ACPv1, 200}, {"v2", driver.ACPv2, 100}} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.n
			if testing.Short() || testutil.RaceEnabled {
				n /= 5
			}
			run := runConfig(t, reference(""), validator(t))
			run.Offer.ACPVersion = tc.version
			res, err := explore.Explore(context.Background(), explore.Config{Run: run, Seed: 1, N: n})
			if err != nil {
				t.Fatal(err)
			}
			if res.Scenarios != n || res.NotJudged != 0 {
				t.Errorf("%d scenarios judged, %d not, want %d", res.Scenarios, res.NotJudged, n)
			}
			if f := strings.Fields(res.Protocol); len(f) == 0 || f[0] != strconv.Itoa(tc.version) {
				t.Errorf("the exploration says it ran ACP protocol version %q, want %d", res.Protocol, tc.version)
			}
			for _, f := range res.Failures {
				t.Errorf("%s failed on %d scenario(s), first %d: %s\nshrunk: %s\n%s", f.Check, f.Hits, f.Index, f.Reason, f.ShrunkReason, f.CaseYAML)
			}
		})
	}
}

// A shrunk case is an ordinary case: loaded from --out and run again, it
// fails the same check.
func TestAShrunkCaseFailsTheSameWay(t *testing.T) {
	out := t.TempDir()
	v := validator(t)
	res, err := explore.Explore(context.Background(), explore.Config{Run: runConfig(t, reference("accept-duplicates"), v), Seed: 1, N: 100, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	var f explore.Failure
	for _, g := range res.Failures {
		if g.Check != "TW-VALID-DUP" {
			t.Fatalf("failures %+v, want TW-VALID-DUP alone", res.Failures)
		}
		if g.Signature == explore.RuleDuplicate+"/"+explore.AtPrompt {
			f = g
		}
	}
	t.Logf("shrunk in %d runs:\n%s", f.ShrinkRuns, f.CaseYAML)
	if f.Reruns != 2 || f.Reproduced != 2 || f.ShrinkError != "" {
		t.Errorf("the shrunk case failed %d of %d re-runs (want 2 of 2), shrink error %q", f.Reproduced, f.Reruns, f.ShrinkError)
	}
	if f.Signature != explore.RuleDuplicate+"/"+explore.AtPrompt || f.Case != filepath.Join(out, explore.FailuresDir, "explored-tw-valid-dup--duplicate--prompt", conformance.CaseFile) {
		t.Errorf("case written to %s", f.Case)
	}
	cases, err := conformance.LoadCases(os.DirFS(filepath.Join(out, explore.FailuresDir)), ".")
	if err != nil {
		t.Fatal(err)
	}
	cfg := runConfig(t, reference("accept-duplicates"), v)
	cfg.Cases = cases
	rep, err := conformance.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.FailedIDs(); strings.Join(got, ",") != "TW-VALID-DUP" {
		t.Errorf("the shrunk case fails %v, want TW-VALID-DUP\n%s", got, f.CaseYAML)
	}
	cfg.Agent = reference("")
	if rep, err = conformance.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if got := rep.FailedIDs(); len(got) > 0 {
		t.Errorf("against the reference agent the shrunk case fails %v", got)
	}
}

// The report and the progress line say what the scenarios cost: their
// wall time and rate, and where the CPU time is read (cpuRead) the CPU
// time in all and per scenario.
func TestTheReportSaysWhatTheScenariosCost(t *testing.T) {
	var prog strings.Builder
	out := t.TempDir()
	res, err := explore.Explore(context.Background(), explore.Config{Run: runConfig(t, reference(""), validator(t)), Seed: 5, N: 8,
		Out: out, Progress: &prog, ProgressEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, explore.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	got, err := explore.ParseResult(b, explore.ResultFile)
	if err != nil {
		t.Fatal(err)
	}
	if got.Scenarios != 8 || got.ScenariosMs <= 0 || got.ScenariosMs > res.DurationMs {
		t.Fatalf("%d scenarios in %d ms (the whole run %d ms)\n%s", got.Scenarios, got.ScenariosMs, res.DurationMs, b)
	}
	if want := math.Round(8*60000/float64(got.ScenariosMs)*10) / 10; got.ScenariosPerMinute != want {
		t.Errorf("scenariosPerMinute %g, want %g (8 in %d ms)", got.ScenariosPerMinute, want, got.ScenariosMs)
	}
	line := `(?m)^explore: 8/8 scenarios, 0 failure\(s\), [\d.]+/s \(\d+ a minute\), 0s left$`
	if cpuRead {
		if got.CPUMs <= 0 || math.Abs(got.CPUPerScenarioMs-float64(got.CPUMs)/8) > 0.001 {
			t.Errorf("cpuMs %d, cpuPerScenarioMs %g: want the CPU time and its eighth\n%s", got.CPUMs, got.CPUPerScenarioMs, b)
		}
		line = `(?m)^explore: 8/8 scenarios, 0 failure\(s\), [\d.]+/s \(\d+ a minute\), [\d.]+(µs|ms|s) CPU a scenario, 0s left$`
	}
	if !regexp.MustCompile(line).MatchString(prog.String()) {
		t.Errorf("no progress line with the rate a minute and the CPU a scenario:\n%s", prog.String())
	}
	var sum strings.Builder
	if err := got.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "explore: the scenarios took ") || !strings.Contains(sum.String(), " a minute") {
		t.Errorf("the summary does not say what the scenarios took:\n%s", sum.String())
	}
}

// BenchmarkScenarios measures scenarios per second against the reference
// agent in this process (docs/performance.md): 64 scenarios per run, all
// at once, settle 20ms.
func BenchmarkScenarios(b *testing.B) {
	v, err := driver.NewSchemaValidator()
	if err != nil {
		b.Fatal(err)
	}
	cfg := conformance.Config{Agent: reference(""), Timeout: time.Minute, Grace: 5 * time.Second, Settle: 20 * time.Millisecond,
		Parallel: 64, Validator: conformance.Compiled(v), TempDir: b.TempDir()}
	benchExplore(b, cfg, 64)
}

// benchExplore explores 64 scenarios of cfg's agent per iteration, in
// batches of batch, seeds 0, 1, 2, ..., and reports scenarios/s and the
// CPU time of the process per scenario (agents, mock models, runner and
// judge alike, as the report says it: on a shared machine the rate depends
// on the load, this much less; 0 where the process's CPU time is not read).
func benchExplore(b *testing.B, cfg conformance.Config, batch int) {
	n, cpuMs := 0, int64(0)
	for i := 0; b.Loop(); i++ {
		res, err := explore.Explore(context.Background(), explore.Config{Run: cfg, Seed: uint64(i), N: 64, Batch: batch})
		if err != nil {
			b.Fatal(err)
		}
		if !res.OK() {
			b.Fatalf("failures: %+v", res.Failures)
		}
		n += res.Scenarios
		cpuMs += res.CPUMs
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "scenarios/s")
	b.ReportMetric(float64(cpuMs)/float64(max(n, 1)), "cpu-ms/scenario")
}

// The cases exploration found against the agents make peers installs
// (fixtures/explored) are kept as regression cases: each feeds the check
// its folder names (or that check judges every case), and the reference
// agent passes every one.
func TestKeptCasesPassAgainstTheReference(t *testing.T) {
	agents, err := fs.ReadDir(exploredfixtures.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	always := map[string]bool{}
	for _, c := range conformance.Catalogue() {
		always[c.ID] = c.Always
	}
	n := 0
	v := validator(t)
	for _, a := range agents {
		if !a.IsDir() {
			continue
		}
		cases, err := conformance.LoadCases(exploredfixtures.FS, a.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			// explored-<check>, or explored-<check>--<op>--<step>.
			name, _, _ := strings.Cut(strings.TrimPrefix(c.ID, "explored-"), "--")
			check := strings.ToUpper(name)
			if !c.Feeds(check) && !always[check] {
				t.Errorf("%s: the case does not feed %s, the check its folder names", c.Source, check)
			}
		}
		n += len(cases)
		cfg := runConfig(t, reference(""), v)
		cfg.Cases = cases
		rep, err := conformance.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.FailedIDs(); len(got) > 0 {
			t.Errorf("%s: against the reference agent the kept cases fail %v", a.Name(), got)
		}
	}
	if n == 0 {
		t.Fatal("no kept case under fixtures/explored")
	}
}

// An exploration runs the probe once: its batches, shrinks and re-runs
// after the first detect the dialect from the first one's probe.
func TestOneProbePerExploration(t *testing.T) {
	target := reference("accept-duplicates")
	var probes, starts atomic.Int32
	inner := target.InProcess
	target.InProcess = func(ctx context.Context, p driver.ProcIO) int {
		starts.Add(1)
		if strings.HasPrefix(filepath.Base(p.Dir), "conform-probe-") {
			probes.Add(1)
		}
		return inner(ctx, p)
	}
	res, err := explore.Explore(context.Background(), explore.Config{Run: runConfig(t, target, validator(t)), Seed: 1, N: 48, Batch: 16})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) == 0 || res.Failures[0].ShrinkRuns == 0 || res.Failures[0].Reruns == 0 {
		t.Fatalf("failures %+v: want one shrunk and re-run, for runs after the batches", res.Failures)
	}
	if probes.Load() != 1 {
		t.Errorf("%d probe(s) among %d agent starts, want 1", probes.Load(), starts.Load())
	}
}

// Two bugs that fail one check are two failures, each shrunk: an agent
// that replays no plan on session/load and reverses the plans of a turn
// fails TW-FINAL-1 at the load and at the end of a prompt, and each is
// kept with a case that fails that way (the re-runs fail it with the
// same signature). TW-FINAL-1 was one failure, its first scenario's.
func TestTwoBugsOfOneCheckAreTwoFailures(t *testing.T) {
	out := t.TempDir()
	res, err := explore.Explore(context.Background(), explore.Config{Run: runConfig(t, reference("no-load-replay,plans-reversed"), validator(t)),
		Seed: 1, N: 64, Out: out, ShrinkRuns: 12, ShrinkIf: func(check string) bool { return check == "TW-FINAL-1" }})
	if err != nil {
		t.Fatal(err)
	}
	where := map[string]explore.Failure{}
	for _, f := range res.Failures {
		if f.Check != "TW-FINAL-1" {
			continue
		}
		_, step, _ := strings.Cut(f.Signature, "/")
		t.Logf("%s %s: %d scenario(s), first %d, shrunk to %d steps: %s", f.Check, f.Signature, f.Hits, f.Index, f.Steps, f.ShrunkReason)
		if g, ok := where[step]; !ok || f.Hits > g.Hits {
			where[step] = f
		}
		if !strings.Contains(f.Case, "explored-tw-final-1--"+strings.ReplaceAll(f.Signature, "/", "--")) {
			t.Errorf("%s %s written to %s", f.Check, f.Signature, f.Case)
		}
		if f.Reruns == 0 || f.Reproduced != f.Reruns {
			t.Errorf("%s %s: the shrunk case failed %d of %d re-runs the same way", f.Check, f.Signature, f.Reproduced, f.Reruns)
		}
	}
	load, prompt := where[explore.AtLoad], where[explore.AtPrompt]
	if !strings.Contains(load.ShrunkReason, "at session/load") || !strings.Contains(prompt.ShrunkReason, "at the end of prompt") {
		t.Errorf("TW-FINAL-1 at a load: %q; at a prompt: %q; want both, shrunk apart", load.ShrunkReason, prompt.ShrunkReason)
	}
}

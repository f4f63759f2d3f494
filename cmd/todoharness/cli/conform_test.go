package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/explore"
	"github.com/todoharness/todoharness/driver"
)

// An agent command naming a file relative to the runner's directory is
// flagged: the agent runs in the case's directory, where it names nothing.
func TestRelativeFileArgs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"agent.py", "bin/agent"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		argv []string
		want []string
	}{
		{[]string{"python3", "agent.py"}, []string{"agent.py"}},
		{[]string{"./bin/agent", "--acp"}, []string{"./bin/agent"}},
		{[]string{"bin/agent", "--config", "agent.py"}, []string{"bin/agent", "agent.py"}},
		{[]string{"python3", filepath.Join(dir, "agent.py")}, nil},      // absolute
		{[]string{"python3", "missing.py"}, nil},                        // names nothing here either
		{[]string{"agent.py"}, nil},                                     // a command without a slash is looked up in PATH
		{[]string{"python3", "bin"}, nil},                               // a folder
		{[]string{"my-agent", "--base-url", "{{.BaseURL}}", "-v"}, nil}, // flags and templates
	} {
		if got := relativeFileArgs(tc.argv); !slices.Equal(got, tc.want) {
			t.Errorf("relativeFileArgs(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// A conform run given a validator (WithSchemaValidator) uses it instead of
// compiling the schema: a run, and judging its saved evidence again, then
// allocate far less than the compilation does.
func TestConformUsesTheGivenValidator(t *testing.T) {
	evidence := filepath.Join(t.TempDir(), "t")
	run := func(ctx context.Context, args ...string) {
		t.Helper()
		var out bytes.Buffer
		if code := Run(ctx, append([]string{"conform", "-q"}, args...), strings.NewReader(""), &out, &out); code != 1 {
			t.Fatalf("conform %q: exit %d, want 1 (TW-VALID-DUP fails)\n%s", args, code, out.String())
		}
	}
	failing := []string{"--in-process", "--env", "TODOHARNESS_FAULT=accept-duplicates", "--check", "TW-VALID-DUP", "--settle", "50ms"}
	// The failing case's evidence, saved by --out.
	run(context.Background(), append(failing, "--out", evidence)...)
	allocs := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	var v *driver.SchemaValidator
	compile := allocs(func() {
		var err error
		if v, err = driver.NewSchemaValidator(); err != nil {
			t.Fatal(err)
		}
	})
	for _, args := range [][]string{failing, {"--judge", evidence}} {
		own := allocs(func() { run(context.Background(), args...) })
		given := allocs(func() { run(WithSchemaValidator(context.Background(), v), args...) })
		if own < given || own-given < compile/2 {
			t.Errorf("conform %q allocated %d times compiling its own validator and %d with one given: want at least %d fewer (half a compilation's %d)",
				args, own, given, compile/2, compile)
		}
	}
}

// conform pools by default, for the catalogue and for an exploration:
// the first line, the JSON report and explore.json say which mode ran
// (and, pooled, which cases that failed there run again alone:
// --rerun-pooled); --pool off restores a process per case.
func TestConformPoolsByDefault(t *testing.T) {
	for _, tc := range []struct {
		args                      []string
		want, rerun, header, note string
	}{
		{nil, "on", "known", ", pool on (sessions of pooled agent processes where no fresh process is needed; --rerun-pooled known)\n", "the agent runs in the runner's process"},
		{[]string{"--rerun-pooled", "every"}, "on", "every", ", pool on (sessions of pooled agent processes where no fresh process is needed; --rerun-pooled every)\n", "the agent runs in the runner's process"},
		{[]string{"--pool", "off"}, "off", "", ", pool off (a process per case)\n", "pool off: every case had a process of its own"},
	} {
		dir := t.TempDir()
		report := filepath.Join(dir, "report.json")
		var out bytes.Buffer
		args := append([]string{"conform", "--in-process", "--check", "TW-PLAN-1", "--settle", "50ms", "--json", report,
			"--explore", "4", "--seed", "1", "--out", filepath.Join(dir, "explored")}, tc.args...)
		if code := Run(context.Background(), args, strings.NewReader(""), &out, &out); code != 0 {
			t.Fatalf("conform %q: exit %d\n%s", tc.args, code, out.String())
		}
		var rep struct {
			Pool, FloorNote   string
			PooledCPUNote     string
			RerunPooled       string
			CPUMs, FloorCPUMs float64
			PooledCPUMs       float64
			CPUPerCaseMs      float64
			Cases             []struct{ ID string }
			FloorSessions     int
			CPUToFloor        float64
		}
		var res struct{ Pool, FloorNote string }
		decodeJSONFiles(t, map[string]any{report: &rep, filepath.Join(dir, "explored", explore.ResultFile): &res})
		if rep.Pool != tc.want || res.Pool != tc.want || rep.RerunPooled != tc.rerun {
			t.Errorf("conform %q: the report says pool %q (rerunPooled %q), explore.json %q, want %q (%q)", tc.args, rep.Pool, rep.RerunPooled, res.Pool, tc.want, tc.rerun)
		}
		// The CPU a case next to the floor: the agent in this process has
		// no CPU of its own, and the report says why there is no floor.
		if rep.FloorCPUMs != 0 || rep.FloorSessions != 0 || rep.CPUToFloor != 0 || !strings.Contains(rep.FloorNote, tc.note) ||
			!strings.Contains(out.String(), "floor: - ("+rep.FloorNote+")") {
			t.Errorf("conform %q: floor %g ms of %d sessions, ratio %g, note %q: want none, saying %q", tc.args, rep.FloorCPUMs, rep.FloorSessions, rep.CPUToFloor, rep.FloorNote, tc.note)
		}
		// Nor the CPU a pooled case cost the agent: none with the pool
		// off, and the agent in process has no CPU of its own.
		if rep.PooledCPUMs != 0 || (tc.want == "on") != strings.Contains(rep.PooledCPUNote, "the agent runs in the runner's process") ||
			(tc.want == "on" && !strings.Contains(out.String(), "; the CPU a pooled case cost its agent: - ("+rep.PooledCPUNote+")")) {
			t.Errorf("conform %q: pooledCpuMs %g, note %q: want none, saying why with the pool on", tc.args, rep.PooledCPUMs, rep.PooledCPUNote)
		}
		if tc.want == "off" && !strings.Contains(res.FloorNote, "pool off") {
			t.Errorf("conform %q: explore.json's floor note %q does not say the pool was off", tc.args, res.FloorNote)
		}
		if _, read := conformance.ProcessCPU(); read && (rep.CPUMs <= 0 || math.Abs(rep.CPUPerCaseMs-rep.CPUMs/float64(len(rep.Cases))) > 1) {
			t.Errorf("conform %q: cpuMs %g, cpuPerCaseMs %g: want the run's CPU and its share of %d cases", tc.args, rep.CPUMs, rep.CPUPerCaseMs, len(rep.Cases))
		}
		if !strings.Contains(out.String(), tc.header) || !strings.Contains(out.String(), "pool: "+tc.want+": ") {
			t.Errorf("conform %q: the output does not say %q and the summary's pool line:\n%s", tc.args, tc.header, out.String())
		}
	}
}

// conform --acp-version 2 offers v2: the header says what it offers, the
// summary, the JSON report and the exploration's report what the
// built-in agent negotiated (2).
func TestConformOffersV2(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	var out bytes.Buffer
	args := []string{"conform", "--in-process", "--check", "TW-PLAN-1", "--settle", "50ms", "--json", report, "--acp-version", "2",
		"--explore", "2", "--seed", "1", "--out", filepath.Join(dir, "explored")}
	if code := Run(context.Background(), args, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("conform --acp-version 2: exit %d\n%s", code, out.String())
	}
	var rep struct {
		Protocol struct{ Offered, Negotiated int }
	}
	var res struct{ Protocol string }
	decodeJSONFiles(t, map[string]any{report: &rep, filepath.Join(dir, "explored", explore.ResultFile): &res})
	if rep.Protocol.Offered != 2 || rep.Protocol.Negotiated != 2 || !strings.HasPrefix(res.Protocol, "2 (offered 2") {
		t.Errorf("the report says protocol %+v, explore.json %q; want offered and negotiated 2", rep.Protocol, res.Protocol)
	}
	for _, want := range []string{"per case, offering ACP protocol version 2, pool", "\nACP protocol version: 2 (offered 2: the ACP v2 draft"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output does not say %q:\n%s", want, out.String())
		}
	}
}

// decodeJSONFiles decodes each file into its value, failing the test on
// one it cannot read or decode.
func decodeJSONFiles(t *testing.T, files map[string]any) {
	t.Helper()
	for f, v := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

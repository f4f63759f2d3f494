package recording

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/proxy"
	"github.com/todoharness/todoharness/harness/llm/cassette/record"
	"github.com/todoharness/todoharness/harness/llm/cassette/replay"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
	"github.com/todoharness/todoharness/mockmodel"
	"github.com/todoharness/todoharness/scenario"
)

// Files a recording writes into the scenario folder (beside
// scenario.CassetteFile).
const (
	StdoutGolden = "stdout.golden.jsonl"
	PlanGolden   = "plan.golden.jsonl"
	ToolsGolden  = "tools.golden.json"
	SystemGolden = "system.golden.md"
)

// WireNames lists the --wire values: the wires the mock model speaks
// (mockmodel.WireInfo.Flag).
func WireNames() []string {
	var out []string
	for _, w := range mockmodel.Wires() {
		out = append(out, w.Flag)
	}
	return out
}

// Options configure Record and Replay.
type Options struct {
	// Agent is the agent under test, as conform takes it.
	Agent driver.Target
	// Wire is the model API the agent speaks (one of WireNames).
	Wire string
	// Upstream is the provider's base URL (Record only; may carry
	// user:password, which is never written).
	Upstream string
	// Model is offered to templates as {{.Model}}.
	Model string
	// Secrets are known secret values (the keys in the agent's
	// environment) scrubbed from everything written, on top of the
	// credentials the proxy sees in the agent's requests; on replay,
	// scrubbed from each live request before it is matched, and from
	// every diff printed.
	Secrets []string
	// Transport carries the live requests (http.DefaultTransport when nil).
	Transport http.RoundTripper
	// Description and Source go into the provenance (defaults: by the
	// upstream: mock-server for a loopback address, real-model otherwise).
	Description string
	Source      cassette.Source
	// Timeout bounds one run of the agent (default
	// driver.DefaultTimeout); Grace is its shutdown grace.
	Timeout, Grace time.Duration
	// TempDir is where working directories are made (default: the
	// system's).
	TempDir string
	// Now is the clock of the recording date.
	Now func() time.Time
	// Offer is what the agent's initialize offers (the zero value: ACP
	// protocol version 1); a v2 agent's prompt steps then wait for the
	// idle state_update that ends each turn (driver.DriveConfig.Offer). A
	// replay must offer what the recording did.
	Offer driver.Offer
}

// Outcome is what a run produced.
type Outcome struct {
	Scenario   *scenario.Scenario
	Provenance cassette.Provenance
	// Stdout is the normalised, scrubbed ACP stdout; Plan its plan
	// notifications; Tools and System the request pins.
	Stdout, Plan, Tools, System []byte
	// Exchanges is the number of model requests.
	Exchanges int
	// Notes are worth a look: steps answered with an error, how the agent
	// ended, its stderr tail on a failure.
	Notes []string
}

// run is one drive of the agent against a proxy.
type run struct {
	stdout       []byte
	agentVersion string
	cwd, home    string
	notes        []string
	failed       bool
}

// Record records the scenario in dir with the agent against opts.Upstream,
// replays the new cassette with the upstream gone, and only when the
// replay gives the same plan writes the cassette and the goldens into dir.
func Record(ctx context.Context, dir string, o Options) (*Outcome, error) {
	sc, err := scenario.Load(dir)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(WireNames(), o.Wire) {
		return nil, fmt.Errorf("record %s: --wire %q: want one of %s", sc.Name, o.Wire, strings.Join(WireNames(), ", "))
	}
	if o.Upstream == "" {
		return nil, fmt.Errorf("record %s: no --upstream URL to record against", sc.Name)
	}
	tmpDir, err := os.MkdirTemp(dir, ".record-")
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", sc.Name, err)
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, scenario.CassetteFile)
	rec, err := record.Start(record.Options{
		Path: tmp, Secrets: o.Secrets, RealTransport: o.Transport, Previous: sc.CassettePath(), Now: o.Now,
		Provenance: cassette.Provenance{
			BaseURL: o.Upstream, Scenario: sc.Name, Wire: o.Wire, Source: o.Source, Description: o.Description,
			Agent: strings.Join(o.Agent.Command, " "),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", sc.Name, err)
	}
	px, err := proxy.New(rec, o.Upstream)
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", sc.Name, err)
	}
	live, runErr := drive(ctx, sc, o, rec, px, "")
	closeProxy(ctx, px)
	if ctx.Err() != nil {
		// Interrupted: what was recorded so far is not a cassette.
		_ = rec.Discard()
		return nil, fmt.Errorf("record %s: interrupted (%w), %s left unchanged", sc.Name, context.Cause(ctx), dir)
	}
	if live != nil {
		rec.UpdateProvenance(func(p *cassette.Provenance) {
			p.AgentVersion = live.agentVersion
		})
	}
	if err := errors.Join(runErr, rec.Stop()); err != nil {
		return nil, fmt.Errorf("record %s: recording failed, %s left unchanged: %w", sc.Name, dir, err)
	}
	secrets := rec.Secrets()
	out := &Outcome{Scenario: sc, Provenance: rec.Provenance(), Exchanges: rec.Requests(), Notes: live.notes}
	if out.Exchanges == 0 {
		return out, fmt.Errorf("record %s: the agent made no model request through the proxy (is it pointed at {{.BaseURL}} / {{.URL}}?); notes: %s", sc.Name, strings.Join(live.notes, "; "))
	}
	if live.failed {
		return out, fmt.Errorf("record %s: the run failed, %s left unchanged: %s", sc.Name, dir, strings.Join(live.notes, "; "))
	}
	if err := out.fill(live, rec.Recorded(), secrets); err != nil {
		return out, fmt.Errorf("record %s: %w", sc.Name, err)
	}

	// The new cassette must replay, offline, to the same plan.
	withKeys := o
	withKeys.Secrets = secrets
	rep, err := replayFile(ctx, sc, tmp, withKeys)
	if err != nil {
		return out, fmt.Errorf("record %s: the new cassette does not replay, %s left unchanged: %w", sc.Name, dir, err)
	}
	if !bytes.Equal(rep.Plan, out.Plan) {
		return out, fmt.Errorf("record %s: replaying the new cassette does not give the recorded plan, %s left unchanged:\n%s", sc.Name, dir, diff(out.Plan, rep.Plan, "recorded", "replayed", secrets))
	}
	return out, out.save(dir, tmp, secrets)
}

// save moves the new cassette at tmp into the scenario folder dir and
// writes the goldens beside it, unless one of them still holds something
// that looks like a credential.
func (out *Outcome) save(dir, tmp string, secrets []string) error {
	sc := out.Scenario
	files := []struct {
		name string
		data []byte
	}{{StdoutGolden, out.Stdout}, {PlanGolden, out.Plan}, {ToolsGolden, out.Tools}, {SystemGolden, out.System}}
	for _, f := range files {
		if found := scrub.ScanSecrets(f.data, secrets); len(found) > 0 {
			return fmt.Errorf("record %s: not saved: %s still holds something that looks like a credential (%s)", sc.Name, f.name, found[0])
		}
	}
	if err := os.Rename(tmp, sc.CassettePath()); err != nil {
		return fmt.Errorf("record %s: %w", sc.Name, err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return fmt.Errorf("record %s: %w", sc.Name, err)
		}
	}
	return nil
}

// Replay replays the scenario in dir with the agent from its cassette
// (nothing leaves the machine) and compares the plan and the request pins
// with the goldens in dir. The error says what differed, with a diff; a
// request the cassette does not hold is a *replay.MissError.
func Replay(ctx context.Context, dir string, o Options) (*Outcome, error) {
	sc, err := scenario.Load(dir)
	if err != nil {
		return nil, err
	}
	out, err := replayFile(ctx, sc, sc.CassettePath(), o)
	if err != nil {
		return out, err
	}
	var errs []error
	for _, g := range []struct {
		name string
		got  []byte
	}{{PlanGolden, out.Plan}, {ToolsGolden, out.Tools}, {SystemGolden, out.System}} {
		want, err := os.ReadFile(filepath.Join(dir, g.name))
		if err != nil {
			errs = append(errs, fmt.Errorf("replay %s: %w (record the scenario to write it)", sc.Name, err))
			continue
		}
		if !bytes.Equal(want, g.got) {
			errs = append(errs, fmt.Errorf("replay %s: %s differs from the replay:\n%s", sc.Name, filepath.Join(dir, g.name), diff(want, g.got, g.name, "replay", o.Secrets)))
		}
	}
	return out, errors.Join(errs...)
}

// replayFile runs the agent against the cassette at path.
func replayFile(ctx context.Context, sc *scenario.Scenario, path string, o Options) (*Outcome, error) {
	rec, err := replay.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", sc.Name, err)
	}
	defer rec.Stop()
	rec.AddSecrets(o.Secrets...)
	px, err := proxy.New(rec, "")
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", sc.Name, err)
	}
	if o.Model == "" {
		o.Model = rec.Provenance().Model
	}
	interactions, err := cassette.Interactions(path)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", sc.Name, err)
	}
	r, runErr := drive(ctx, sc, o, rec, px, recordedBase(px, interactions))
	closeProxy(ctx, px)
	out := &Outcome{Scenario: sc, Provenance: rec.Provenance(), Exchanges: rec.Requests()}
	if r != nil {
		out.Notes = r.notes
	}
	if missErr := rec.Err(); missErr != nil {
		return out, fmt.Errorf("replay %s from %s: %w", sc.Name, path, missErr)
	}
	if runErr != nil {
		return out, fmt.Errorf("replay %s: %w", sc.Name, runErr)
	}
	if r.failed {
		return out, fmt.Errorf("replay %s: the run failed: %s", sc.Name, strings.Join(r.notes, "; "))
	}
	if left := rec.Unplayed(); len(left) > 0 {
		return out, fmt.Errorf("replay %s from %s: recorded interactions %v were never requested: the agent made fewer model calls than the recording", sc.Name, path, left)
	}
	if err := out.fill(r, interactions, nil); err != nil {
		return out, fmt.Errorf("replay %s: %w", sc.Name, err)
	}
	return out, nil
}

// fill computes the goldens of a run.
func (out *Outcome) fill(r *run, interactions []*vcr.Interaction, secrets []string) error {
	lines := bytes.Split(bytes.TrimRight(r.stdout, "\n"), []byte("\n"))
	if len(r.stdout) == 0 {
		lines = nil
	}
	scrubbed := scrub.RedactJSONLines(lines, secrets)
	out.Stdout = joinLines(scrubbed)
	plan, err := PlanLines(scrubbed)
	if err != nil {
		return err
	}
	out.Plan = plan
	out.Tools, out.System, err = Pins(interactions, r.cwd, r.home)
	return err
}

func joinLines(lines [][]byte) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// drive starts the agent pointed at the proxy, in a fresh cwd and home,
// and sends the scenario's steps. An error means the agent could not be
// run at all; a step answered with an error, or an agent that died, marks
// the run failed with notes.
func drive(ctx context.Context, sc *scenario.Scenario, o Options, rec proxy.Transport, px *proxy.Proxy, base string) (*run, error) {
	if base == "" {
		base = cmp.Or(px.BasePath(), "/v1")
	}
	res, err := driver.Drive(ctx, driver.DriveConfig{
		Env: driver.EnvConfig{Target: o.Agent, Name: sc.Name, DirPrefix: "record-" + sc.Name, TempDir: o.TempDir,
			Model: o.Model, ModelURL: px.URL, ModelBase: base},
		Steps: sc.Steps, Timeout: o.Timeout, Grace: o.Grace, ErrorAnswerFails: true, Offer: o.Offer,
		Prepared: func(env *driver.Env) {
			rec.SetPlaceholders(map[string]string{"{{cwd}}": env.Cwd, "{{home}}": env.Home})
		},
	})
	if res == nil {
		return nil, err
	}
	return &run{stdout: res.Stdout, agentVersion: res.AgentInfo, cwd: res.Cwd, home: res.Home, notes: res.Notes, failed: res.Failed}, err
}

// recordedBase is the base path {{.BaseURL}} gets on a replay: the
// upstream's, or "/v1" when it has none and the recorded paths start with
// it (an agent given …/v1 on the recording), else none (a cassette of a
// client addressed to the bare host, as the shipped DeepSeek ones).
func recordedBase(px *proxy.Proxy, interactions []*vcr.Interaction) string {
	if b := px.BasePath(); b != "" {
		return b
	}
	for _, in := range interactions {
		if u, err := url.Parse(in.Request.URL); err == nil && !strings.HasPrefix(u.Path, "/v1/") && !strings.HasPrefix(u.Path, "/v1beta/") {
			return "/"
		}
	}
	return "/v1"
}

func closeProxy(ctx context.Context, px *proxy.Proxy) {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = px.Close(c)
}

// diff is a unified diff from a to b, with every known secret and
// credential-shaped value in it redacted: a diff is printed.
func diff(a, b []byte, from, to string, secrets []string) string {
	return scrub.RedactText(unifiedDiff(a, b, from, to), secrets)
}

func unifiedDiff(a, b []byte, from, to string) string {
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(a)), B: difflib.SplitLines(string(b)), FromFile: from, ToFile: to, Context: 2,
	})
	if err != nil {
		return err.Error()
	}
	return d
}

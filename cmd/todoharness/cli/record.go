package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/fromlog"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/mockmodel"
	"github.com/todoharness/todoharness/recording"
	"github.com/todoharness/todoharness/scenario"
)

// defaultScenarios is where `record` finds the e2e scenarios.
const defaultScenarios = "fixtures/e2e"

// recordFlags are the flags of `todoharness record` and `todoharness
// replay`.
type recordFlags struct {
	dir, model       string
	all, mock        bool
	upstream, wire   string
	provider, keyEnv string
	secretEnv        []string
	target           targetFlags
	run              runFlags
	acpVersion       int
}

// offer is what the agent's initialize offers (--acp-version).
func (f *recordFlags) offer() (driver.Offer, error) {
	o := driver.Offer{ACPVersion: f.acpVersion}
	if err := o.Check(); err != nil {
		return o, fmt.Errorf("--acp-version: %w", err)
	}
	return o, nil
}

// newRecordCmd is `todoharness record`: run e2e scenarios through an agent
// while recording the model's HTTP exchanges into each scenario's cassette.
func newRecordCmd() *cobra.Command {
	var f recordFlags
	cmd := &cobra.Command{
		Use:   "record [--agent CMD | --preset NAME] [--upstream URL --wire WIRE] [--all | SCENARIO...]",
		Short: "Record e2e cassettes of any agent against a real provider (or the reference agent; --mock for the mock)",
		Long: `Record the model exchanges of e2e scenarios (folders with an input.json of ACP
steps; a SCENARIO is a folder path or a name under --dir) into
<scenario>/cassette.yaml. See docs/recording.md.

Any agent (--agent CMD or --preset NAME): a local proxy on 127.0.0.1 forwards
to --upstream through a go-vcr recorder; the agent is pointed at it exactly as
conform points it at the mock ({{.BaseURL}}, {{.URL}}, {{.Model}}, --env,
--file, a throw-away HOME), the scenario's steps are driven over ACP, and the
cassette (with its provenance: agent command and version, wire, upstream host,
model, date, tool version), stdout.golden.jsonl (the normalised ACP stdout),
plan.golden.jsonl (the plan notifications), tools.golden.json and
system.golden.md (the tool definitions and system prompt the agent sent) are
written into the scenario folder, once the new cassette replayed offline to the
same plan. The agent gets its key from this process's environment (e.g.
OPENAI_API_KEY); a preset sets a dummy key for the mock (ANTHROPIC_API_KEY=mock),
so pass the real one through with a bare --env NAME. Never put a key on the
command line.

The reference agent (no --agent): it speaks OpenAI chat completions, so it
records against any provider's OpenAI-compatible endpoint: --provider
deepseek (default; DEEPSEEK_API_KEY, DEEPSEEK_BASE_URL, DEEPSEEK_MODEL),
openai (OPENAI_API_KEY), anthropic (ANTHROPIC_API_KEY, its OpenAI SDK
compatibility endpoint), gemini (GEMINI_API_KEY, its OpenAI compatibility
endpoint), or any --upstream URL with --key-env NAME. With --mock, each
scenario that has a mock-script.yaml is recorded against the local mock model
server playing that script (labelled mock-server: scripted answers, not model
output).

Credentials are scrubbed before anything is saved: every credential header,
cookie, key-like query parameter and URL password, and every known secret
value (the keys the agent sent, the values of this process's *KEY*, *TOKEN*,
*SECRET*, *PASSWORD* variables and --secret-env) in every form of
cassette.KeyForms: plain, base64 and base32 at every alignment, hex in
either case, JSON-escaped, URL-encoded once or twice, also split across
stream deltas, an encoded one with its whole token; and by its fragments
(any 8 of its characters, case, separators, order and rot13 ignored, in
HTML entities, base64, hex, Ascii85, gzip and UTF-16, nested): what can be
located is redacted, a header named after a key is dropped. The saved files
are scanned again (each line, the file as one text, each field) and nothing
is written if anything is left; the error names the interaction, the field
and the form. No diff, error
or log line prints a secret: what a scan finds is masked.
Recording an unchanged scenario again writes the same bytes.

Exit status: 0 when every scenario was recorded, scrubbed, saved and replayed
to the same plan; 130 when interrupted (SIGINT, SIGTERM: the scenario being
recorded is left unchanged, those before it are saved); 2 when one was not (the run stops there and says why; the
scenarios before it are saved) or the command line is wrong (no key, no
--upstream, an unknown --wire or --provider).`,
		Example: `  OPENAI_API_KEY=… todoharness record --agent 'my-agent acp' --env OPENAI_BASE_URL={{.BaseURL}} \
      --upstream https://api.openai.com/v1 --wire openai-chat --model gpt-4o-mini scenarios/todo-plan
  ANTHROPIC_API_KEY=… todoharness record --preset claude --env ANTHROPIC_API_KEY --upstream https://api.anthropic.com \
      --wire anthropic --model claude-haiku-4-5 scenarios/todo-plan
  DEEPSEEK_API_KEY=… todoharness record --all
  todoharness record --mock --all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return interrupted(cmd, runRecord(cmd, &f, args))
		},
	}
	fl := cmd.Flags()
	f.register(fl)
	fl.BoolVar(&f.mock, "mock", false, "reference agent: record against the local mock model server playing each scenario's mock-script.yaml")
	fl.StringVar(&f.upstream, "upstream", "", "base URL of the provider to record against (https://api.openai.com/v1, https://api.anthropic.com, ...)")
	fl.StringVar(&f.wire, "wire", "", "model API the agent speaks: "+strings.Join(recording.WireNames(), ", ")+" (the reference agent: openai-chat)")
	fl.StringVar(&f.provider, "provider", "", "reference agent: "+strings.Join(providerNames(), ", ")+" (default deepseek)")
	fl.StringVar(&f.keyEnv, "key-env", "", "reference agent: the variable holding the API key (default: the provider's)")
	fl.StringArrayVar(&f.secretEnv, "secret-env", nil, "NAME of a variable whose value is a secret to scrub (repeatable; *KEY*, *TOKEN*, *SECRET*, *PASSWORD* variables are taken anyway)")
	return cmd
}

// interrupted turns the error of a record that a signal interrupted (its
// context ended: SIGINT, SIGTERM) into exit status 130, saying so; other
// errors pass through.
func interrupted(cmd *cobra.Command, err error) error {
	ctx := cmd.Context()
	if err == nil || ctx == nil || ctx.Err() == nil {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, "interrupted") {
		msg = fmt.Sprintf("interrupted (%v): %s", context.Cause(ctx), msg)
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "todoharness:", msg)
	return exitCode(130)
}

// register defines the flags record and replay share.
func (f *recordFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.dir, "dir", defaultScenarios, "folder of e2e scenarios (SCENARIO names are looked up here)")
	fl.StringVar(&f.model, "model", "", "model name, offered to templates as {{.Model}} (default: the provider's; on replay the cassette's)")
	fl.BoolVar(&f.all, "all", false, "every scenario in --dir")
	f.target.register(fl, targetHelp{fileWhere: "the working directory, or the throw-away home",
		envNote: "; a bare NAME passes this process's $NAME through, over a preset's dummy key"})
	f.run.registerTimeouts(fl, "scenario")
	fl.IntVar(&f.acpVersion, "acp-version", driver.ACPv1, "the ACP protocol version the agent's initialize offers: 1, or 2 (the v2 draft: each prompt's turn ends at an idle state_update, which the run waits for); replay a cassette with the version it was recorded with")
}

// scenarioDirs resolves SCENARIO arguments: a folder path, or a name under
// --dir; --all takes every scenario of --dir.
func (f *recordFlags) scenarioDirs(args []string, verb string) ([]string, error) {
	if f.all == (len(args) > 0) {
		return nil, fmt.Errorf("%s: name the scenarios, or pass --all", verb)
	}
	if f.all {
		names, err := scenario.List(f.dir)
		if err != nil {
			abs, _ := filepath.Abs(f.dir)
			return nil, fmt.Errorf("%s --all: looked for scenario folders (each holding %s) in --dir %s (%s), found none: run it in a clone of todoharness, or give --dir: %w",
				verb, scenario.InputFile, f.dir, abs, err)
		}
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join(f.dir, n))
		}
		return out, nil
	}
	var out []string
	for _, a := range args {
		if _, err := os.Stat(filepath.Join(a, scenario.InputFile)); err == nil {
			out = append(out, a)
			continue
		}
		out = append(out, filepath.Join(f.dir, a))
	}
	return out, nil
}

// agentTarget is the --agent / --preset target, or nil for the reference
// agent run in-process.
func (f *recordFlags) agentTarget() (*driver.Target, *driver.Preset, error) {
	if f.target.agent == "" && f.target.preset == "" {
		return nil, nil, nil
	}
	preset, err := f.target.presetOf()
	if err != nil {
		return nil, nil, err
	}
	opts := f.target
	if opts.env, err = passThrough(opts.env); err != nil {
		return nil, nil, err
	}
	t, err := buildTarget(opts, preset)
	if err != nil {
		return nil, nil, err
	}
	return &t, preset, nil
}

// passThrough turns each bare --env NAME into NAME=<this process's $NAME>:
// how a key reaches an agent whose preset sets a dummy one for the mock
// (ANTHROPIC_API_KEY=mock), without the key on the command line. An unset
// NAME is an error.
func passThrough(env []string) ([]string, error) {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.Contains(kv, "=") {
			out = append(out, kv)
			continue
		}
		v, ok := os.LookupEnv(kv)
		if !ok || v == "" {
			return nil, fmt.Errorf("--env %s: pass %s through to the agent: it is not set in this environment", kv, kv)
		}
		out = append(out, kv+"="+v)
	}
	return out, nil
}

// knownSecrets are the values of the environment's credential-named
// variables and of --secret-env.
func (f *recordFlags) knownSecrets() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if secretName.MatchString(k) || slices.Contains(f.secretEnv, k) {
			out = append(out, v)
		}
	}
	return out
}

var secretName = regexp.MustCompile(`(?i)(key|token|secret|passw|credential)`)

func runRecord(cmd *cobra.Command, f *recordFlags, args []string) error {
	ctx, out, errw := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	dirs, err := f.scenarioDirs(args, "record")
	if err != nil {
		return err
	}
	offer, err := f.offer()
	if err != nil {
		return err
	}
	target, preset, err := f.agentTarget()
	if err != nil {
		return err
	}
	if target == nil {
		return recordReference(ctx, out, errw, f, dirs)
	}
	if f.upstream == "" || f.wire == "" {
		return errors.New("record --agent: --upstream URL and --wire " + strings.Join(recording.WireNames(), "|") + " are required (where to record, and which API the agent speaks)")
	}
	if f.mock {
		return errors.New("record --agent: --mock records the reference agent only; point --upstream at `todoharness mock serve` instead")
	}
	model := f.model
	if model == "" {
		model = "mock"
		if !cassette.IsLoopback(f.upstream) {
			return errors.New("record --agent: --model is required against a real provider (the model the agent asks for, {{.Model}})")
		}
	}
	for _, dir := range dirs {
		res, err := recording.Record(ctx, dir, recording.Options{
			Agent: *target, Wire: f.wire, Upstream: f.upstream, Model: model, Secrets: f.knownSecrets(),
			Timeout: f.run.caseTimeout(preset), Grace: f.run.grace, Offer: offer,
		})
		if err != nil {
			return err
		}
		p := res.Provenance
		fmt.Fprintf(out, "recorded %s: %d exchange(s) [%s, %s, %s, %s]; offline replay gives the same plan; wrote %s, %s, %s, %s, %s\n",
			res.Scenario.Name, res.Exchanges, p.Source, p.APIHost, p.Model, p.Wire, scenario.CassetteFile,
			recording.StdoutGolden, recording.PlanGolden, recording.ToolsGolden, recording.SystemGolden)
		for _, n := range res.Notes {
			fmt.Fprintln(errw, "  note:", n)
		}
	}
	fmt.Fprintln(out, "review every diff before committing: git diff -- "+strings.Join(dirs, " "))
	return nil
}

// provider is an OpenAI-compatible endpoint the reference agent can record
// against.
type provider struct {
	name, baseURL, keyEnv, model string
}

func providers() []provider {
	return []provider{
		{"deepseek", openaichat.DefaultBaseURL, "DEEPSEEK_API_KEY", openaichat.DefaultModel},
		{"openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini"},
		{"anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", "claude-haiku-4-5"},
		{"gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY", "gemini-2.5-flash"},
	}
}

func providerNames() []string {
	var out []string
	for _, p := range providers() {
		out = append(out, p.name)
	}
	return out
}

// recordReference records the reference agent, in-process, against a
// provider's OpenAI-compatible endpoint (or the mock with --mock).
func recordReference(ctx context.Context, out, errw io.Writer, f *recordFlags, dirs []string) error {
	if f.wire != "" && f.wire != "openai-chat" {
		return fmt.Errorf("record: the reference agent speaks openai-chat only; record Anthropic and Gemini through their OpenAI-compatible endpoints (--provider anthropic, --provider gemini), or record another agent with --agent for --wire %s", f.wire)
	}
	cfg := openaichat.ConfigFromEnv(f.model)
	if f.provider != "" && f.provider != "deepseek" {
		var p *provider
		for _, x := range providers() {
			if x.name == f.provider {
				p = &x
			}
		}
		if p == nil {
			return fmt.Errorf("record: --provider %q: want one of %s", f.provider, strings.Join(providerNames(), ", "))
		}
		cfg.BaseURL, cfg.APIKey, cfg.Model = p.baseURL, os.Getenv(p.keyEnv), p.model
		if f.keyEnv == "" {
			f.keyEnv = p.keyEnv
		}
		if f.model != "" {
			cfg.Model = f.model
		}
	}
	if f.upstream != "" {
		cfg.BaseURL = f.upstream
	}
	if f.keyEnv != "" {
		cfg.APIKey = os.Getenv(f.keyEnv)
	}
	if !f.mock && cfg.APIKey == "" {
		return errors.New("record: no API key, so there is no model to record against " +
			"(set DEEPSEEK_API_KEY, or --provider NAME with its key variable, or --upstream URL --key-env NAME; " +
			"or pass --mock to record the scripted scenarios against the local mock server)")
	}
	recorded := 0
	for _, dir := range dirs {
		sc, err := scenario.Load(dir)
		if err != nil {
			return err
		}
		c := cfg
		prov := cassette.Provenance{Wire: "openai-chat"}
		if f.mock {
			if sc.MockScript == "" {
				fmt.Fprintf(errw, "skip %s: no %s (its cassette is not recorded against the mock server)\n", sc.Name, scenario.MockScriptFile)
				continue
			}
			script, err := mockmodel.LoadScript(sc.MockScript)
			if err != nil {
				return err
			}
			srv := mockmodel.NewServer(script)
			c.BaseURL, c.APIKey = srv.BaseURL(), ""
			prov.Source = cassette.SourceMockServer
			prov.Description = fmt.Sprintf("recorded against the local mock model server playing %s: scripted answers, NOT real-model output",
				filepath.ToSlash(filepath.Join(f.dir, sc.Name, scenario.MockScriptFile)))
			err = recordOne(ctx, out, sc, c, prov, f.knownSecrets())
			srv.Close()
			if err != nil {
				return err
			}
		} else if err := recordOne(ctx, out, sc, c, prov, f.knownSecrets()); err != nil {
			return err
		}
		recorded++
	}
	fmt.Fprintf(out, "recorded %d cassette(s); now rewrite the goldens for review: GOLDIE_UPDATE=1 go test ./suites/e2e/\n", recorded)
	return nil
}

// newReplayCmd is `todoharness replay`: replay recorded scenarios against
// an agent, offline, and compare its plan with the goldens.
func newReplayCmd() *cobra.Command {
	var f recordFlags
	cmd := &cobra.Command{
		Use:   "replay [--agent CMD | --preset NAME] [--all | SCENARIO...]",
		Short: "Replay recorded scenarios against an agent offline and compare its plan notifications with the goldens",
		Long: `Replay e2e scenarios against an agent with nothing leaving the machine: the
cassette is served by a local proxy in replay mode, the agent is pointed at it
exactly as record pointed it (templates, --env, --file, a throw-away HOME;
{{.Model}} is the cassette's model unless --model), the scenario's steps are
driven, and the plan notifications and request pins are compared with
plan.golden.jsonl, tools.golden.json and system.golden.md. A request the
cassette does not hold fails with the nearest recorded request and a diff.
Without --agent, the built-in reference agent is replayed (as a subprocess).

Exit status: 0 when every scenario matches, 1 when one does not (each is
still replayed and reported), 2 when the command line is wrong (no scenario
and no --all, an unknown preset, no scenarios in --dir).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd, &f, args)
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().Lookup("model").Usage = "the model name the agent is told ({{.Model}} in --agent, --env and --file; the reference agent's --model); default: the model the cassette was recorded with. Requests match the cassette on their body, the model included: another name makes them miss (each miss is shown with the nearest recorded request)"
	return cmd
}

func runReplay(cmd *cobra.Command, f *recordFlags, args []string) error {
	dirs, err := f.scenarioDirs(args, "replay")
	if err != nil {
		return err
	}
	offer, err := f.offer()
	if err != nil {
		return err
	}
	target, preset, err := f.agentTarget()
	if err != nil {
		return err
	}
	if target == nil {
		// The reference agent, told the model of the cassette.
		t, err := buildTarget(targetFlags{env: f.target.env}, nil)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		t.Command = append(t.Command, "--model", "{{.Model}}")
		target = &t
	}
	failed := 0
	for _, dir := range dirs {
		res, err := recording.Replay(cmd.Context(), dir, recording.Options{
			Agent: *target, Model: f.model, Timeout: f.run.caseTimeout(preset), Grace: f.run.grace,
			Secrets: f.knownSecrets(), Offer: offer,
		})
		name := filepath.Base(dir)
		if err != nil {
			failed++
			fmt.Fprintf(cmd.ErrOrStderr(), "FAIL %s: %v\n", name, err)
			if res != nil {
				for _, n := range res.Notes {
					fmt.Fprintln(cmd.ErrOrStderr(), "  note:", n)
				}
			}
			continue
		}
		fmt.Fprintf(cmd.OutOrStdout(), "ok   %s: %d exchange(s) replayed, plan and request pins match\n", name, res.Exchanges)
	}
	if failed > 0 {
		return exitCode(1)
	}
	return nil
}

// recordOne records one scenario into its cassette and replays the result.
func recordOne(ctx context.Context, out io.Writer, sc *scenario.Scenario, cfg openaichat.ClientConfig, prov cassette.Provenance, secrets []string) error {
	prov.BaseURL, prov.Model, prov.Scenario = cfg.BaseURL, cfg.Model, sc.Name
	res, err := scenario.RecordCassette(ctx, sc, scenario.RecordConfig{
		Client: cfg, Provenance: prov, Cassette: sc.CassettePath(), Secrets: secrets,
	})
	if err != nil {
		return fmt.Errorf("record %s: %w", sc.Name, err)
	}
	p := res.Provenance
	fmt.Fprintf(out, "recorded %s: %d exchange(s) -> %s [%s, %s, %s]; offline replay reproduces it\n",
		sc.Name, res.Exchanges, sc.CassettePath(), p.Source, p.APIHost, p.Model)
	return nil
}

// newCassetteCmd is `todoharness cassette`: cassette tools.
func newCassetteCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "cassette", Short: "Cassette tools (rebuild from a session log, show provenance, scan for credentials)"}
	cmd.AddCommand(newCassetteFromLogCmd(), newCassetteShowCmd(), newCassetteScanCmd())
	return cmd
}

// newCassetteFromLogCmd is `todoharness cassette from-log`.
func newCassetteFromLogCmd() *cobra.Command {
	var model, baseURL, system, recordedBy, logName, scen string
	var real bool
	fromLog := &cobra.Command{
		Use:   "from-log SESSION.jsonl OUT.yaml",
		Short: "Rebuild the model's HTTP exchanges from a session log's assistant/chunk events",
		Long: `Rebuild a cassette from a session log (ours or the original implementation's):
one exchange per model step. Each request is what the llm client sends for the
model history derived from the surface events before the step, with the tools
of the shipped composition; each response is an SSE body rebuilt from the
step's assistant/chunk events. The provenance says "rebuilt from session log
<name> recorded by <--recorded-by>".

The shipped todo-plan cassette was made with:

  todoharness cassette from-log fixtures/interop/deepseek-harness/todo-plan/session.jsonl \
    fixtures/e2e/todo-plan/cassette.yaml --scenario todo-plan --real-model-output \
    --recorded-by "the original implementation against DeepSeek"`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ld, err := session.LoadFile(args[0])
			if err != nil {
				return err
			}
			for _, w := range ld.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			reg, err := builtin.Compose("")
			if err != nil {
				return err
			}
			name := logName
			if name == "" {
				name = filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(args[0])), filepath.Base(args[0])))
			}
			res, err := fromlog.Rebuild(cmd.Context(), fromlog.Options{
				Log: ld, LogName: name, Out: args[1], Tools: reg.Specs(), Model: model,
				BaseURL: baseURL, System: system, RecordedBy: recordedBy,
				RealModelOutput: real, Scenario: scen,
			})
			if err != nil {
				return err
			}
			for _, w := range res.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d exchange(s); %s\n", args[1], res.Steps, res.Provenance.Description)
			return nil
		},
	}
	fromLog.Flags().StringVar(&model, "model", openaichat.DefaultModel, "model of the rebuilt requests")
	fromLog.Flags().StringVar(&baseURL, "base-url", openaichat.DefaultBaseURL, "API base URL the requests are addressed to")
	fromLog.Flags().StringVar(&system, "system", "", "system prompt of the rebuilt requests (the reference agent sends none)")
	fromLog.Flags().StringVar(&recordedBy, "recorded-by", "", `who recorded the log, for the provenance ("the original implementation against DeepSeek")`)
	fromLog.Flags().StringVar(&logName, "name", "", "name of the log in the provenance (default: <parent folder>/<file>)")
	fromLog.Flags().StringVar(&scen, "scenario", "", "e2e scenario the cassette belongs to")
	fromLog.Flags().BoolVar(&real, "real-model-output", false, "the log's assistant chunks were produced by a real model")
	return fromLog
}

// newCassetteShowCmd is `todoharness cassette show`.
func newCassetteShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show CASSETTE.yaml...",
		Short: "Print each cassette's provenance (fails on a corrupt cassette)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, path := range args {
				p, err := cassette.LoadProvenance(path)
				if err != nil {
					return err
				}
				kind := "NOT real-model output"
				if p.RealModelOutput {
					kind = "real-model output"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s (%s); host %s, model %s, recorded %s by %s: %s\n",
					path, p.Source, kind, p.APIHost, p.Model, p.RecordedAt, p.ToolVersion, p.Description)
			}
			return nil
		},
	}
}

// newCassetteScanCmd is `todoharness cassette scan`.
func newCassetteScanCmd() *cobra.Command {
	var showSecrets bool
	var scanSecretEnv []string
	scan := &cobra.Command{
		Use:   "scan FILE_OR_DIR...",
		Short: "Scan cassettes (*.yaml) for anything that looks like a credential (exit 1 if found)",
		Long: `Scan cassettes (*.yaml) for anything that looks like a credential: an
sk-/AIza key, a JWT, bearer or basic credentials, a URL's user:password, a
credential header, a gzip body; looked for as written, JSON-escaped,
URL-encoded (once or twice), and inside base64, base32 and hex runs. With
--secret-env NAME the value of $NAME is looked for too, in every form the
recorder scrubs (cassette.KeyForms: plain, base64 and base32 at every
alignment, hex in both cases, JSON-escaped, URL-encoded twice, split
across a stream's deltas) and by its fragments: any 8 of its characters,
case, separators, order and rot13 ignored, in every view (HTML entities,
base64, hex, Ascii85, gzip, UTF-16, nested), in each line, in the file
read as one text and in each field (header names included).

What is found is masked: its first 4 characters, its length and a short
hash. --show-secrets prints it whole.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var secrets []string
			for _, name := range scanSecretEnv {
				v, ok := os.LookupEnv(name)
				if !ok || v == "" {
					return fmt.Errorf("cassette scan: --secret-env %s: not set in this environment", name)
				}
				secrets = append(secrets, v)
			}
			found, err := scanCassettes(cmd.ErrOrStderr(), args, secrets, showSecrets)
			if err != nil {
				return err
			}
			if found > 0 {
				return exitCode(1)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "no credentials found")
			return nil
		},
	}
	scan.Flags().BoolVar(&showSecrets, "show-secrets", false, "print what is found whole (default: masked, first 4 characters and a hash)")
	scan.Flags().StringArrayVar(&scanSecretEnv, "secret-env", nil, "NAME of a variable whose value is a secret to look for in every form (repeatable)")
	return scan
}

// scanCassettes scans every *.yaml under roots for credentials and the
// known secrets, writes each finding to errOut (masked unless reveal) and
// returns how many there were.
func scanCassettes(errOut io.Writer, roots, secrets []string, reveal bool) (int, error) {
	found := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, f := range scrub.ScanSecrets(data, secrets) {
				found++
				shown := f.String()
				if reveal {
					shown = f.Reveal()
				}
				fmt.Fprintf(errOut, "%s: %s\n", path, shown)
			}
			return nil
		})
		if err != nil {
			return found, err
		}
	}
	return found, nil
}

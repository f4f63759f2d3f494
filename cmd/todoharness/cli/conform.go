package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/driver"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/internal/safefile"
	"github.com/todoharness/todoharness/internal/termtext"
)

// conformOptions are the flags of `todoharness conform`.
type conformOptions struct {
	// targetFlags: --agent, --preset, --env, --file, --clean-env, --name,
	// --in-process.
	targetFlags
	caseDirs  []string
	noBuiltin bool
	only      []string
	dialect   string
	run       runFlags
	jsonOut   string
	junitOut  string
	htmlOut   string
	out       string
	expected  string
	list      bool
	keep      bool
	modelName string
	explain   bool
	presets   bool
	policy    string
	judge     string
	baseline  string
	keepGoing bool
	checks    []string
	fedOnly   bool
	format    string
	summaryMD string
	strict    bool
	explore   exploreFlags
	// color: the summary is written to a terminal and NO_COLOR is unset
	// (conformance.UseColor); set by the command, not a flag.
	color bool
	// unfed and empty: under --fed-only, the checks left out as no
	// selected case feeds them, or as the cases feed them but give
	// nothing to judge; set by the command.
	unfed, empty []string
}

// newConformCmd is `todoharness conform`: the black-box conformance run.
func newConformCmd() *cobra.Command {
	o := &conformOptions{}
	cmd := &cobra.Command{
		Use:     "conform [--preset NAME] [--agent 'CMD ARGS'] [flags]",
		Short:   "Run the todo_write conformance catalogue against an ACP agent",
		Long:    strings.NewReplacer("{{clientsWithoutV1}}", clientsWithoutV1(), "{{presets}}", strings.Join(driver.PresetNames(), ", ")).Replace(conformLong),
		Example: conformExample,
		Args:    conformArgs,
		// conform merge too: what it prints quotes the agents.
		PersistentPreRun: func(cmd *cobra.Command, _ []string) { escapeStreams(cmd) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConform(cmd, o)
		},
	}
	f := cmd.Flags()
	o.registerSelection(f)
	o.registerReports(f)
	o.registerAgentRun(f)
	cmd.AddCommand(newConformMergeCmd())
	return cmd
}

// registerSelection registers the flags that say which agent runs and
// which cases and checks: the target flags, --cases, --case, --check,
// --dialect and the run flags.
func (o *conformOptions) registerSelection(f *pflag.FlagSet) {
	o.targetFlags.register(f, targetHelp{fileWhere: "the case's working directory, or its throw-away home", presetNote: " (see --list-presets)",
		cleanEnvNote: ", not this process's environment", name: true})
	f.StringArrayVar(&o.caseDirs, "cases", nil, "folder of case folders (or one case folder) to run besides the built-in cases (repeatable)")
	f.BoolVar(&o.noBuiltin, "no-builtin", false, "run only the cases given with --cases")
	f.StringArrayVar(&o.only, "case", nil, "run only this case ID (glob; repeatable)")
	f.StringArrayVar(&o.checks, "check", nil, "report only the checks matching this ID (glob; repeatable), and run only the cases that feed them")
	f.BoolVar(&o.fedOnly, "fed-only", false, "judge only the checks the selected cases feed (and those every case feeds): a run of kept cases (fixtures/explored, --out/explore-failures) passes when they pass, where the MUST checks none of them feeds would make it INCOMPLETE; the summary lists the checks left out")
	f.StringVar(&o.dialect, "dialect", "", "force the dialect: "+strings.Join(driver.DialectNames(), ", ")+" (default: detect)")
	o.run.register(f, "")
}

// registerReports registers the flags that say which reports are written
// and how: --json, --format, --summary-md, --strict, --junit, --html, --out,
// --expected-failures, --list.
func (o *conformOptions) registerReports(f *pflag.FlagSet) {
	f.StringVar(&o.jsonOut, "json", "", "write the report as JSON to FILE (- for stdout: the JSON report alone, the summary then goes to stderr; with --list: the catalogue and the cases)")
	f.StringVar(&o.format, "format", report.FormatText, "how the report is printed: "+strings.Join(report.Formats(), ", ")+" (github: the summary and GitHub Actions annotations, ::error for what fails the run, ::warning for a failed SHOULD; markdown: the summary as Markdown, for a job summary or a pull-request comment, the other lines on stderr)")
	f.StringVar(&o.summaryMD, "summary-md", "", "write the summary as Markdown to FILE (the verdict, the counts, each failing check with its failing cases and reasons, escaped and cut; at most 60,000 bytes): for $GITHUB_STEP_SUMMARY or a pull-request comment")
	f.BoolVar(&o.strict, "strict", false, "a failed SHOULD check fails the run too (exit 1), and is a JUnit failure")
	f.StringVar(&o.junitOut, "junit", "", "write the report as JUnit XML to FILE")
	f.StringVar(&o.htmlOut, "html", "", "write the report as one self-contained HTML page to FILE (verdict, checks filterable by outcome and level, each failure with its evidence, each case's ACP wire beside the model journal)")
	f.StringVar(&o.out, "out", "", "write a folder per case under DIR: its evidence.json (for --judge) and, for a failing case, its transcript (transcript.txt with the failed lines marked, wire.jsonl, journal.jsonl, stderr-N.txt)")
	f.StringVar(&o.expected, "expected-failures", "", "YAML list of {id, reason}: known failures that do not fail the run")
	f.BoolVar(&o.list, "list", false, "print the catalogue and the cases (narrowed by --case and --check; as JSON with --json), and exit")
}

// registerAgentRun registers the flags of how the agent runs: in process,
// its model, working directories, the policy, --judge and the
// exploration.
func (o *conformOptions) registerAgentRun(f *pflag.FlagSet) {
	f.BoolVar(&o.keep, "keep", false, "keep the cases' working directories")
	f.StringVar(&o.modelName, "model", "mock", "model name offered to templates as {{.Model}}")
	f.BoolVar(&o.inProcess, "in-process", false, "run the built-in reference agent inside this process (on pipes, no process per case; --env still reaches it, e.g. TODOHARNESS_FAULT) instead of as a subprocess; not with --agent or --preset")
	f.BoolVar(&o.explain, "explain", false, "print what the agent under test gets (command, wire API, dialect, env, files) and exit")
	f.BoolVar(&o.presets, "list-presets", false, "print the presets and exit")
	f.StringVar(&o.baseline, "write-baseline", "", "write this run's MUST failures to FILE as an expected-failures baseline (one entry per check, reason TODO)")
	f.BoolVar(&o.keepGoing, "keep-going", false, "run every case even when the first one cannot get initialize answered (by default the run stops there)")
	f.StringVar(&o.judge, "judge", "", "judge the evidence saved under DIR by an earlier run's --out (DIR/<case>/evidence.json) again, with this catalogue and --expected-failures; starts no agent")
	o.explore.register(f)
	f.StringVar(&o.policy, "policy", conformance.PolicySingle, "in_progress policy: single (at most one task in_progress, the contract's rule), parallel (several allowed: TW-VALID-TWOACTIVE then wants the call accepted and shown in the plan), or auto (read from the agent's todo tool description; the report says which)")
}

// conformLong is the help of `todoharness conform`.
const conformLong = `Run the conformance catalogue against an ACP agent: start it as a subprocess
(fresh process and temporary working directory per case), point it at the
scripted mock model, drive it over ACP on stdio, and judge every check of the
catalogue clause by clause (see --list).

Without --agent the built-in reference agent is tested (this executable's own
"agent" command); --in-process runs it inside this process instead, on pipes,
with no process per case (--env TODOHARNESS_FAULT=NAME still reaches it). The agent command line, --env values and --file templates
may use {{.BaseURL}} (http://127.0.0.1:PORT/v1 of the mock model), {{.URL}}
(the same without /v1, for {{clientsWithoutV1}} clients), {{.Host}},
{{.Port}}, {{.Cwd}} (the case's working directory), {{.Home}} (the case's
throw-away home), {{.Case}} and {{.Model}}; TODOHARNESS_MODEL_URL is always
set to the base URL. A --file whose DEST starts with ~/ is written into the
throw-away home.

--preset NAME supplies the wiring for a known agent
({{presets}}):
its command, env variables and config files, a throw-away HOME per case;
--list-presets prints them and --preset NAME --explain prints exactly what
one writes. --agent still replaces the preset's command; --env and --file
add to (and override) its own.

--explore N (or --explore-for 5m) also runs N generated scenarios from --seed
(printed; the same seed gives the same scenarios) against the same agent,
judged by the catalogue with an oracle's marks; each distinct failure is shrunk
to a case.yaml under --out/explore-failures that --cases runs again
(docs/exploring.md). --shard I/N runs one of N deterministic slices of the
catalogue and of the exploration; "conform merge DIR..." joins the shards'
--out folders into one verdict (docs/ci.md).

--format github prints GitHub Actions annotations next to the summary
(docs/ci.md), --format markdown the summary as Markdown; --json, --junit,
--html, --summary-md and --out write the reports, the evidence and the
transcripts for a CI job to keep (--html: one page a person reads in a
browser, nothing loaded from the network; --summary-md: the summary as
Markdown, for $GITHUB_STEP_SUMMARY or a pull-request comment).

Exit status: 0 (PASS) when every MUST check that applies was judged and
passed (expected failures aside) and no baseline entry is stale; 1 (FAIL)
when a MUST check failed (or, with --strict, a SHOULD check) or a baseline
entry matched no failure; 3 (INCOMPLETE) when nothing failed but a MUST
check could not be judged (its case did not complete, or --case left out
every case that feeds it); 130 when interrupted (Ctrl-C); 2 when the run
could not start (a bad flag, template variable, output path, baseline,
--case or --check pattern or --format: checked before any agent starts; or
the agent did not start: its command was not found, or it exited before
answering initialize, said in one line with its stderr, all of it saved).
Reports are replaced atomically; one that cannot be written (a full disk) is
named on stderr and does not change the exit status, and an --out folder
not written whole keeps a file INCOMPLETE that --judge refuses.`

// conformExample is the examples of `todoharness conform`.
const conformExample = `  todoharness conform
  todoharness conform --preset opencode
  todoharness conform --preset codex --agent '/opt/codex-acp/bin/codex-acp' --explain
  todoharness conform --agent 'my-agent acp --base-url {{.BaseURL}}' --junit conform.xml
  todoharness conform --agent 'my-agent' --env OPENAI_BASE_URL={{.BaseURL}} --env OPENAI_API_KEY=mock
  todoharness conform --agent 'my-agent' --file agent.toml:.my-agent/config.toml
  todoharness conform --expected-failures baseline.yaml --out transcripts/
  todoharness conform --agent 'my-agent' --html report.html
  todoharness conform --agent 'my-agent' --expected-failures baseline.yaml --format github --junit conform.xml --out transcripts/
  todoharness conform --list --check 'TW-LOAD-*' --json -
  todoharness conform --agent 'my-agent' --json - -q | jq .verdict
  todoharness conform --in-process --settle 50ms --explore 1000 --seed 42 --out explored/
  todoharness conform --preset opencode --explore-for 10m --seed 42 --shard 2/4 --out shard-2/`

// WithSchemaValidator returns ctx carrying v: the conform commands run with
// it (Run) validate the agent's ACP messages with v instead of compiling the
// schema for their run, as a process of its own does. It is for a program
// that runs many conform command lines in its own process, as the
// conformance tier does; v is safe for concurrent use.
func WithSchemaValidator(ctx context.Context, v *driver.SchemaValidator) context.Context {
	return context.WithValue(ctx, validatorKey{}, v)
}

type validatorKey struct{}

// startSchemaValidator returns the validator ctx carries, or starts
// compiling one: it compiles while the cases load (on a core the loading
// leaves idle) and the first cases run.
func startSchemaValidator(ctx context.Context) func() (*driver.SchemaValidator, error) {
	if v := schemaValidatorOf(ctx); v != nil {
		return func() (*driver.SchemaValidator, error) { return v, nil }
	}
	compile := sync.OnceValues(driver.NewSchemaValidator)
	go compile() //nolint:errcheck // the error comes back from the next call
	return compile
}

// schemaValidatorOf is the validator ctx carries (nil: the run compiles
// its own).
func schemaValidatorOf(ctx context.Context) *driver.SchemaValidator {
	v, _ := ctx.Value(validatorKey{}).(*driver.SchemaValidator)
	return v
}

func runConform(cmd *cobra.Command, o *conformOptions) error {
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	o.color = useColor(o.summaryOut(cmd), environOf(cmd.Context()).getenv)
	if o.presets {
		return driver.WritePresetTable(out)
	}
	preset, err := o.presetOf()
	if err != nil {
		return err
	}
	if o.explain {
		return explainTarget(out, o, preset)
	}
	if err := checkConformFlags(o); err != nil {
		return err
	}
	seed, err := o.explore.check(o)
	if err != nil {
		return err
	}
	if o.judge != "" {
		return judgeConform(cmd, o)
	}
	validator := startSchemaValidator(cmd.Context())
	all, sel, err := selectConformCases(o)
	if err != nil {
		return err
	}
	cases, only := sel.Cases, sel.Only
	if o.list {
		return listCatalogue(cmd.Context(), out, o, sel.Catalogue, cases, only)
	}
	target, err := buildTarget(o.targetFlags, preset)
	if err != nil {
		return err
	}
	cfg := o.run.config(target, cases, preset, errw)
	cfg.Checks, o.unfed = sel.Catalogue, sel.Unfed
	cfg.Dialect, cfg.KeepDirs, cfg.Model, cfg.Policy, cfg.KeepGoing, cfg.Only = o.dialect, o.keep, o.modelName, o.policy, o.keepGoing, only
	cfg.Strict, cfg.Validator, cfg.Shard = o.strict, validator, o.explore.shard
	// Everything that can be wrong with the command line is found before
	// any agent starts.
	if err := preflightConform(errw, o, target, &cfg, all); err != nil {
		return err
	}
	w := newReportWriter(cmd.Context())
	if len(cases) == 0 {
		// --explore alone (--no-builtin, no --cases): no catalogue run.
		res, err := runExplore(cmd, o, cfg, seed, w)
		if err != nil {
			return err
		}
		w.end(errw)
		return exploreStatus(nil, res)
	}
	if !o.run.quiet {
		fmt.Fprintf(errw, "conform: %s: %s, timeout %s per case, offering ACP %s, %s\n", target.String(), caseCount(cases, cfg.Dialect, cfg.Repeat), cfg.Timeout, cfg.Offer, poolHeader(cfg))
	}
	cpu0, cpuOK := conformance.ProcessCPU()
	rep, err := conformance.Run(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	// What the run cost in CPU, its agents' processes included (each
	// ended and waited for when Run returns).
	cpu, _ := conformance.ProcessCPU()
	ran := len(rep.Cases)
	if o.fedOnly && cfg.Repeat <= 1 {
		v, err := cfg.Validator()
		if err != nil {
			return err
		}
		jc := conformance.JudgeConfig{Checks: cfg.Checks, Only: cfg.Only, Expected: cfg.Expected, Validator: v, Strict: cfg.Strict}
		if rep, err = dropUnjudged(o, rep, jc); err != nil {
			return err
		}
	}
	if cpuOK {
		rep.SetCPU(cpu-cpu0, ran)
	}
	w.transcripts(o.out, rep)
	return finishConform(cmd, o, cfg, seed, rep, w)
}

// checkConformFlags checks the flags that need no case or agent: the
// policy, the run flags, --format and --json.
func checkConformFlags(o *conformOptions) error {
	if _, err := conformance.ParsePolicy(o.policy); err != nil {
		return err
	}
	if err := o.run.check(); err != nil {
		return err
	}
	if _, err := report.ParseFormat(o.format); err != nil {
		return err
	}
	if o.dialect != "" {
		if _, err := driver.DialectByName(o.dialect); err != nil {
			return fmt.Errorf("conform: --dialect %q: unknown dialect%s", o.dialect, conformance.Suggest(o.dialect, driver.DialectNames(), "dialects"))
		}
	}
	return nil
}

// conformArgs refuses arguments: conform's only subcommand is merge, and
// the agent's command line goes in --agent (a command typed after conform
// is the usual slip: "conform node agent.mjs").
func conformArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if hint := conformance.Suggest(args[0], []string{"merge"}, "subcommands"); strings.HasPrefix(hint, ": did you mean") {
		return fmt.Errorf("conform: unknown subcommand %q%s", args[0], hint)
	}
	return fmt.Errorf("conform: unexpected argument %q: give the agent's command line with --agent, quoted as one argument: --agent %s", args[0], shellQuote(strings.Join(args, " ")))
}

// shellQuote quotes s for a POSIX shell, in single quotes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// summaryOut is where the summary goes: stdout, or stderr when --json -
// takes stdout for the JSON report (stdout then holds it alone).
func (o *conformOptions) summaryOut(cmd *cobra.Command) io.Writer {
	if o.jsonOut == "-" {
		return cmd.ErrOrStderr()
	}
	return cmd.OutOrStdout()
}

// selectConformCases loads the cases (all: every case, for the baseline)
// and has the conformance package select, once, the cases to run and the
// checks to judge (--case, --check, --fed-only, --shard).
func selectConformCases(o *conformOptions) (all []*conformance.Case, sel *conformance.Selected, err error) {
	if !o.explore.on() || !o.noBuiltin || len(o.caseDirs) > 0 {
		if all, err = loadConformCases(o); err != nil {
			return nil, nil, err
		}
	}
	shard, shards, _ := parseShard(o.explore.shard)
	// --list shows what the cases feed itself: --fed-only narrows a run.
	s := conformance.Selection{Cases: o.only, Checks: o.checks, FedOnly: o.fedOnly && !o.list, Shard: shard, Shards: shards}
	if sel, err = s.Select(all); err != nil {
		return nil, nil, fmt.Errorf("conform: %w", err)
	}
	return all, sel, nil
}

// preflightConform finds what else can be wrong with the command line
// before any agent starts: the templates, the baseline, the outputs; it
// reads the baseline into cfg and warns of relative paths.
func preflightConform(errw io.Writer, o *conformOptions, target driver.Target, cfg *conformance.Config, all []*conformance.Case) error {
	var err error
	if err := target.CheckTemplates(); err != nil {
		return err
	}
	if cfg.Expected, err = readBaseline(o.expected, all); err != nil {
		return err
	}
	if err := checkBaselineReasons(errw, o.expected, cfg.Expected, o.strict); err != nil {
		return err
	}
	if err := checkOutputs(o); err != nil {
		return err
	}
	for _, arg := range relativeFileArgs(target.Command) {
		abs, _ := filepath.Abs(arg)
		fmt.Fprintf(errw, "conform: warning: %q in the agent command is a path relative to this directory, but the agent runs in each case's own temporary directory: give it as %s\n", arg, abs)
	}
	return nil
}

// finishConform reports the run, then runs the exploration when asked;
// w has written --out, and names at the end what it could not write.
func finishConform(cmd *cobra.Command, o *conformOptions, cfg conformance.Config, seed uint64, rep *conformance.Report, w *reportWriter) error {
	stdout, out, errw := cmd.OutOrStdout(), o.summaryOut(cmd), cmd.ErrOrStderr()
	defer w.end(errw)
	if o.explore.on() {
		status := reportConform(stdout, out, errw, o, rep, w)
		var ec exitCode
		if status != nil && !errors.As(status, &ec) {
			return status
		}
		res, err := runExplore(cmd, o, cfg, seed, w)
		if err != nil {
			return err
		}
		return exploreStatus(status, res)
	}
	if o.keep {
		for _, c := range rep.Cases {
			if ev := c.Evidence(); ev != nil && ev.Cwd != "" {
				fmt.Fprintf(errw, "kept %s: working directory %s, home %s\n", c.ID, ev.Cwd, ev.Home)
			}
		}
	}
	return reportConform(stdout, out, errw, o, rep, w)
}

// caseCount says how many cases will run: the selected ones, the probe
// the runner adds to detect the dialect when none of them is one (and no
// --dialect is forced), and with --repeat the runs in all.
func caseCount(cases []*conformance.Case, dialect string, repeat int) string {
	n := len(cases)
	s := fmt.Sprintf("%d cases", n)
	probe := dialect == ""
	for _, c := range cases {
		probe = probe && !c.Probe
	}
	if probe {
		n++
		s += " + the probe"
	}
	if repeat > 1 {
		s += fmt.Sprintf(" × %d runs = %d case runs", repeat, n*repeat)
	}
	return s
}

// relativeFileArgs are the words of an agent command line that name a
// file by a relative path from the runner's directory (the command itself
// when it has a slash, or any argument that is not a flag or a template):
// the agent runs in the case's directory, where they name nothing.
func relativeFileArgs(argv []string) []string {
	var out []string
	for i, a := range argv {
		switch {
		case a == "" || filepath.IsAbs(a) || strings.HasPrefix(a, "-") || strings.Contains(a, "{{"):
			continue
		case i == 0 && !strings.Contains(a, "/"):
			continue // looked up in the PATH
		}
		if st, err := os.Stat(a); err == nil && st.Mode().IsRegular() {
			out = append(out, a)
		}
	}
	return out
}

// readBaseline reads --expected-failures (none when path is empty): its
// check IDs are validated by the run, its case patterns here, against
// every known case.
func readBaseline(path string, all []*conformance.Case) ([]conformance.ExpectedFailure, error) {
	if path == "" {
		return nil, nil
	}
	es, err := conformance.ReadExpectedFailures(path)
	if err != nil {
		return nil, err
	}
	ids := caseIDs(all)
	for _, e := range es {
		for _, pat := range e.Cases {
			if !matchesAny(pat, ids) {
				return nil, fmt.Errorf("conform: %s: %s: no case matches %q%s", path, e.ID, pat, conformance.Suggest(pat, ids, "cases"))
			}
		}
	}
	return es, nil
}

// reportFile is a file flag that writes the catalogue's report.
type reportFile struct{ flag, path string }

// reportFiles are the flags that write the catalogue's report, set or not:
// --json, --junit, --html, --summary-md and --write-baseline.
func (o *conformOptions) reportFiles() []reportFile {
	return []reportFile{{"--json", o.jsonOut}, {"--junit", o.junitOut}, {"--html", o.htmlOut}, {"--summary-md", o.summaryMD}, {"--write-baseline", o.baseline}}
}

// checkOutputs makes sure every file and folder the run will write can be
// written, before the run: the report files and --out.
func checkOutputs(o *conformOptions) error {
	for _, f := range o.reportFiles() {
		if f.path == "" || (f.flag == "--json" && f.path == "-") {
			continue
		}
		if err := safefile.CheckWritable(f.path); err != nil {
			return fmt.Errorf("conform: %s %s: cannot write there: %w", f.flag, f.path, err)
		}
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return fmt.Errorf("conform: --out %s: %w", o.out, err)
		}
		probe := filepath.Join(o.out, ".conform-write-check")
		if err := safefile.CheckWritable(probe); err != nil {
			return fmt.Errorf("conform: --out %s: cannot write there: %w", o.out, err)
		}
	}
	return nil
}

// judgeConform is conform --judge DIR: the saved evidence judged again.
func judgeConform(cmd *cobra.Command, o *conformOptions) error {
	evs, err := conformance.ReadEvidenceDir(o.judge)
	if err != nil {
		return err
	}
	var cases []*conformance.Case
	for _, ev := range evs {
		cases = append(cases, ev.Case)
	}
	sel, err := conformance.Selection{Checks: o.checks, FedOnly: o.fedOnly}.SelectJudged(cases)
	if err != nil {
		return fmt.Errorf("conform: %w", err)
	}
	cfg := conformance.JudgeConfig{Checks: sel.Catalogue, Only: sel.Only, Strict: o.strict, Validator: schemaValidatorOf(cmd.Context())}
	o.unfed = sel.Unfed
	if cfg.Expected, err = readBaseline(o.expected, cases); err != nil {
		return err
	}
	if err := checkBaselineReasons(cmd.ErrOrStderr(), o.expected, cfg.Expected, o.strict); err != nil {
		return err
	}
	rep, err := conformance.Judge(evs, cfg)
	if err != nil {
		return err
	}
	if o.fedOnly {
		if rep, err = dropUnjudged(o, rep, cfg); err != nil {
			return err
		}
	}
	w := newReportWriter(cmd.Context())
	defer w.end(cmd.ErrOrStderr())
	w.transcripts(o.out, rep)
	if !o.run.quiet {
		fmt.Fprintf(cmd.ErrOrStderr(), "conform: judged the evidence of %d cases under %s again (no agent started)\n", len(evs), o.judge)
	}
	return reportConform(cmd.OutOrStdout(), o.summaryOut(cmd), cmd.ErrOrStderr(), o, rep, w)
}

// reportConform writes the report files (--json - to stdout) with w and
// the summary to out, and returns the exit status: the verdict's, whether
// or not every report could be written (w names those it could not).
// Under --format markdown the summary on out is Markdown alone, and the
// lines that follow the text summary (transcripts, reports) go to errw.
func reportConform(stdout, out, errw io.Writer, o *conformOptions, rep *conformance.Report, w *reportWriter) error {
	if o.jsonOut == "-" {
		if err := rep.WriteJSON(termtext.Unwrap(stdout)); err != nil {
			w.fail("--json -", err)
		}
	} else {
		w.file("--json", o.jsonOut, rep.WriteJSON)
	}
	w.file("--junit", o.junitOut, func(w io.Writer) error { return report.WriteJUnit(w, rep) })
	w.file("--html", o.htmlOut, func(w io.Writer) error { return report.WriteHTML(w, rep) })
	w.file("--summary-md", o.summaryMD, func(w io.Writer) error { return report.WriteMarkdown(w, rep) })
	if o.format == report.FormatMarkdown {
		if err := report.WriteMarkdown(out, rep); err != nil {
			return err
		}
		out = errw
	}
	if cr := rep.NotStarted(); cr != nil {
		return notStarted(out, o, rep, cr)
	}
	if o.format != report.FormatMarkdown {
		fmt.Fprintln(out)
		if err := report.WriteSummary(out, rep, o.color); err != nil {
			return err
		}
	}
	if len(o.unfed) > 0 {
		fmt.Fprintf(out, "--fed-only: %d check(s) no selected case feeds left out of the verdict (not judged): %s\n", len(o.unfed), strings.Join(o.unfed, ", "))
	}
	if len(o.empty) > 0 {
		fmt.Fprintf(out, "--fed-only: %d check(s) the cases feed but give nothing to judge left out of the verdict (not judged): %s\n", len(o.empty), strings.Join(o.empty, ", "))
	}
	for _, c := range rep.Cases {
		if c.Transcript != "" {
			fmt.Fprintf(out, "transcript: %s\n", c.Transcript)
		}
	}
	if o.baseline != "" && w.file("--write-baseline", o.baseline, rep.WriteBaseline) {
		fmt.Fprintf(out, "baseline: %s (fill in each reason)\n", o.baseline)
	}
	writeWhereNext(out, o, w)
	if o.format == report.FormatGitHub {
		if err := report.WriteGitHub(out, rep); err != nil {
			return err
		}
	}
	switch rep.Verdict {
	case conformance.VerdictPass:
		return nil
	case conformance.VerdictIncomplete:
		return exitCode(3)
	case conformance.VerdictInterrupted:
		return exitCode(130)
	}
	return exitCode(1)
}

// writeWhereNext ends the summary with where the reports were written
// (those w could not write left out: stderr names them) and, after a run
// of the built-in reference agent (make demo), what to run for one's own
// agent.
func writeWhereNext(out io.Writer, o *conformOptions, w *reportWriter) {
	var wrote []string
	for _, f := range []struct{ what, path string }{{"JSON", o.jsonOut}, {"JUnit", o.junitOut}, {"HTML (open it in a browser)", o.htmlOut}, {"Markdown summary", o.summaryMD}} {
		if f.path != "" && f.path != "-" && !w.notWritten[f.path] {
			wrote = append(wrote, f.what+" "+f.path)
		}
	}
	if o.out != "" && !w.notWritten[o.out] {
		wrote = append(wrote, "evidence and transcripts per case under "+o.out)
	}
	if len(wrote) > 0 {
		fmt.Fprintf(out, "reports: %s\n", strings.Join(wrote, "; "))
	}
	if o.agent == "" && (o.preset == "" || o.preset == "reference") && o.judge == "" {
		fmt.Fprintln(out, "next: that was the built-in reference agent; test your own with todoharness conform --agent 'your-agent --acp' (it reaches the mock model at {{.BaseURL}}; see conform --help), or a known one with --preset "+strings.Join(peerPresetNames(), ", ")+" (docs/validating-other-agents.md)")
	}
}

// peerPresetNames are the presets of other agents than the reference one.
func peerPresetNames() []string {
	var names []string
	for _, n := range driver.PresetNames() {
		if n != "reference" {
			names = append(names, n)
		}
	}
	return names
}

// reportWriter writes the reports a run was asked for, each with
// safefile.WriteReport (replaced atomically, synced; a FIFO is never
// waited on). A report that cannot be written (a full disk, a file size
// limit, a FIFO nothing reads) stops nothing: the other reports are still
// written and the summary printed, and the exit status stays the
// verdict's; end names on stderr each report that was not written.
type reportWriter struct {
	ctx    context.Context
	failed []string
	// notWritten holds the paths of the reports not written.
	notWritten map[string]bool
}

func newReportWriter(ctx context.Context) *reportWriter {
	return &reportWriter{ctx: ctx, notWritten: map[string]bool{}}
}

// file writes the report of flag to path ("": none asked for), and
// reports whether it did.
func (w *reportWriter) file(flag, path string, write func(io.Writer) error) bool {
	if path == "" {
		return true
	}
	if err := safefile.WriteReport(w.ctx, path, 0o644, write); err != nil {
		w.fail(flag+" "+path, err)
		w.notWritten[path] = true
		return false
	}
	return true
}

// transcripts writes --out (dir; "": none): a folder per case. A folder
// it could not write whole keeps conformance.IncompleteFile, which
// --judge and conform merge refuse.
func (w *reportWriter) transcripts(dir string, rep *conformance.Report) {
	if dir == "" {
		return
	}
	if err := report.WriteTranscripts(dir, rep); err != nil {
		w.fail("--out "+dir, err)
		w.notWritten[dir] = true
	}
}

// fail notes that the report what (a flag and its path) was not written.
func (w *reportWriter) fail(what string, err error) {
	w.failed = append(w.failed, fmt.Sprintf("%s was not written: %v", what, err))
}

// end names on errw the reports that were not written.
func (w *reportWriter) end(errw io.Writer) {
	for _, f := range w.failed {
		fmt.Fprintf(errw, "conform: %s\n", f)
	}
	w.failed = nil
}

// writeReportFile writes a report to path ("": none) with
// safefile.WriteReport, for a command that writes one report.
func writeReportFile(ctx context.Context, path string, write func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	if err := safefile.WriteReport(ctx, path, 0o644, write); err != nil {
		return fmt.Errorf("conform: %w", err)
	}
	return nil
}

// explainTarget prints what the agent under test gets: the preset's
// rendering (with --agent, --env and --file applied), or the plain target.
func explainTarget(w io.Writer, o *conformOptions, preset *driver.Preset) error {
	p := driver.Preset{Name: "(none)", Agent: "the command given with --agent", Wire: "whatever the agent speaks"}
	switch {
	case preset != nil:
		p = *preset
	case o.agent == "":
		ref, _ := driver.PresetByName("reference")
		p = ref
	}
	if o.agent != "" {
		argv, err := driver.SplitCommand(o.agent)
		if err != nil {
			return err
		}
		p.Command, p.Self = argv, false
	}
	p.Env = append(append([]string(nil), p.Env...), o.env...)
	for _, spec := range o.files {
		f, err := driver.ParseFileFlag(spec)
		if err != nil {
			return err
		}
		p.Files = append(append([]driver.File(nil), p.Files...), f)
	}
	if err := p.WriteExplain(w, driver.ExplainVars(o.modelName)); err != nil {
		return fmt.Errorf("conform: %w", err)
	}
	fmt.Fprintf(w, "  per-case timeout: %s\n", o.run.caseTimeout(preset))
	if o.cleanEnv {
		fmt.Fprintln(w, "  --clean-env: only PATH, HOME, TMPDIR of this process's environment are passed on")
	}
	return nil
}

// ReferenceAgentArgs is the command line that runs the reference agent in
// exe against the mock model, keeping sessions in the case's directory.
// They are thrown away with it, so they are not fsynced: on a disk the
// fsyncs were most of a catalogue's wall time, with the cores idle
// (docs/performance.md), and no check can see a power loss.
func ReferenceAgentArgs(exe string) []string {
	return []string{exe, "agent", "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions", "--fsync=false"}
}

// loadConformCases loads the built-in cases and the --cases folders (none
// at all, not nil: conformance.Selection.Select says no case is selected).
func loadConformCases(o *conformOptions) (all []*conformance.Case, err error) {
	all = []*conformance.Case{}
	if !o.noBuiltin {
		cs, err := conformance.LoadCases(conformancefixtures.FS, ".")
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			c.Source = "builtin:" + c.Source
		}
		all = append(all, cs...)
	}
	for _, dir := range o.caseDirs {
		cs, err := conformance.LoadCasesDir(dir)
		if err != nil {
			return nil, fmt.Errorf("conform: --cases %s: %w", dir, err)
		}
		all = append(all, cs...)
	}
	return all, nil
}

// dropUnjudged is rep judged again (jc) without the checks its cases feed
// but give nothing to judge (--fed-only: a shrunk case feeds every check,
// and has no empty list for TW-EMPTY-1): checks not run on any case,
// every one of which ran to its end. A check not run as a case did not
// complete stays: it still makes the run INCOMPLETE. The checks dropped
// are noted in o.empty.
func dropUnjudged(o *conformOptions, rep *conformance.Report, jc conformance.JudgeConfig) (*conformance.Report, error) {
	completed := map[string]bool{}
	var evs []*conformance.Evidence
	for _, c := range rep.Cases {
		completed[c.ID] = c.Completed
		evs = append(evs, c.Evidence())
	}
	var keep []string
	o.empty = nil
	for _, c := range rep.Checks {
		if c.Outcome == conformance.NotRun && len(c.Cases) > 0 && !slices.ContainsFunc(c.Cases, func(v conformance.CaseVerdict) bool { return !completed[v.Case] }) {
			o.empty = append(o.empty, c.ID)
			continue
		}
		keep = append(keep, c.ID)
	}
	if len(o.empty) == 0 {
		return rep, nil
	}
	jc.Only = keep
	return conformance.Judge(evs, jc)
}

func caseIDs(cs []*conformance.Case) []string {
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

// matchesAny reports whether the glob pat matches one of ids, or (with
// pats) whether the name pat is matched by one of pats.
func matchesAny(pat string, ids []string, pats ...string) bool {
	if len(pats) > 0 {
		for _, p := range pats {
			if ok, _ := path.Match(p, pat); ok {
				return true
			}
		}
		return false
	}
	for _, id := range ids {
		if ok, _ := path.Match(pat, id); ok || pat == id {
			return true
		}
	}
	return false
}

// poolHeader says in the run's first line which mode runs (--pool): the
// summary and the reports say it again with what the pool served.
func poolHeader(cfg conformance.Config) string {
	if cfg.Pool && cfg.Repeat <= 1 {
		return "pool on (sessions of pooled agent processes where no fresh process is needed; --rerun-pooled " + cmp.Or(cfg.RerunPooled, conformance.RerunKnown) + ")"
	}
	return "pool off (a process per case)"
}

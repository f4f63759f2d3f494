package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/driver"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/internal/termtext"
	"github.com/todoharness/todoharness/internal/textcut"
)

// peersOptions are the flags of `todoharness peers`.
type peersOptions struct {
	cache       string
	only        []string
	npm         string
	skipInstall bool
	run         runFlags
	installTime time.Duration
	html        string
	// node is --node: auto or system (peersNode); "" is system.
	node string
	// nodeBin is the folder of the Node the Node agents run on ("": the
	// system's), set by runPeers.
	nodeBin string
}

// newPeersCmd is `todoharness peers` (what `make peers` runs): install the
// public agents that have a preset from the npm registry into a cache
// folder and run the catalogue against each.
func newPeersCmd() *cobra.Command {
	o := &peersOptions{}
	cmd := &cobra.Command{
		Use:   "peers [--cache DIR] [--preset NAME]...",
		Short: "Install the public ACP agents from npm and run the conformance catalogue against each",
		Long: `Install every agent that has a preset (opencode, codex, gemini, claude; see
conform --list-presets) from the npm registry into its own folder under --cache,
then run the whole conformance catalogue against it with its preset, and print
one summary row per agent: agent, version, pass/fail/skip/n-a counts, the model
API and dialect seen, and the verdict. An agent that fails to install, has no
command after installing, or never answers initialize gets a row saying so.

Each agent's JSON report and the transcripts of its failing cases are kept
under --cache/NAME/. The summary is also written to --cache/summary.md.
This command needs the npm registry; it is never part of make test.

Exit status: 0 when every agent could be run (whatever its verdict), 1 when
one could not be installed or started.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.run.check(); err != nil {
				return err
			}
			if o.node != peersNodeAuto && o.node != peersNodeSystem {
				return fmt.Errorf("--node %q: want %s or %s", o.node, peersNodeAuto, peersNodeSystem)
			}
			escapeStreams(cmd)
			return runPeers(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cache, "cache", ".cache/peers", "folder the agents are installed into (one sub-folder per preset)")
	f.StringArrayVar(&o.only, "preset", nil, "run only this preset (repeatable; default: every preset with npm packages)")
	f.StringVar(&o.npm, "npm", "npm", "the npm command")
	f.BoolVar(&o.skipInstall, "skip-install", false, "use what is already installed under --cache")
	f.DurationVar(&o.installTime, "install-timeout", 10*time.Minute, "bound on one agent's npm install")
	f.StringVar(&o.node, "node", peersNodeAuto, "the Node the Node agents run on: auto (Node "+peersNodeVersion+" from npm when the system's node is older than "+strconv.Itoa(peersNodeMin)+", which ignores the compile cache their presets name) or system")
	f.StringVar(&o.html, "html", "", "also write one self-contained HTML page to FILE: a matrix of agents × checks, then each agent's report")
	o.run.register(f, " per agent")
	return cmd
}

// peerRow is one line of the summary.
type peerRow struct {
	Preset, Agent, Version string
	Pass, Fail, Skip, NA   int
	Wires, Dialect         string
	Verdict                string
	// Ran: the catalogue ran (the agent installed and started).
	Ran bool
	// rep is the agent's report (nil when the catalogue did not run).
	rep *conformance.Report
}

func runPeers(ctx context.Context, out, errw io.Writer, o *peersOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var presets []driver.Preset
	for _, p := range driver.Presets() {
		if len(p.Install) == 0 {
			continue
		}
		if len(o.only) > 0 && !contains(o.only, p.Name) {
			continue
		}
		presets = append(presets, p)
	}
	for _, n := range o.only {
		if _, err := driver.PresetByName(n); err != nil {
			return err
		}
	}
	if len(presets) == 0 {
		return fmt.Errorf("peers: no preset with npm packages selected")
	}
	cache, err := filepath.Abs(o.cache)
	if err != nil {
		return fmt.Errorf("peers: %w", err)
	}
	cases, err := conformance.LoadCases(conformancefixtures.FS, ".")
	if err != nil {
		return err
	}
	validator, err := driver.NewSchemaValidator()
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) {
		if !o.run.quiet {
			fmt.Fprintf(errw, "peers: "+format+"\n", a...)
		}
	}
	nodeNote := ""
	for _, p := range presets {
		if p.NodeCompileCache {
			o.nodeBin, nodeNote = peersNode(ctx, o, cache, os.Getenv("PATH"))
			break
		}
	}
	if nodeNote != "" {
		logf("%s", nodeNote)
	}
	var rows []peerRow
	for _, p := range presets {
		rows = append(rows, runPeer(ctx, p, filepath.Join(cache, p.Name), cases, validator, o, logf, errw))
	}
	writePeerTable(out, rows)
	var md strings.Builder
	writePeerMarkdown(&md, rows)
	if nodeNote != "" {
		fmt.Fprintln(out, termtext.Visible(nodeNote))
		fmt.Fprintf(&md, "\n%s\n", termtext.MarkdownCell(nodeNote))
	}
	if err := os.MkdirAll(cache, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(cache, "summary.md"), []byte(md.String()), 0o644)
	}
	if err := writeReportFile(ctx, o.html, func(w io.Writer) error { return report.WritePeersHTML(w, peerResults(rows)) }); err != nil {
		return err
	}
	for _, r := range rows {
		if !r.Ran {
			return exitCode(1)
		}
	}
	return nil
}

// runPeer installs one agent and runs the catalogue against it.
func runPeer(ctx context.Context, p driver.Preset, dir string, cases []*conformance.Case, v *driver.SchemaValidator,
	o *peersOptions, logf func(string, ...any), errw io.Writer) peerRow {
	row := peerRow{Preset: p.Name, Agent: p.Agent, Version: "-", Dialect: "-", Wires: "-"}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		row.Verdict = "cannot make " + dir + ": " + err.Error()
		return row
	}
	if !o.skipInstall {
		logf("%s: npm install %s into %s", p.Name, strings.Join(p.Install, " "), dir)
		if err := npmInstall(ctx, o.npm, dir, p.Install, o.installTime); err != nil {
			row.Verdict = "install failed: " + err.Error()
			logf("%s: %s", p.Name, row.Verdict)
			return row
		}
	}
	row.Version = npmVersion(dir, p.Install[0])
	bin := filepath.Join(dir, "node_modules", ".bin")
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	if p.NodeCompileCache && o.nodeBin != "" {
		path = bin + string(os.PathListSeparator) + o.nodeBin + string(os.PathListSeparator) + os.Getenv("PATH")
	}
	if _, err := lookPathIn(p.Command[0], path); err != nil {
		row.Verdict = fmt.Sprintf("not installed: no %s command under %s", p.Command[0], bin)
		logf("%s: %s", p.Name, row.Verdict)
		return row
	}
	target, err := buildTarget(targetFlags{agentLabel: fmt.Sprintf("%s %s (%s)", p.Name, row.Version, p.Package)}, &p)
	if err != nil {
		row.Verdict = "could not run: " + err.Error()
		return row
	}
	target.Env = append([]string{"PATH=" + path}, target.Env...)
	cfg := o.run.config(target, cases, &p, prefixWriter{w: errw, prefix: "peers: " + p.Name + ": "})
	out := filepath.Join(dir, "transcripts")
	cfg.Validator = conformance.Compiled(v)
	_ = os.RemoveAll(out)
	logf("%s %s: running the catalogue (%d cases, timeout %s per case)", p.Name, row.Version, len(cases), cfg.Timeout)
	rep, err := conformance.Run(ctx, cfg)
	if err == nil {
		err = report.WriteTranscripts(out, rep)
	}
	if err != nil {
		row.Verdict = "could not run: " + err.Error()
		return row
	}
	row.rep = rep
	if f, err := os.Create(filepath.Join(dir, "report.json")); err == nil {
		_ = rep.WriteJSON(f)
		_ = f.Close()
	}
	for _, c := range rep.Checks {
		switch c.Outcome {
		case conformance.Pass:
			row.Pass++
		case conformance.Fail, conformance.XFail, conformance.Flaky:
			row.Fail++
		case conformance.NotRun:
			row.Skip++
		case conformance.NA:
			row.NA++
		}
	}
	row.Dialect = rep.Dialect
	if len(rep.Wires) > 0 {
		row.Wires = strings.Join(rep.Wires, ",")
	}
	started := false
	for _, c := range rep.Cases {
		started = started || c.Completed
	}
	switch {
	case !started:
		why := ""
		if c, ok := rep.Check(conformance.Run1); ok {
			why = c.Reason
		}
		row.Verdict = "did not start: " + why
	case rep.OK:
		row.Ran, row.Verdict = true, "PASS"
	case rep.Verdict == conformance.VerdictIncomplete:
		row.Ran, row.Verdict = true, "INCOMPLETE (MUST not judged): "+strings.Join(rep.NotJudged, ", ")
	default:
		row.Ran, row.Verdict = true, "FAIL (MUST): "+strings.Join(rep.Failing, ", ")
	}
	return row
}

// peerResults are the rows as the HTML report takes them.
func peerResults(rows []peerRow) []report.PeerResult {
	out := make([]report.PeerResult, len(rows))
	for i, r := range rows {
		v := r.Version
		if v == "-" {
			v = ""
		}
		out[i] = report.PeerResult{Name: r.Preset + " (" + r.Agent + ")", Version: v, Verdict: r.Verdict, Report: r.rep}
	}
	return out
}

// npmInstall installs pkgs (latest) into dir.
func npmInstall(ctx context.Context, npm, dir string, pkgs []string, timeout time.Duration) error {
	specs := make([]string, len(pkgs))
	for i, p := range pkgs {
		// name@latest: a bare name could be read as a local folder.
		specs[i] = p + "@latest"
	}
	return npmInstallSpecs(ctx, npm, dir, specs, timeout)
}

// npmInstallSpecs installs the npm package specs (name@range) into dir.
func npmInstallSpecs(ctx context.Context, npm, dir string, specs []string, timeout time.Duration) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("npm install: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, specs...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, lastLine(string(b)))
	}
	return nil
}

// npmVersion reads the installed version of pkg under dir.
func npmVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json"))
	if err != nil {
		return "-"
	}
	var m struct{ Version string }
	if json.Unmarshal(b, &m) != nil || m.Version == "" {
		return "-"
	}
	return m.Version
}

// lookPathIn is exec.LookPath over the given PATH.
func lookPathIn(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return textcut.Truncate(l, 200)
		}
	}
	return "(no output)"
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func writePeerTable(w io.Writer, rows []peerRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PRESET\tAGENT\tVERSION\tPASS\tFAIL\tSKIP\tN/A\tMODEL API\tDIALECT\tVERDICT")
	for _, r := range rows {
		counts := []string{"-", "-", "-", "-"}
		if r.Ran || r.Pass+r.Fail+r.Skip+r.NA > 0 {
			counts = []string{fmt.Sprint(r.Pass), fmt.Sprint(r.Fail), fmt.Sprint(r.Skip), fmt.Sprint(r.NA)}
		}
		// The version (the package's own package.json), the model API and
		// dialect seen and the verdict (npm's output, the agent's errors)
		// come from the agent: shown, never acted on.
		v := termtext.Visible
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Preset, r.Agent, v(r.Version), strings.Join(counts, "\t"), v(r.Wires), v(r.Dialect), v(oneLineTrunc(r.Verdict, 160)))
	}
	_ = tw.Flush()
}

// writePeerMarkdown writes the rows as a Markdown table, every cell
// escaped (termtext.MarkdownCell): an agent's version cannot end its cell,
// load a remote image or carry an escape sequence.
func writePeerMarkdown(w io.Writer, rows []peerRow) {
	fmt.Fprintln(w, "| preset | agent | version | pass | fail | skip | n/a | model API | dialect | verdict |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	c := termtext.MarkdownCell
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %d | %d | %s | %s | %s |\n", c(r.Preset), c(r.Agent), c(r.Version), r.Pass, r.Fail, r.Skip, r.NA,
			c(r.Wires), c(r.Dialect), c(oneLineTrunc(r.Verdict, 300)))
	}
}

func oneLineTrunc(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	return textcut.Truncate(s, n)
}

// prefixWriter prefixes every line written to it.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if _, err := io.WriteString(p.w, p.prefix+l); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/explore"
	"github.com/todoharness/todoharness/conformance/report"
)

// exploreFlags are conform's exploration and sharding flags.
type exploreFlags struct {
	n         int
	dur       time.Duration
	seed      string
	shard     string
	shrinkFor time.Duration
}

func (e *exploreFlags) register(f *pflag.FlagSet) {
	f.IntVar(&e.n, "explore", 0, "also run N generated scenarios (docs/exploring.md): an oracle decides every todo_write call, the catalogue judges each scenario, and each distinct failure is shrunk to a case.yaml under --out")
	f.DurationVar(&e.dur, "explore-for", 0, "explore for this long (with --explore N: whichever ends first)")
	f.DurationVar(&e.shrinkFor, "shrink-for", 0, "bound the time the shrinks of the distinct failures take together (default: no bound): each gets an even share of what is left, and keeps the smallest failing case it found by then; for slow agents (docs/exploring.md)")
	f.StringVar(&e.seed, "seed", "", "seed of the generated scenarios (default: drawn and printed; the same seed gives the same scenarios)")
	f.StringVar(&e.shard, "shard", "", "I/N: run the I-th of N deterministic slices of the catalogue and of the exploration (1-based); join the shards' --out folders with \"conform merge\"")
}

func (e *exploreFlags) on() bool { return e.n > 0 || e.dur > 0 }

// parseShard reads --shard I/N as a 0-based index and a count ("": 0, 1).
func parseShard(s string) (int, int, error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("conform: --shard %q: want I/N with 1 <= I <= N, e.g. 2/4", s)
	}
	return i - 1, n, nil
}

// check validates the flags before anything runs, and returns the seed.
func (e *exploreFlags) check(o *conformOptions) (uint64, error) {
	if e.n < 0 || e.dur < 0 || e.shrinkFor < 0 {
		return 0, fmt.Errorf("conform: --explore %d, --explore-for %s, --shrink-for %s: want positive values", e.n, e.dur, e.shrinkFor)
	}
	_, shards, err := parseShard(e.shard)
	if err != nil {
		return 0, err
	}
	// Larger counts would overflow the scenarios' indexes.
	if e.n > explore.MaxScenarios {
		return 0, fmt.Errorf("conform: --explore %d: at most %d scenarios (for an open-ended run give --explore-for D)", e.n, explore.MaxScenarios)
	}
	if e.on() && shards > explore.MaxScenarios {
		return 0, fmt.Errorf("conform: --shard %s: at most %d shards with --explore", e.shard, explore.MaxScenarios)
	}
	if !e.on() {
		if e.seed != "" {
			return 0, errors.New("conform: --seed draws generated scenarios: give --explore N or --explore-for D")
		}
		if e.shrinkFor != 0 {
			return 0, errors.New("conform: --shrink-for bounds the shrinks of an exploration: give --explore N or --explore-for D")
		}
		return 0, nil
	}
	if o.judge != "" || o.list {
		return 0, errors.New("conform: --explore runs scenarios: not with --judge or --list")
	}
	if o.noBuiltin && len(o.caseDirs) == 0 {
		// No catalogue runs, so these would write nothing: say so rather
		// than leave the file the user asked for missing after the run.
		for _, f := range o.reportFiles() {
			if f.path != "" {
				return 0, fmt.Errorf("conform: %s %s: --no-builtin with --explore and no --cases runs no catalogue, so there is no catalogue report to write; the exploration's report is %s under --out DIR", f.flag, f.path, explore.ResultFile)
			}
		}
	}
	if e.seed == "" {
		if e.shard != "" {
			return 0, errors.New("conform: --shard with --explore needs --seed: every shard must draw from the same seed")
		}
		return uint64(time.Now().UnixNano()), nil
	}
	s, err := strconv.ParseUint(e.seed, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("conform: --seed %q: want a whole number from 0 to %d (as an earlier run printed it: \"explore: seed N\")", e.seed, uint64(math.MaxUint64))
	}
	return s, nil
}

// progressLogEvery is how often an exploration writes a progress line
// when its standard error is not a terminal.
const progressLogEvery = 30 * time.Second

// runExplore is the exploration of `conform --explore`: run with the
// catalogue run's configuration, summary printed, the report under --out
// (w notes what of it could not be written).
func runExplore(cmd *cobra.Command, o *conformOptions, cfg conformance.Config, seed uint64, w *reportWriter) (*explore.Result, error) {
	errw := cmd.ErrOrStderr()
	shard, shards, _ := parseShard(o.explore.shard)
	ec := explore.Config{Run: cfg, Seed: seed, N: o.explore.n, For: o.explore.dur, ShrinkFor: o.explore.shrinkFor, Shard: shard, Shards: shards, Out: o.out,
		Reproduce: reproduceFlags(cmd.Flags())}
	if !o.run.quiet {
		// On a terminal one line rewritten in place; in a log (a CI job's,
		// a file) a whole line every half minute, so that a long
		// exploration of a slow agent does not look hung.
		ec.Progress = errw
		if !onTerminal(errw) {
			ec.ProgressEvery = progressLogEvery
		}
	}
	fmt.Fprintf(errw, "explore: seed %d (--seed %d draws the same scenarios)\n", seed, seed)
	res, err := explore.Explore(cmd.Context(), ec)
	if err != nil && res == nil {
		return nil, err
	}
	if err != nil {
		w.fail("--out "+o.out, err) // the exploration ran: its verdict stands
	}
	if err := res.WriteSummary(o.summaryOut(cmd)); err != nil {
		return nil, err
	}
	return res, nil
}

// reproduceOrder is the conform flags that say which agent runs and how
// it is judged, in the order a shrunk case's Reproduce line gives them.
var reproduceOrder = []string{"preset", "agent", "in-process", "env", "file", "clean-env", "model", "dialect", "policy",
	"strict", "expected-failures", "timeout", "grace", "settle", "acp-version", "advertise-plan"}

// reproduceFlags is the flags of this command line a shrunk case is run
// again with: those of reproduceOrder it sets, each as given ([] when it
// sets none: the built-in reference agent, every default).
func reproduceFlags(f *pflag.FlagSet) []string {
	out := []string{}
	for _, name := range reproduceOrder {
		fl := f.Lookup(name)
		if fl == nil || !fl.Changed {
			continue
		}
		switch v := fl.Value.(type) {
		case pflag.SliceValue:
			for _, x := range v.GetSlice() {
				out = append(out, "--"+name, x)
			}
		default:
			switch {
			case fl.Value.Type() == "bool" && fl.Value.String() == "true":
				out = append(out, "--"+name)
			case fl.Value.Type() == "bool":
				out = append(out, "--"+name+"="+fl.Value.String())
			default:
				out = append(out, "--"+name, fl.Value.String())
			}
		}
	}
	return out
}

// exploreStatus is the exit status of an exploration beside the catalogue
// run's (nil: passed), as the catalogue decides its own: an interrupted
// exploration is 130 whatever else, a failure found fails the run (1), a
// scenario not judged makes a run that passed INCOMPLETE (3).
func exploreStatus(catalogue error, res *explore.Result) error {
	if res == nil {
		return catalogue
	}
	switch res.Verdict() {
	case conformance.VerdictInterrupted:
		return exitCode(130)
	case conformance.VerdictFail:
		if catalogue == exitCode(130) {
			return catalogue
		}
		return exitCode(1)
	case conformance.VerdictIncomplete:
		if catalogue == nil {
			return exitCode(3)
		}
	}
	return catalogue
}

// newConformMergeCmd is `todoharness conform merge DIR...`.
func newConformMergeCmd() *cobra.Command {
	var jsonOut, exploreOut, summaryMD string
	var strict bool
	cmd := &cobra.Command{
		Use:   "merge DIR...",
		Short: "Join the --out folders of the shards of a run (--shard I/N) into one verdict",
		Long: `Join the --out folders of the N shards of one run (conform --shard I/N) into the
verdict the whole run gives: the cases' evidence (DIR/<case>/evidence.json,
each case once) is judged again as one run with this catalogue, and the
explorations (DIR/explore.json) are joined: scenarios and hits add up, each
distinct failure (a check and a signature, as the exploration keys them)
keeps the first scenario of any shard with its shrunk case.
The shards must be of one run (the same agent, todoharness and catalogue
versions and shard count; each case and each exploration shard once), every
file readable (a regular file of bounded size that decodes): otherwise the
merge is refused (exit 2) before any report is written. Exit status as
conform's.`,
		Example: `  todoharness conform merge shard-1 shard-2 shard-3 shard-4 --json conform.json`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			return mergeShards(cmd, dirs, mergeOutputs{jsonOut, exploreOut, summaryMD}, strict)
		},
	}
	cmd.Flags().StringVar(&jsonOut, "json", "", "write the merged catalogue report as JSON to FILE (- for stdout: the summaries then go to stderr)")
	cmd.Flags().StringVar(&exploreOut, "explore-json", "", "write the merged exploration report as JSON to FILE")
	cmd.Flags().StringVar(&summaryMD, "summary-md", "", "write the merged catalogue's summary as Markdown to FILE (for $GITHUB_STEP_SUMMARY or a pull-request comment)")
	cmd.Flags().BoolVar(&strict, "strict", false, "a failed SHOULD check fails the run too")
	return cmd
}

// mergeOutputs are the report files conform merge writes ("": none).
type mergeOutputs struct{ json, exploreJSON, summaryMD string }

func mergeShards(cmd *cobra.Command, dirs []string, outs mergeOutputs, strict bool) error {
	exploreOut := outs.exploreJSON
	o := &conformOptions{jsonOut: outs.json, summaryMD: outs.summaryMD, format: report.FormatText}
	out := o.summaryOut(cmd)
	evs, results, err := readShards(dirs)
	if err != nil {
		return err
	}
	// Everything that can refuse the merge does so before anything is
	// written or printed: no report and no verdict of a merge refused.
	var res *explore.Result
	if len(results) > 0 {
		if res, err = explore.Merge(results); err != nil {
			return fmt.Errorf("conform merge: %w", err)
		}
	}
	var rep *conformance.Report
	if len(evs) > 0 {
		if rep, err = conformance.Judge(evs, conformance.JudgeConfig{Strict: strict, Validator: schemaValidatorOf(cmd.Context())}); err != nil {
			return err
		}
	}
	w := newReportWriter(cmd.Context())
	defer w.end(cmd.ErrOrStderr())
	var status error
	if rep != nil {
		status = reportConform(cmd.OutOrStdout(), out, cmd.ErrOrStderr(), o, rep, w)
		var ec exitCode
		if status != nil && !errors.As(status, &ec) {
			return status
		}
	}
	if res == nil {
		return status
	}
	w.file("--explore-json", exploreOut, func(w io.Writer) error {
		b, err := explore.EncodeResult(res)
		if err == nil {
			_, err = w.Write(b)
		}
		return err
	})
	if err := res.WriteSummary(out); err != nil {
		return err
	}
	return exploreStatus(status, res)
}

// shardRun is what identifies the run a shard folder's evidence or
// exploration comes from; conform merge joins only shards that agree.
type shardRun struct {
	agent, toolVersion       string
	catalogueVersion, shards int
}

// readShards reads the evidence (each case once, in case order) and the
// exploration report of every shard folder. Every file is read as
// safefile reads (a FIFO or a device refused, the size capped), and any
// file that cannot be read or decoded is an error naming it: a folder with
// explore.json may hold no evidence (an exploration alone), never bad
// evidence. A folder --out could not write whole is refused. The shards
// must be of one run (the same agent, tool and catalogue versions), and a
// case may come from one shard only: the probe, which every shard runs,
// is taken from the lowest shard (by its evidence, not by the order of
// the folders).
func readShards(dirs []string) ([]*conformance.Evidence, []*explore.Result, error) {
	var evs []*conformance.Evidence
	var results []*explore.Result
	var first *shardRun
	firstDir := ""
	same := func(dir string, r shardRun) error {
		if first == nil {
			first, firstDir = &r, dir
			return nil
		}
		for _, d := range []struct{ what, a, b string }{
			{"agent", r.agent, first.agent},
			{"tool version", r.toolVersion, first.toolVersion},
			{"catalogue version", fmt.Sprint(r.catalogueVersion), fmt.Sprint(first.catalogueVersion)},
			{"shard count", fmt.Sprint(r.shards), fmt.Sprint(first.shards)},
		} {
			if d.a != d.b {
				return fmt.Errorf("conform merge: %s has %s %q, %s has %q: not the shards of one run", dir, d.what, d.a, firstDir, d.b)
			}
		}
		return nil
	}
	type kept struct {
		ev  *conformance.Evidence
		dir string
	}
	byCase := map[string]kept{}
	for _, dir := range dirs {
		found := false
		p := filepath.Join(dir, explore.ResultFile)
		if _, err := os.Lstat(p); err == nil {
			r, err := explore.ReadResult(p)
			if err != nil {
				return nil, nil, fmt.Errorf("conform merge: %w", err)
			}
			if err := same(dir, shardRun{r.Agent, r.ToolVersion, r.CatalogueVersion, r.Shards}); err != nil {
				return nil, nil, err
			}
			results, found = append(results, r), true
		}
		got, err := conformance.ReadEvidenceDir(dir)
		switch {
		case errors.Is(err, conformance.ErrNoEvidence) && found:
			continue // an exploration alone
		case errors.Is(err, conformance.ErrNoEvidence):
			return nil, nil, fmt.Errorf("conform merge: %s: neither evidence (<case>/%s) nor %s", dir, conformance.EvidenceFile, explore.ResultFile)
		case err != nil:
			return nil, nil, fmt.Errorf("conform merge: %w", err)
		}
		for _, ev := range got {
			if err := same(dir, shardRun{ev.Run.Agent, ev.Run.ToolVersion, ev.Run.CatalogueVersion, shardCount(ev)}); err != nil {
				return nil, nil, err
			}
			key := fmt.Sprintf("%s\x00%d", ev.Case.ID, ev.Repeat)
			prev, dup := byCase[key]
			switch {
			case !dup:
				byCase[key] = kept{ev, dir}
			case ev.Case.Probe && prev.ev.Case.Probe && shardIndex(ev) != shardIndex(prev.ev):
				if shardIndex(ev) < shardIndex(prev.ev) {
					byCase[key] = kept{ev, dir}
				}
			default:
				return nil, nil, fmt.Errorf("conform merge: case %s is in %s and in %s: a case comes from one shard (is a folder given twice, or two runs?)", ev.Case.ID, prev.dir, dir)
			}
		}
	}
	for _, k := range byCase {
		evs = append(evs, k.ev)
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].Case.ID != evs[j].Case.ID {
			return evs[i].Case.ID < evs[j].Case.ID
		}
		return evs[i].Repeat < evs[j].Repeat
	})
	return evs, results, nil
}

// shardCount is how many shards the run of ev's evidence was split into
// (1 when it was not, or does not say).
func shardCount(ev *conformance.Evidence) int {
	if _, n, err := parseShard(ev.Run.Shard); err == nil {
		return n
	}
	return 1
}

// shardIndex is the shard of the run ev's evidence comes from (0-based;
// a large number when it does not say: evidence of an older version).
func shardIndex(ev *conformance.Evidence) int {
	if i, _, err := parseShard(ev.Run.Shard); err == nil && ev.Run.Shard != "" {
		return i
	}
	return math.MaxInt
}

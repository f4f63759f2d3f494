package conformance

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/testutil"
)

// exampleScript is the example agent of docs/validating-other-agents.md.
func exampleScript() string {
	return filepath.Join(testutil.RepoRoot(), "docs", "examples", "minimal_agent.py")
}

// python3 is the interpreter that runs the example agent, or "" with the
// reason it cannot run here (found once, in BeforeSuite).
func python3() (path, missing string) { return python.path, python.missing }

// python is the python3 of the PATH, resolved to the interpreter it runs
// (sys.executable): a version manager's shim (pyenv's is a shell script)
// costs about 70 ms at every start, and the suite starts some hundred
// agents in Python.
var python struct{ path, missing string }

func findPython() {
	p, err := exec.LookPath("python3")
	if err != nil {
		python.missing = "the example agent (docs/examples/minimal_agent.py) needs python3, not found on the PATH: " + err.Error()
		return
	}
	python.path = p
	out, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output()
	if exe := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(exe) {
		python.path = exe
	}
}

// pythonPath is $PATH with the resolved interpreter's folder first, when
// it holds a python3: "python3" on a command line then starts it at once.
func pythonPath() string {
	dir := filepath.Dir(python.path)
	if _, err := os.Stat(filepath.Join(dir, "python3")); err != nil {
		return os.Getenv("PATH")
	}
	return dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// casesShowing returns few cases of cs on which failures of the checks can
// show: a greedy cover, in which every check is fed by a kept case (a
// check judged on every case is fed by any), taking at each step the case
// that feeds the most checks not yet fed (the first of cs on a tie). A
// failure found on them is one the whole catalogue finds (a check fails
// when any case fails it); a check whose failure shows on none of them
// fails the spec, never passes it.
func casesShowing(cs []*conformance.Case, checks []string) []*conformance.Case {
	always := map[string]bool{}
	for _, c := range conformance.Catalogue() {
		always[c.ID] = c.Always
	}
	feeds := func(c *conformance.Case, id string) bool { return always[id] || c.Feeds(id) }
	unfed := map[string]bool{}
	for _, id := range checks {
		unfed[id] = true
	}
	keep := map[*conformance.Case]bool{}
	for len(unfed) > 0 {
		var best *conformance.Case
		bestN := 0
		for _, c := range cs {
			n := 0
			for id := range unfed {
				if feeds(c, id) {
					n++
				}
			}
			if n > bestN {
				best, bestN = c, n
			}
		}
		if best == nil {
			break // no case feeds the rest: nothing would show them
		}
		keep[best] = true
		for id := range unfed {
			if feeds(best, id) {
				delete(unfed, id)
			}
		}
	}
	var out []*conformance.Case
	for _, c := range cs {
		if keep[c] {
			out = append(out, c)
		}
	}
	return out
}

// exampleAgentE is the example agent with $FLAW=flaw ("" for none), or
// why it cannot run here (no Expect: once calls it). It runs
// with python3 -S: the example imports the standard library only, and the
// site module (a machine's .pth hooks: 30 ms of start-up on the machine
// docs/performance.md measures) would be paid at each of the suite's
// hundred starts. The documented command line has its own spec.
func exampleAgentE(flaw string) (driver.Target, error) {
	py, missing := python3()
	if missing != "" {
		return driver.Target{}, errors.New(missing)
	}
	return driver.Target{Name: "example " + flaw, Command: []string{py, "-S", exampleScript()}, Env: []string{"FLAW=" + flaw}}, nil
}

var _ = Describe("the example agent for agent authors (docs/examples/minimal_agent.py)", func() {
	BeforeEach(func() {
		if _, missing := python3(); missing != "" {
			Skip(missing)
		}
	})

	// A process: PATH (see conformCLIE).
	docsRun := onceCLI(func(dir string) ([]cliRun, error) {
		if _, missing := python3(); missing != "" {
			return nil, nil // the spec skips, saying why
		}
		// docs/validating-other-agents.md: todoharness conform --agent "python3 $PWD/docs/examples/minimal_agent.py"
		r, err := conformProcessE([]string{"PATH=" + pythonPath()}, "--agent", "python3 "+exampleScript(), "--json", filepath.Join(dir, "conform.json"))
		return []cliRun{r}, err
	})
	It("passes the whole catalogue, run the way the docs say", func() {
		w := docsRun()
		report := filepath.Join(w.dir, "conform.json")
		code, out := w.runs[0].code, w.runs[0].out
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("PASS: every MUST check passes"))
		b, err := os.ReadFile(report)
		Expect(err).NotTo(HaveOccurred())
		var rep struct {
			Verdict   string
			AgentInfo struct{ Name, Version string }
			Pool      string
			Checks    []struct {
				ID, Outcome, Reason string
				Shared              bool
			}
		}
		Expect(json.Unmarshal(b, &rep)).To(Succeed())
		Expect(rep.Verdict).To(Equal(conformance.VerdictPass))
		Expect(rep.Checks).To(HaveLen(len(conformance.Catalogue())))
		for _, c := range rep.Checks {
			want := conformance.Pass
			if c.Shared && rep.Pool == conformance.PoolOff {
				want = conformance.NA // a check of sessions that share a process: none did
			}
			Expect(c.Outcome).To(Equal(string(want)), "%s: %s\n%s", c.ID, c.Reason, out)
		}
		Expect(rep.AgentInfo.Name).To(Equal("minimal-agent"))
	})

	It("is documented with the flaws of the registry and the checks each fails", func() {
		doc, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "docs", "validating-other-agents.md"))
		Expect(err).NotTo(HaveOccurred())
		rows := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| [^|]+ \\| (`[^|]+`) \\|$").FindAllStringSubmatch(string(doc), -1)
		documented := map[string][]string{}
		for _, r := range rows {
			documented[r[1]] = strings.Split(strings.ReplaceAll(r[2], "`", ""), ", ")
		}
		want := map[string][]string{}
		for _, b := range breakage.In(breakage.Example) {
			want[b.Name] = b.Fails
		}
		Expect(documented).To(Equal(want), "the FLAW table of docs/validating-other-agents.md and conformance/breakage disagree")
	})

	type combo struct {
		names []string
		want  []string
	}
	var combos []combo
	flaws := breakage.In(breakage.Example)
	for mask := 1; mask < 1<<len(flaws); mask++ {
		var c combo
		for i, f := range flaws {
			if mask&(1<<i) != 0 {
				c.names = append(c.names, f.Name)
				c.want = append(c.want, f.Fails...)
			}
		}
		if len(c.names) > 1 {
			combos = append(combos, c)
		}
	}
	// Each combination runs the cases where its flaws' failures show
	// (casesShowing): the claims are failures, so fewer cases can only
	// make them harder to meet.
	var comboRuns []func() *conformance.Report
	for _, c := range combos {
		flaw := strings.Join(c.names, ",")
		comboRuns = append(comboRuns, once(func() (*conformance.Report, error) {
			if _, missing := python3(); missing != "" {
				return nil, nil // the spec skips, saying why
			}
			all, err := casesE()
			if err != nil {
				return nil, err
			}
			t, err := exampleAgentE(flaw)
			if err != nil {
				return nil, err
			}
			return runE(t, func(cfg *conformance.Config) {
				cfg.Cases, cfg.Dialect = casesShowing(all, c.want), driver.DialectTodoWrite
			})
		}))
	}

	// Each flaw alone fails exactly its checks (the breakage table); here,
	// every combination of two or more fails the run, and still fails
	// every check each of its flaws fails alone: no flaw hides another.
	It("never passes with any combination of its flaws", func() {
		all := cases()
		Expect(comboRuns).To(HaveLen(len(combos)))
		for i, c := range combos {
			rep := comboRuns[i]()
			Expect(len(rep.Cases)).To(BeNumerically("<", len(all)), "FLAW=%s ran every case", strings.Join(c.names, ","))
			Expect(rep.Verdict).To(Equal(conformance.VerdictFail), explained(rep, "FLAW=%s", strings.Join(c.names, ",")))
			Expect(rep.FailedIDs()).To(ContainElements(c.want), explained(rep, "FLAW=%s", strings.Join(c.names, ",")))
		}
		Expect(combos).To(HaveLen(11), "the pairs, triples and the quadruple of four flaws")
	})

	It("knows exactly the flaws of the breakage registry, and refuses another naming them", func() {
		py, _ := python3()
		cmd := exec.Command(py, exampleScript(), "--base-url", "http://127.0.0.1:9/v1")
		cmd.Env = append(os.Environ(), "FLAW=no-such-flaw")
		out, err := cmd.CombinedOutput()
		Expect(err).To(HaveOccurred(), string(out))
		Expect(string(out)).To(ContainSubstring(`unknown FLAW 'no-such-flaw' (known: ` + strings.Join(breakage.Names(breakage.Example), ", ") + ")"))
	})
})

package conformance

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/internal/breakage"
	"github.com/todoharness/todoharness/internal/testutil"
)

// exampleScript is the example agent of docs/validating-other-agents.md.
func exampleScript() string {
	return filepath.Join(testutil.RepoRoot(), "docs", "examples", "minimal_agent.py")
}

// python3 is the interpreter that runs the example agent, or "" with the
// reason it cannot run here.
func python3() (path, missing string) {
	p, err := exec.LookPath("python3")
	if err != nil {
		return "", "the example agent (docs/examples/minimal_agent.py) needs python3, not found on the PATH: " + err.Error()
	}
	return p, ""
}

// exampleAgent is the example agent with $FLAW=flaw ("" for none).
func exampleAgent(flaw string) conformance.Target {
	py, missing := python3()
	Expect(missing).To(BeEmpty())
	return conformance.Target{Name: "example " + flaw, Command: []string{py, exampleScript()}, Env: []string{"FLAW=" + flaw}}
}

var _ = Describe("the example agent for agent authors (docs/examples/minimal_agent.py)", func() {
	BeforeEach(func() {
		if _, missing := python3(); missing != "" {
			Skip(missing)
		}
	})

	It("passes the whole catalogue, run the way the docs say", func() {
		dir := GinkgoT().TempDir()
		report := filepath.Join(dir, "conform.json")
		// docs/validating-other-agents.md: todoharness conform --agent "python3 $PWD/docs/examples/minimal_agent.py"
		code, out := conformCLI("--agent", "python3 "+exampleScript(), "--json", report)
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("PASS: every MUST check passes"))
		b, err := os.ReadFile(report)
		Expect(err).NotTo(HaveOccurred())
		var rep struct {
			Verdict   string
			AgentInfo struct{ Name, Version string }
			Checks    []struct{ ID, Outcome, Reason string }
		}
		Expect(json.Unmarshal(b, &rep)).To(Succeed())
		Expect(rep.Verdict).To(Equal(conformance.VerdictPass))
		Expect(rep.Checks).To(HaveLen(len(conformance.Catalogue())))
		for _, c := range rep.Checks {
			Expect(c.Outcome).To(Equal(string(conformance.Pass)), "%s: %s\n%s", c.ID, c.Reason, out)
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
		Expect(documented).To(Equal(want), "the FLAW table of docs/validating-other-agents.md and internal/breakage disagree")
	})

	// Each flaw alone fails exactly its checks (the breakage table); here,
	// every combination of two or more fails the run, and still fails
	// every check each of its flaws fails alone: no flaw hides another.
	It("never passes with any combination of its flaws", func() {
		flaws := breakage.In(breakage.Example)
		type combo struct {
			names []string
			want  []string
		}
		var combos []combo
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
		reps := runEach(6, len(combos), func(i int) *conformance.Report {
			return run(exampleAgent(strings.Join(combos[i].names, ",")), nil)
		})
		for i, c := range combos {
			rep := reps[i]
			Expect(rep.Verdict).To(Equal(conformance.VerdictFail), "FLAW=%s\n%s", strings.Join(c.names, ","), explain(rep))
			Expect(rep.FailedIDs()).To(ContainElements(c.want), "FLAW=%s\n%s", strings.Join(c.names, ","), explain(rep))
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

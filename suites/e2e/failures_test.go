package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	cassettereplay "github.com/todoharness/todoharness/harness/llm/cassette/replay"
	"github.com/todoharness/todoharness/scenario"
)

// variant copies scenario name into a temporary folder, with its prompt
// text rewritten by edit (nil keeps it), and returns it loaded.
func variant(name string, edit func(string) string) *scenario.Scenario {
	GinkgoHelper()
	src := loadScenario(name)
	dir := filepath.Join(GinkgoT().TempDir(), name)
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	copyFile(src.CassettePath(), filepath.Join(dir, scenario.CassetteFile))
	steps := append([]scenario.Step(nil), src.Steps...)
	for i := range steps {
		if steps[i].Op == scenario.OpPrompt && edit != nil {
			steps[i].Text = edit(steps[i].Text)
		}
	}
	data, err := json.Marshal(map[string]any{"steps": steps})
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, scenario.InputFile), data, 0o644)).To(Succeed())
	sc, err := scenario.Load(dir)
	Expect(err).NotTo(HaveOccurred())
	return sc
}

// dropLastInteraction rewrites a cassette without its last interaction.
func dropLastInteraction(path string) {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	var doc yaml.Node
	Expect(yaml.Unmarshal(data, &doc)).To(Succeed())
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "interactions" {
			list := root.Content[i+1]
			list.Content = list.Content[:len(list.Content)-1]
		}
	}
	out, err := yaml.Marshal(&doc)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(path, out, 0o644)).To(Succeed())
}

var _ = Describe("a cassette miss", func() {
	It("fails with the request that missed and a diff against the nearest recording", func(ctx SpecContext) {
		sc := variant("todo-plan", func(s string) string {
			return strings.Replace(s, "exactly three todos", "exactly four todos", 1)
		})
		rep, err := scenario.Replay(ctx, sc, sc.CassettePath(), scenario.RunOptions{})
		Expect(err).To(HaveOccurred())
		msg := err.Error()
		Expect(msg).To(ContainSubstring("cassette miss: " + sc.CassettePath()))
		Expect(msg).To(ContainSubstring("no recorded interaction matches request 1 (POST /chat/completions)"))
		Expect(msg).To(ContainSubstring("nearest recorded request: interaction 0 (not yet replayed)"))
		Expect(msg).To(ContainSubstring("--- recorded interaction 0"))
		Expect(msg).To(ContainSubstring("+++ request made"))
		Expect(msg).To(MatchRegexp(`(?m)^-.*exactly three todos`))
		Expect(msg).To(MatchRegexp(`(?m)^\+.*exactly four todos`))

		var miss *cassettereplay.MissError
		Expect(errors.As(err, &miss)).To(BeTrue())
		Expect(miss.Request).To(Equal(1))
		Expect(rep.Player.Misses()).To(HaveLen(1))

		By("and the editor is told the turn failed because of it")
		g, gerr := scenario.ACPGolden(rep.Result.Wire, rep.Result.Cwd)
		Expect(gerr).NotTo(HaveOccurred())
		Expect(string(g)).To(ContainSubstring("model error"))
		Expect(string(g)).To(ContainSubstring("cassette miss"))
	}, NodeTimeout(time.Minute))

	It("fails when the run asks for more than was recorded, naming the exchange already replayed", func(ctx SpecContext) {
		sc := variant("todo-plan", nil)
		dropLastInteraction(sc.CassettePath())
		_, err := scenario.Replay(ctx, sc, sc.CassettePath(), scenario.RunOptions{})
		Expect(err).To(MatchError(ContainSubstring("no recorded interaction matches request 2 (POST /chat/completions)")))
		Expect(err).To(MatchError(ContainSubstring("nearest recorded request: interaction 0 (already replayed)")))
		Expect(err).To(MatchError(MatchRegexp(`(?m)^\+.*"role": "tool"`)), "the diff shows the tool result the recording never saw")
	}, NodeTimeout(time.Minute))

	It("fails when recorded exchanges are never requested", func(ctx SpecContext) {
		sc := variant("todo-plan", nil)
		sc.Steps = sc.Steps[:2] // initialize, newSession: no prompt at all
		_, err := scenario.Replay(ctx, sc, sc.CassettePath(), scenario.RunOptions{})
		Expect(err).To(MatchError(ContainSubstring("recorded interactions [0 1] were never requested")))
	}, NodeTimeout(time.Minute))
})

var _ = Describe("a corrupt cassette", func() {
	DescribeTable("fails before the run with a clear message",
		func(ctx SpecContext, corrupt func(data []byte) []byte, want string) {
			sc := variant("todo-plan", nil)
			data, err := os.ReadFile(sc.CassettePath())
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(sc.CassettePath(), corrupt(data), 0o644)).To(Succeed())
			rep, err := scenario.Replay(ctx, sc, sc.CassettePath(), scenario.RunOptions{})
			Expect(rep).To(BeNil(), "nothing ran")
			Expect(err).To(HaveOccurred())
			var ce *cassette.CorruptError
			Expect(errors.As(err, &ce)).To(BeTrue(), "got %v", err)
			Expect(err.Error()).To(ContainSubstring("cassette " + sc.CassettePath() + " is corrupt: " + want))
			Expect(err.Error()).To(ContainSubstring("re-record it, or restore it from version control"))
		},
		Entry("not YAML", func([]byte) []byte { return []byte("interactions: [ {\n\t- nope") }, "not valid cassette YAML: yaml:"),
		Entry("empty", func([]byte) []byte { return nil }, "the file is empty"),
		Entry("cut in the middle of an interaction", func(d []byte) []byte {
			i := strings.Index(string(d), "    - id: 1")
			return d[:i+len("    - id: 1\n      request:\n")]
		}, "interaction 1: request has no method"),
		Entry("no provenance block", func(d []byte) []byte {
			s := string(d)
			return []byte(s[strings.Index(s, "version: 2"):])
		}, "no provenance block (every cassette must say where it came from)"),
		Entry("an older go-vcr format", func(d []byte) []byte {
			return []byte(strings.Replace(string(d), "version: 2", "version: 1", 1))
		}, "format version is 1, want 2"),
		Entry("a mock recording claiming real-model output", func(d []byte) []byte {
			s := strings.Replace(string(d), "source: session-log", "source: mock-server", 1)
			return []byte(s)
		}, "bad provenance block: provenance: a mock-server cassette cannot claim realModelOutput: true"),
	)

	It("says how to record a cassette that does not exist", func(ctx SpecContext) {
		sc := variant("todo-plan", nil)
		Expect(os.Remove(sc.CassettePath())).To(Succeed())
		_, err := scenario.Replay(ctx, sc, sc.CassettePath(), scenario.RunOptions{})
		Expect(errors.Is(err, cassette.ErrNotFound)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("cassette not found: " + sc.CassettePath() + " (record it with DEEPSEEK_API_KEY=… make record")))
	})
})

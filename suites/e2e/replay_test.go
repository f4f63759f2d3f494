package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/acp/transcript"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/fromlog"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/scenario"
)

var _ = Describe("offline replay of the committed cassettes", func() {
	It("covers every required scenario, each with its cassette", func() {
		names, err := scenario.List(scenariosDir())
		Expect(err).NotTo(HaveOccurred())
		Expect(names).To(ContainElements(scenarioNames()))
		for _, n := range names {
			_, err := os.Stat(loadScenario(n).CassettePath())
			Expect(err).NotTo(HaveOccurred(), "scenario %s has no cassette", n)
		}
	})

	DescribeTable("replays a scenario offline and matches its goldens: plan and tool notifications, session log, and the request pins (tool definitions, system prompt)",
		func(ctx SpecContext, name string) {
			sc := loadScenario(name)
			assertGoldens(name, viewsOf(replay(ctx, sc, sc.CassettePath()), sc.CassettePath()))
		},
		Entry("todo-plan (real DeepSeek output, rebuilt from the interop session log)", "todo-plan", NodeTimeout(time.Minute)),
		Entry("replace (mock-recorded)", "replace", NodeTimeout(time.Minute)),
		Entry("reject-recover (mock-recorded)", "reject-recover", NodeTimeout(time.Minute)),
	)

	It("replays scenario folders added later too", func(ctx SpecContext) {
		names, err := scenario.List(scenariosDir())
		Expect(err).NotTo(HaveOccurred())
		for _, n := range names {
			if contains(scenarioNames(), n) {
				continue // replayed by the table above
			}
			By("replaying " + n)
			sc := loadScenario(n)
			assertGoldens(n, viewsOf(replay(ctx, sc, sc.CassettePath()), sc.CassettePath()))
		}
	}, NodeTimeout(2*time.Minute))
})

var _ = Describe("todo-plan against the original implementation", Ordered, func() {
	var (
		rep      *scenario.Replayed
		origLog  *session.Loaded
		origWire [][]byte
	)
	BeforeAll(func(ctx SpecContext) {
		sc := loadScenario("todo-plan")
		rep = replay(ctx, sc, sc.CassettePath())
		var err error
		origLog, err = session.LoadFile(interopFile("todo-plan/session.jsonl"))
		Expect(err).NotTo(HaveOccurred())
		f, err := os.Open(interopFile("todo-plan/stdout.golden.jsonl"))
		Expect(err).NotTo(HaveOccurred())
		defer f.Close()
		origWire, err = transcript.ReadLines(f)
		Expect(err).NotTo(HaveOccurred())
	}, NodeTimeout(time.Minute))

	It("runs the interop input.json", func() {
		ours, err := os.ReadFile(filepath.Join(scenariosDir(), "todo-plan", scenario.InputFile))
		Expect(err).NotTo(HaveOccurred())
		theirs, err := os.ReadFile(interopFile("todo-plan/input.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(ours)).To(Equal(string(theirs)))
	})

	It("ships a cassette labelled as real DeepSeek output rebuilt from that session log", func() {
		p := rep.Player.Provenance()
		Expect(p.Source).To(Equal(cassette.SourceSessionLog))
		Expect(p.RealModelOutput).To(BeTrue())
		Expect(p.Description).To(Equal("rebuilt from session log todo-plan/session.jsonl recorded by the original implementation against DeepSeek"))
		Expect(p.APIHost).To(Equal("api.deepseek.com"))
		Expect(p.Model).To(Equal("deepseek-chat"))
	})

	It("sends the same plan and tool notifications as the original", func() {
		ours := goldensOf(rep.Result).ACP
		theirs, err := scenario.ACPGolden(origWire, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Count(string(theirs), `"sessionUpdate":"plan"`)).To(Equal(1), "the original sent one plan")
		Expect(string(ours)).To(Equal(string(theirs)))
	})

	It("writes the same todo/write, tool/call, tool/result and turn/step structure as the original", func() {
		theirs, err := scenario.LogGolden(origLog.Events)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(goldensOf(rep.Result).Log)).To(Equal(string(theirs)))
	})

	It("streams the recorded deltas one by one: the same assistant chunks as the original", func() {
		Expect(chunks(rep.Result.Log.Events)).To(Equal(chunks(origLog.Events)))
	})

	It("is exactly what `cassette from-log` rebuilds from the session log today", func(ctx SpecContext) {
		reg, err := builtin.Compose("")
		Expect(err).NotTo(HaveOccurred())
		out := filepath.Join(GinkgoT().TempDir(), "cassette.yaml")
		_, err = fromlog.Rebuild(ctx, fromlog.Options{
			Log: origLog, LogName: "todo-plan/session.jsonl", Out: out, Tools: reg.Specs(),
			RecordedBy: "the original implementation against DeepSeek", RealModelOutput: true, Scenario: "todo-plan",
		})
		Expect(err).NotTo(HaveOccurred())
		fresh, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		committed, err := os.ReadFile(loadScenario("todo-plan").CassettePath())
		Expect(err).NotTo(HaveOccurred())
		Expect(withoutToolVersion(string(fresh))).To(Equal(withoutToolVersion(string(committed))),
			"regenerate it: todoharness cassette from-log (see fixtures/e2e/README.md)")
	}, NodeTimeout(time.Minute))
})

func withoutToolVersion(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "toolVersion:") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/recording"
	"github.com/todoharness/todoharness/scenario"
)

// suiteName is the golden folder: golden/e2e/.
const suiteName = "e2e"

// scenarioNames are the scenarios the tier must cover (every folder of
// fixtures/e2e/ is replayed; these must be among them).
func scenarioNames() []string { return []string{"todo-plan", "replace", "reject-recover"} }

// mockRecorded are the scenarios whose committed cassettes were recorded
// against the local mock server (no internet where they were made).
func mockRecorded() []string { return []string{"replace", "reject-recover"} }

func scenariosDir() string { return filepath.Join(testutil.RepoRoot(), "fixtures", "e2e") }

func loadScenario(name string) *scenario.Scenario {
	GinkgoHelper()
	sc, err := scenario.Load(filepath.Join(scenariosDir(), name))
	Expect(err).NotTo(HaveOccurred())
	return sc
}

// replay replays sc from cassette path and fails the spec on any error.
func replay(ctx context.Context, sc *scenario.Scenario, path string) *scenario.Replayed {
	GinkgoHelper()
	rep, err := scenario.Replay(ctx, sc, path, scenario.RunOptions{})
	Expect(err).NotTo(HaveOccurred(), "replaying %s from %s", sc.Name, path)
	return rep
}

func goldensOf(res *scenario.Result) scenario.Goldens {
	GinkgoHelper()
	g, err := res.Goldens()
	Expect(err).NotTo(HaveOccurred())
	return g
}

// views are the goldens of a replay, by view (scenario.GoldenViews).
type views map[string][]byte

// viewsOf computes every golden view of a replay of sc from the cassette at
// path: the normalised ACP notifications and session log, and the request
// pins. The pins are computed by recording.Pins (as `todoharness record`
// writes them) from the cassette's requests: the replay matched every
// request the agent sent to a recorded one, body and all, and played every
// recorded one, so they are the tool definitions and system prompt the
// reference agent sent in this replay.
func viewsOf(rep *scenario.Replayed, path string) views {
	GinkgoHelper()
	Expect(rep.Player.Misses()).To(BeEmpty())
	Expect(rep.Player.Unplayed()).To(BeEmpty(), "every recorded exchange is requested")
	g := goldensOf(rep.Result)
	interactions, err := cassette.Interactions(path)
	Expect(err).NotTo(HaveOccurred())
	tools, system, err := recording.Pins(interactions, rep.Result.Cwd, "")
	Expect(err).NotTo(HaveOccurred())
	return views{scenario.ViewACP: g.ACP, scenario.ViewLog: g.Log, scenario.ViewTools: tools, scenario.ViewSystem: system}
}

// assertGoldens compares (or, with GOLDIE_UPDATE=1, rewrites) every golden
// of scenario name.
func assertGoldens(name string, v views) {
	GinkgoHelper()
	for _, view := range scenario.GoldenViews() {
		testutil.AssertGolden(GinkgoTB(), suiteName, name+"."+view, v[view])
	}
}

// compareGoldens compares with the golden files and never rewrites them.
func compareGoldens(name string, v views) {
	GinkgoHelper()
	gold := testutil.Golden(GinkgoTB(), suiteName)
	for _, view := range scenario.GoldenViews() {
		gold.Assert(GinkgoTB(), name+"."+view, v[view])
	}
}

// chunks returns the chunk payloads of a log's assistant/chunk events.
func chunks(events []session.Event) []string {
	GinkgoHelper()
	var out []string
	for _, e := range events {
		if e.Type != session.TypeAssistantChunk {
			continue
		}
		var d struct {
			Turn  int             `json:"turn"`
			Step  int             `json:"step"`
			Chunk json.RawMessage `json:"chunk"`
		}
		Expect(json.Unmarshal(e.Data, &d)).To(Succeed())
		var v any
		Expect(json.Unmarshal(d.Chunk, &v)).To(Succeed())
		b, err := json.Marshal(map[string]any{"turn": d.Turn, "step": d.Step, "chunk": v})
		Expect(err).NotTo(HaveOccurred())
		out = append(out, string(b))
	}
	return out
}

// copyFile copies src to dst.
func copyFile(src, dst string) {
	GinkgoHelper()
	data, err := os.ReadFile(src)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(dst, data, 0o644)).To(Succeed())
}

// interopFile returns a file of the committed interop fixtures
// (fixtures/interop/deepseek-harness); the spec fails, saying where it
// looked, when it is missing.
func interopFile(rel string) string {
	GinkgoHelper()
	p, err := testutil.InteropFile(rel)
	Expect(err).NotTo(HaveOccurred())
	return p
}

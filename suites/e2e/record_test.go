package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/record"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/mockmodel"
	"github.com/todoharness/todoharness/scenario"
)

// fakeKey is what the offline recording spec sends as its API key.
const fakeKey = "sk-test-SECRET123"

// authSpy is a transport that notes the Authorization header of every
// request that really goes out.
type authSpy struct {
	mu   sync.Mutex
	seen []string
	next http.RoundTripper
}

func (s *authSpy) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.seen = append(s.seen, req.Header.Get("Authorization"))
	s.mu.Unlock()
	return s.next.RoundTrip(req)
}

func (s *authSpy) headers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// setenv sets an environment variable for the rest of the spec.
func setenv(key, value string) {
	old, had := os.LookupEnv(key)
	Expect(os.Setenv(key, value)).To(Succeed())
	DeferCleanup(func() {
		if had {
			os.Setenv(key, old)
		} else {
			os.Unsetenv(key)
		}
	})
}

var _ = Describe("the recording path, offline", Serial, func() {
	It("records against the mock server with a fake key, scrubs it, and replays with no server to the same goldens", func(ctx SpecContext) {
		sc := loadScenario("replace")
		script, err := mockmodel.LoadScript(sc.MockScript)
		Expect(err).NotTo(HaveOccurred())
		srv := mockmodel.NewServer(script)
		DeferCleanup(srv.Close)
		DeferCleanup(func() {
			if CurrentSpecReport().Failed() {
				for _, e := range srv.Journal().Entries() {
					AddReportEntry("mock journal", fmt.Sprintf("#%d turn %d status %d messages %d error %q", e.Index, e.TurnIndex, e.Status, len(e.Messages), e.Error))
				}
			}
		})

		setenv("DEEPSEEK_BASE_URL", srv.BaseURL())
		setenv("DEEPSEEK_API_KEY", fakeKey)
		cfg := openaichat.ConfigFromEnv("")
		Expect(cfg.APIKey).To(Equal(fakeKey))
		spy := &authSpy{next: http.DefaultTransport}
		cfg.HTTPClient = &http.Client{Transport: spy}

		out := filepath.Join(GinkgoT().TempDir(), "cassette.yaml")
		rec, err := scenario.RecordCassette(ctx, sc, scenario.RecordConfig{Client: cfg, Cassette: out})
		Expect(err).NotTo(HaveOccurred())
		Expect(rec.Exchanges).To(Equal(3))

		By("sending the key untouched on the live requests")
		Expect(spy.headers()).To(HaveLen(3))
		Expect(spy.headers()).To(HaveEach("Bearer " + fakeKey))
		Expect(srv.Journal().Errors()).To(BeEmpty(), "every request met its script turn's expect")

		By("leaving the key nowhere in the cassette")
		data, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data)).NotTo(ContainSubstring("SECRET123"))
		Expect(string(data)).NotTo(ContainSubstring(fakeKey))
		Expect(strings.ToLower(string(data))).NotTo(ContainSubstring("authorization"))
		Expect(strings.ToLower(string(data))).NotTo(ContainSubstring("bearer"))
		Expect(scrub.ScanCredentials(data)).To(BeEmpty())

		By("labelling it as recorded against the local mock server")
		p, err := cassette.LoadProvenance(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Source).To(Equal(cassette.SourceMockServer))
		Expect(p.RealModelOutput).To(BeFalse())
		Expect(p.APIHost).To(Equal("127.0.0.1"), "the mock's ephemeral port is not kept")
		Expect(p.Model).To(Equal(openaichat.DefaultModel))
		Expect(p.ToolVersion).To(HavePrefix("todoharness"))
		_, err = time.Parse(time.DateOnly, p.RecordedAt)
		Expect(err).NotTo(HaveOccurred())

		By("replaying it with the server gone")
		srv.Close()
		compareGoldens("replace", viewsOf(replay(ctx, sc, out), out))
	}, NodeTimeout(time.Minute))

	It("refuses to label a recording against a local server as real-model output", func() {
		_, err := record.Start(record.Options{
			Path: filepath.Join(GinkgoT().TempDir(), "c.yaml"),
			Provenance: cassette.Provenance{
				Source: cassette.SourceRealModel, BaseURL: "http://127.0.0.1:9/v1", Model: "deepseek-chat",
			},
		})
		Expect(err).To(MatchError(ContainSubstring("is a local server: a recording against it cannot be labelled real-model")))
	})
})

var _ = Describe("live recording against DeepSeek", Serial, Label("with-key"), func() {
	BeforeEach(func() {
		if os.Getenv("DEEPSEEK_API_KEY") == "" {
			Skip("DEEPSEEK_API_KEY is not set: the live DeepSeek recording specs are skipped and the committed cassettes were replayed offline instead (DEEPSEEK_API_KEY=… make record re-records them)")
		}
	})

	DescribeTable("records a scenario live, with the key scrubbed, and the recording replays offline",
		func(ctx SpecContext, name string, check func(events []session.Event)) {
			sc := loadScenario(name)
			cfg := openaichat.ConfigFromEnv("")
			out := filepath.Join(GinkgoT().TempDir(), "cassette.yaml")
			rec, err := scenario.RecordCassette(ctx, sc, scenario.RecordConfig{Client: cfg, Cassette: out})
			Expect(err).NotTo(HaveOccurred())
			data, err := os.ReadFile(out)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(data)).NotTo(ContainSubstring(cfg.APIKey))
			Expect(scrub.ScanCredentials(data)).To(BeEmpty())
			if !cassette.IsLoopback(cfg.BaseURL) {
				Expect(rec.Provenance.Source).To(Equal(cassette.SourceRealModel))
				Expect(rec.Provenance.RealModelOutput).To(BeTrue())
			}
			check(rec.Live.Log.Events)
		},
		Entry("todo-plan: the plan has the three requested tasks", "todo-plan", func(events []session.Event) {
			todos, ok := session.CurrentTodos(events)
			Expect(ok).To(BeTrue())
			Expect(todos).To(Equal([]session.TodoItem{
				{Content: "read the code", Status: "in_progress"},
				{Content: "write the fix", Status: "pending"},
				{Content: "run the tests", Status: "pending"},
			}))
		}, NodeTimeout(3*time.Minute)),
		Entry("replace: two writes, the first task ends completed", "replace", func(events []session.Event) {
			Expect(count(events, session.TypeTodoWrite)).To(BeNumerically(">=", 2))
			todos, _ := session.CurrentTodos(events)
			Expect(todos).To(ContainElement(session.TodoItem{Content: "write the parser", Status: "completed"}))
		}, NodeTimeout(3*time.Minute)),
		Entry("reject-recover: a rejected call, then an accepted one", "reject-recover", func(events []session.Event) {
			Expect(hasRejection(events)).To(BeTrue(), "the two-in_progress call was rejected")
			Expect(count(events, session.TypeTodoWrite)).To(BeNumerically(">=", 1))
		}, NodeTimeout(3*time.Minute)),
	)
})

func count(events []session.Event, typ string) int {
	n := 0
	for _, e := range events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func hasRejection(events []session.Event) bool {
	for _, e := range events {
		if e.Type != session.TypeToolResult {
			continue
		}
		var r session.ToolResult
		if e.Decode(&r) == nil && r.IsError && strings.Contains(llm.Message{Content: r.Content}.Text(), "at most one task may be in_progress") {
			return true
		}
	}
	return false
}

package e2e

import (
	"compress/gzip"
	"context"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	"github.com/todoharness/todoharness/mockmodel"
	"github.com/todoharness/todoharness/recording"
	"github.com/todoharness/todoharness/scenario"
	mutantagent "github.com/todoharness/todoharness/suites/conformance/mutant"
)

// The fake credentials of the recording specs. None may reach any saved
// file, in any encoding.
const (
	fakeAgentKey = "sk-proj-FAKEtest0123456789abcdefXYZ"
	fakeUser     = "apiuser"
	fakePassword = "SuperSecretPassw0rd"
)

// fakeSecrets are the values the specs look for in every saved file.
func fakeSecrets() []string {
	return []string{fakeAgentKey, fakePassword, fakeUser + ":" + fakePassword}
}

// assertNoSecretIn fails when any file under dir holds a fake secret in any
// encoding or a gzip body (the spec's own grep, grepSecrets), a fake secret
// as the cassette scan finds it given the values, or anything
// credential-shaped (the scan, not given them).
func assertNoSecretIn(dir string, files int) {
	GinkgoHelper()
	n := 0
	Expect(filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		data, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(grepSecrets(path, data)).To(BeEmpty())
		Expect(scrub.ScanSecrets(data, fakeSecrets())).To(BeEmpty(), "%s", path)
		Expect(scrub.ScanCredentials(data)).To(BeEmpty(), "%s", path)
		return nil
	})).To(Succeed())
	Expect(n).To(BeNumerically(">=", files), "the scenario folder holds the saved files")
}

// echoUpstream is the mock model behind a layer that behaves like a
// careless provider: it notes the credentials it receives, echoes them
// back in response headers (Location with ?key=, Set-Cookie, a base64
// debug header, a URL with user:password), and gzips every answer when the
// client accepts it.
type echoUpstream struct {
	*httptest.Server
	mock *mockmodel.Server
	mu   sync.Mutex
	seen []string
	// gzipped counts the answers sent gzipped.
	gzipped int
}

func newEchoUpstream(script *mockmodel.Script) *echoUpstream {
	u := &echoUpstream{mock: mockmodel.NewUnstartedServer(script)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		for _, k := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Cookie"} {
			if v := r.Header.Get(k); v != "" {
				u.seen = append(u.seen, k+": "+v)
			}
		}
		if k := r.URL.Query().Get("key"); k != "" {
			u.seen = append(u.seen, "?key="+k)
		}
		u.mu.Unlock()
		key := fakeAgentKey
		if _, pw, ok := r.BasicAuth(); ok {
			key = pw
		}
		h := w.Header()
		h.Set("Location", "https://upstream.invalid/next?key="+url.QueryEscape(key))
		h.Set("Set-Cookie", "session="+key+"; Path=/")
		h.Set("X-Debug-Echo", base64.StdEncoding.EncodeToString([]byte("apiuser:"+key)))
		h.Set("X-Debug-Hex", hex.EncodeToString([]byte(key)))
		h.Set("X-Debug-Hex-Upper", strings.ToUpper(hex.EncodeToString([]byte(key))))
		h.Set("X-Debug-Base32", base32.StdEncoding.EncodeToString([]byte(key)))
		h.Set("Link", "<https://"+fakeUser+":"+fakePassword+"@upstream.invalid/docs>; rel=help")
		h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
		h.Set("X-Request-Id", fmt.Sprint(time.Now().UnixNano()))
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			u.mock.ServeHTTP(w, r)
			return
		}
		h.Set("Content-Encoding", "gzip")
		u.mu.Lock()
		u.gzipped++
		u.mu.Unlock()
		gz := gzip.NewWriter(w)
		u.mock.ServeHTTP(&gzipWriter{ResponseWriter: w, gz: gz}, r)
		Expect(gz.Close()).To(Succeed())
	}))
	return u
}

// credentialsSeen are the credential headers and query keys that reached the
// upstream.
func (u *echoUpstream) credentialsSeen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

// gzippedAnswers is the number of answers sent gzipped.
func (u *echoUpstream) gzippedAnswers() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.gzipped
}

// withUserinfo is the upstream's URL carrying the fake user:password.
func (u *echoUpstream) withUserinfo() string {
	return strings.Replace(u.URL, "http://", "http://"+fakeUser+":"+fakePassword+"@", 1)
}

func (u *echoUpstream) close() {
	u.Server.Close()
	u.mock.Close()
}

type gzipWriter struct {
	http.ResponseWriter
	gz *gzip.Writer
}

func (g *gzipWriter) WriteHeader(code int) {
	g.ResponseWriter.Header().Del("Content-Length")
	g.ResponseWriter.WriteHeader(code)
}

func (g *gzipWriter) Write(b []byte) (int, error) { return g.gz.Write(b) }

func (g *gzipWriter) Flush() {
	_ = g.gz.Flush()
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// echoScript answers a prompt with text that repeats the key (split across
// stream deltas, base64- and URL-encoded, and in every other form of
// scrub.KeyForms: base64 and base32 at every alignment, hex in both
// cases, JSON-escaped, URL-encoded twice), then a todo_write whose
// arguments hold it JSON-escaped (\u0073k-…, streamed in 7-byte pieces),
// then DONE.
func echoScript() *mockmodel.Script {
	k := fakeAgentKey
	var forms []string
	for _, f := range scrub.KeyForms(k) {
		forms = append(forms, f.Text)
	}
	text := "Your key is " + k + " (b64 " + base64.StdEncoding.EncodeToString([]byte(k)) + ", url " + url.QueryEscape(k) + "; also " + strings.Join(forms, " ") + ")."
	cut := strings.Index(text, k) + 9
	escaped := `\u0073` + k[1:]
	return &mockmodel.Script{Turns: []mockmodel.Turn{
		{
			Text: text, TextDeltas: []string{text[:cut], text[cut:]},
			ToolCalls: []mockmodel.ToolCall{{Name: "todo_write",
				RawArguments: `{"todos":[{"content":"rotate ` + escaped + `","status":"in_progress"},{"content":"tell the team","status":"pending"}]}`}},
			ChunkSize: 7,
		},
		{Expect: &mockmodel.Expect{LastMessage: "tool"}, Text: "DONE"},
	}}
}

// newScenario writes a scenario folder with one prompt.
func newScenario(name string) string {
	GinkgoHelper()
	dir := filepath.Join(GinkgoT().TempDir(), name)
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	in := `{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"Plan the key rotation with todo_write."}]}`
	Expect(os.WriteFile(filepath.Join(dir, scenario.InputFile), []byte(in), 0o644)).To(Succeed())
	return dir
}

// mutantOver is the mutant agent (no mutation: the reference tool behind
// small non-streaming clients of its own) speaking wire, sending the fake
// key in that wire's carriers.
func mutantOver(wire string) driver.Target {
	flag := map[string]string{"openai-chat": "openai", "openai-responses": "responses", "anthropic": "anthropic", "gemini": "gemini"}[wire]
	return driver.Target{
		Name:    "mutant over " + wire,
		Command: []string{selfexec.Path(), "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions", "--wire", flag},
		Env:     append(selfexec.Environ("mutant"), mutantagent.Env+"=none", mutantagent.KeyEnv+"="+fakeAgentKey),
		Home:    true,
	}
}

// referenceAgent is the todoharness reference agent as a subprocess, its
// key the fake one.
func referenceAgent() driver.Target {
	return driver.Target{
		Name:    "reference agent",
		Command: []string{selfexec.Path(), "agent", "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions", "--model", "{{.Model}}"},
		Env:     append(selfexec.Environ("todoharness"), "DEEPSEEK_API_KEY="+fakeAgentKey),
		Home:    true,
	}
}

// readAll returns every file of dir by name.
func readAll(dir string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		Expect(err).NotTo(HaveOccurred())
		out[e.Name()] = string(b)
	}
	return out
}

var _ = Describe("recording and replaying any agent through the proxy", Serial, func() {
	DescribeTable("records against the mock upstream with fake credentials in every carrier, saves nothing secret, replays offline to the same goldens, and re-records without churn",
		func(ctx SpecContext, target driver.Target, wire string, carriers []string) {
			dir := newScenario("rotate-" + wire)
			record := func() *recording.Outcome {
				GinkgoHelper()
				up := newEchoUpstream(echoScript())
				defer up.close()
				res, err := recording.Record(ctx, dir, recording.Options{
					Agent: target, Wire: wire, Upstream: up.withUserinfo(), Model: "mock", Timeout: time.Minute,
				})
				Expect(err).NotTo(HaveOccurred())
				Expect(up.mock.Journal().Errors()).To(BeEmpty(), "every request met its turn")
				Expect(up.gzippedAnswers()).To(BeNumerically(">", 0), "the upstream gzipped its answers (the saved files must hold them decoded)")
				By("sending the credentials untouched upstream")
				for _, c := range carriers {
					Expect(up.credentialsSeen()).To(ContainElement(ContainSubstring(c)))
				}
				return res
			}
			res := record()
			Expect(res.Exchanges).To(Equal(2))
			p := res.Provenance
			Expect(p.Wire).To(Equal(wire))
			Expect(p.Source).To(Equal(cassette.SourceMockServer))
			Expect(p.RealModelOutput).To(BeFalse())
			Expect(p.BaseURL).To(Equal("http://127.0.0.1"), "no user:password, no ephemeral port")
			Expect(p.Model).To(Equal("mock"))
			Expect(p.Agent).To(ContainSubstring("{{.BaseURL}}"), "the agent's command line as templated, no port")
			Expect(p.AgentVersion).NotTo(BeEmpty())
			files := readAll(dir)
			Expect(files).To(HaveKey(scenario.CassetteFile))
			Expect(files[recording.PlanGolden]).To(ContainSubstring(`"sessionUpdate":"plan"`))
			Expect(files[recording.PlanGolden]).To(ContainSubstring(`rotate `+scrub.Redacted), "the key in the plan is redacted, the rest kept")
			Expect(files[recording.ToolsGolden]).To(ContainSubstring(`"name": "todo_write"`))
			Expect(files[recording.SystemGolden]).NotTo(BeEmpty())
			Expect(files[scenario.CassetteFile]).NotTo(ContainSubstring("Date:"))
			Expect(files[scenario.CassetteFile]).To(ContainSubstring("Location:"), "the echoed headers are kept, scrubbed")

			By("leaving no credential, in any encoding, in any saved file")
			assertNoSecretIn(dir, 6)

			By("replaying with the upstream gone")
			rep, err := recording.Replay(ctx, dir, recording.Options{Agent: target, Timeout: time.Minute})
			Expect(err).NotTo(HaveOccurred())
			Expect(string(rep.Plan)).To(Equal(files[recording.PlanGolden]))

			By("re-recording the unchanged scenario: byte-identical files")
			record()
			again := readAll(dir)
			for name, data := range files {
				Expect(again[name]).To(Equal(data), "%s changed on an unchanged re-recording", name)
			}
			Expect(again).To(HaveLen(len(files)))
		},
		Entry("mutant agent over openai-chat (Bearer)", mutantOver("openai-chat"), "openai-chat", []string{"Authorization: Bearer " + fakeAgentKey}, NodeTimeout(3*time.Minute)),
		Entry("mutant agent over openai-responses (Bearer)", mutantOver("openai-responses"), "openai-responses", []string{"Authorization: Bearer " + fakeAgentKey, "Cookie: session="}, NodeTimeout(3*time.Minute)),
		Entry("mutant agent over anthropic (x-api-key, cookie, basic from the URL)", mutantOver("anthropic"), "anthropic", []string{"X-Api-Key: " + fakeAgentKey, "Cookie: session=", "Authorization: Basic "}, NodeTimeout(3*time.Minute)),
		Entry("mutant agent over gemini (x-goog-api-key, ?key=, cookie, basic from the URL)", mutantOver("gemini"), "gemini", []string{"X-Goog-Api-Key: " + fakeAgentKey, "?key=" + fakeAgentKey, "Authorization: Basic "}, NodeTimeout(3*time.Minute)),
		Entry("reference agent as a subprocess over openai-chat, streaming", referenceAgent(), "openai-chat", []string{"Authorization: Bearer " + fakeAgentKey}, NodeTimeout(3*time.Minute)),
	)

	It("records and replays the reference agent over ACP v2: the turn read to its idle state_update, the plan golden its plan_updates", func(ctx SpecContext) {
		dir := newScenario("rotate-v2")
		v2 := driver.Offer{ACPVersion: driver.ACPv2}
		up := newEchoUpstream(echoScript())
		DeferCleanup(up.close)
		res, err := recording.Record(ctx, dir, recording.Options{
			Agent: referenceAgent(), Wire: "openai-chat", Upstream: up.withUserinfo(), Model: "mock", Timeout: time.Minute, Offer: v2,
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Exchanges).To(Equal(2), "the turn ran to its end: both model requests were made")
		Expect(res.Provenance.AgentVersion).To(HavePrefix("todoharness "), "named from v2's initialize info")
		files := readAll(dir)
		Expect(files[recording.StdoutGolden]).To(ContainSubstring(`"protocolVersion":2`))
		Expect(files[recording.StdoutGolden]).To(ContainSubstring(`"state":"idle","stopReason":"end_turn"`), "the run waited for the turn's idle")
		Expect(files[recording.PlanGolden]).To(ContainSubstring(`"sessionUpdate":"plan_update"`))
		Expect(files[recording.PlanGolden]).To(ContainSubstring(`"planId":"todo"`))
		Expect(files[recording.PlanGolden]).NotTo(ContainSubstring(`"sessionUpdate":"plan"`))
		assertNoSecretIn(dir, 6)
		up.close()

		rep, err := recording.Replay(ctx, dir, recording.Options{Agent: referenceAgent(), Timeout: time.Minute, Offer: v2})
		Expect(err).NotTo(HaveOccurred())
		Expect(string(rep.Plan)).To(Equal(files[recording.PlanGolden]))
		Expect(string(rep.Stdout)).To(Equal(files[recording.StdoutGolden]))
	}, NodeTimeout(3*time.Minute))

	It("records the reference agent in-process against the mock upstream; the replay gives the same session-log events", func(ctx SpecContext) {
		dir := newScenario("rotate-reference")
		sc, err := scenario.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		up := newEchoUpstream(echoScript())
		DeferCleanup(up.close)
		cfg := openaichat.ClientConfig{BaseURL: up.withUserinfo() + "/v1", APIKey: fakeAgentKey, Model: "deepseek-chat"}
		rec, err := scenario.RecordCassette(ctx, sc, scenario.RecordConfig{Client: cfg, Cassette: sc.CassettePath()})
		Expect(err).NotTo(HaveOccurred(), "RecordCassette compares the live and replayed plan and session-log goldens")
		Expect(rec.Provenance.BaseURL).To(Equal("http://127.0.0.1/v1"))
		up.close()
		rep := replay(ctx, sc, sc.CassettePath())
		g := goldensOf(rep.Result)
		Expect(string(g.ACP)).To(Equal(string(rec.Goldens.ACP)))
		Expect(string(g.Log)).To(Equal(string(rec.Goldens.Log)))
		Expect(string(g.Log)).To(ContainSubstring("rotate "+scrub.Redacted), "the session log's todo/write, replayed, holds the redacted key")
		Expect(os.WriteFile(filepath.Join(dir, "acp.golden"), rec.Goldens.ACP, 0o644)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "log.golden"), rec.Goldens.Log, 0o644)).To(Succeed())
		assertNoSecretIn(dir, 4)
	}, NodeTimeout(2*time.Minute))

	It("refuses a recording whose replay differs without printing the key, even \\u-escaped in a todo item", func(ctx SpecContext) {
		dir := newScenario("rotate-escaped")
		sc, err := scenario.Load(dir)
		Expect(err).NotTo(HaveOccurred())
		// The todo item's text holds the key with its first character
		// written as the six characters \u0073: the arguments hold it
		// escaped twice.
		escaped := `\\u0073` + fakeAgentKey[1:]
		script := &mockmodel.Script{Turns: []mockmodel.Turn{
			{ToolCalls: []mockmodel.ToolCall{{Name: "todo_write",
				RawArguments: `{"todos":[{"content":"rotate ` + escaped + `","status":"in_progress"}]}`}}, ChunkSize: 7},
			{Expect: &mockmodel.Expect{LastMessage: "tool"}, Text: "DONE"},
		}}
		up := newEchoUpstream(script)
		DeferCleanup(up.close)
		cfg := openaichat.ClientConfig{BaseURL: up.URL + "/v1", APIKey: fakeAgentKey, Model: "deepseek-chat"}
		_, err = scenario.RecordCassette(ctx, sc, scenario.RecordConfig{Client: cfg, Cassette: sc.CassettePath()})
		if err != nil {
			for _, view := range decodedViews(err.Error()) {
				for _, again := range decodedViews(view) {
					Expect(again).NotTo(ContainSubstring(fakeAgentKey[1:]), "the error prints the key:\n%v", err)
				}
			}
			Expect(scrub.ScanSecrets([]byte(err.Error()), fakeSecrets())).To(BeEmpty(), "the error prints the key:\n%v", err)
		}
		assertNoSecretIn(dir, 1)
	}, NodeTimeout(2*time.Minute))

	It("says a recording interrupted while the agent waits on the model was interrupted, and leaves the scenario as it was", func(ctx SpecContext) {
		dir := newScenario("rotate-interrupted")
		run, cancel := context.WithCancel(ctx)
		defer cancel()
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cancel() // the signal arrives while the model is thinking
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		}))
		defer up.Close()
		_, err := recording.Record(run, dir, recording.Options{Agent: mutantOver("openai-chat"), Wire: "openai-chat", Upstream: up.URL, Model: "mock", Timeout: time.Minute})
		Expect(err).To(MatchError(ContainSubstring("record rotate-interrupted: interrupted (context canceled)")))
		Expect(err).NotTo(MatchError(ContainSubstring("corrupt")))
		Expect(filepath.Join(dir, scenario.CassetteFile)).NotTo(BeAnExistingFile())
	}, NodeTimeout(2*time.Minute))

	It("fails a replay whose request the cassette does not hold, with the nearest recording and a diff", func(ctx SpecContext) {
		dir := newScenario("rotate-miss")
		up := newEchoUpstream(echoScript())
		_, err := recording.Record(ctx, dir, recording.Options{Agent: mutantOver("anthropic"), Wire: "anthropic", Upstream: up.URL, Model: "mock", Timeout: time.Minute})
		up.close()
		Expect(err).NotTo(HaveOccurred())
		in := strings.Replace(`{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"Plan the key rotation with todo_write."}]}`, "key rotation", "key ROTATION", 1)
		Expect(os.WriteFile(filepath.Join(dir, scenario.InputFile), []byte(in), 0o644)).To(Succeed())
		_, err = recording.Replay(ctx, dir, recording.Options{Agent: mutantOver("anthropic"), Timeout: time.Minute})
		Expect(err).To(MatchError(ContainSubstring("no recorded interaction matches request 1 (POST /v1/messages)")))
		Expect(err).To(MatchError(MatchRegexp(`(?m)^-.*key rotation`)))
		Expect(err).To(MatchError(MatchRegexp(`(?m)^\+.*key ROTATION`)))
	}, NodeTimeout(2*time.Minute))
})

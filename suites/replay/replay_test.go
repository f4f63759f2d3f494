package replay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/acp/acptest"
	"github.com/todoharness/todoharness/harness/acp/transcript"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/testutil"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var threeTodos = []planEntry{
	{Content: "read the code", Priority: "medium", Status: "in_progress"},
	{Content: "write the fix", Priority: "medium", Status: "pending"},
	{Content: "run the tests", Priority: "medium", Status: "pending"},
}

var _ = Describe("session/load after a prompt, in process", func() {
	It("restores the plan with a fresh bridge over the same store, before answering", func() {
		ctx := specCtx()
		dir := GinkgoT().TempDir()

		first := serveBridge(ctx, dir, "todo-plan.yaml", "")
		id, err := first.NewSessionIn(ctx, projectCwd)
		Expect(err).NotTo(HaveOccurred())
		Expect(first.PromptText(ctx, id, "Plan three todos, then say DONE.")).To(Equal(sdk.StopReasonEndTurn))
		Expect(wirePlans(first.Wire.Lines())).To(Equal([][]planEntry{threeTodos}), "the live prompt streams the plan")
		closeBridge(first)

		second := serveBridge(ctx, dir, "", "")
		Expect(second.Load(ctx, id, projectCwd)).To(Succeed())

		By("the SDK client returns from load only after handling what came before the response")
		plans := second.Client.Plans()
		Expect(plans).NotTo(BeEmpty(), "no plan was replayed before the load response")
		Expect(sdkEntries(plans[len(plans)-1])).To(Equal(threeTodos))

		By("on the raw wire, the plan line precedes the load response line")
		lines := second.Wire.Lines()
		resp := lastIndexOf(lines, `"result":{}`)
		Expect(resp).To(Equal(len(lines)-1), "the load response is the last line")
		Expect(indexOf(lines, `"sessionUpdate":"plan"`)).To(BeNumerically(">=", 0))
		Expect(indexOf(lines, `"sessionUpdate":"plan"`)).To(BeNumerically("<", resp))

		By("the replay shows the user's prompt and the tool call around the plan")
		kinds := acptest.UpdateKinds(lines)
		Expect(kinds[0]).To(Equal("user_message_chunk"))
		Expect(strings.Join(kinds, " ")).To(ContainSubstring("tool_call plan tool_call_update"))

		assertTranscript("load-after-prompt", []string{projectCwd}, first.Wire.Lines(), lines)
	})

	It("replays the same updates the live prompt streamed, plus the user's message", func() {
		ctx := specCtx()
		dir := GinkgoT().TempDir()
		first := serveBridge(ctx, dir, "todo-plan.yaml", "")
		id, err := first.NewSessionIn(ctx, projectCwd)
		Expect(err).NotTo(HaveOccurred())
		_, err = first.PromptText(ctx, id, "go")
		Expect(err).NotTo(HaveOccurred())
		closeBridge(first)

		second := serveBridge(ctx, dir, "", "")
		Expect(second.Load(ctx, id, projectCwd)).To(Succeed())
		live := wireUpdates(first.Wire.Lines())
		replayed := wireUpdates(second.Wire.Lines())
		Expect(replayed[0].Kind).To(Equal("user_message_chunk"))
		Expect(replayed[0].Raw).To(MatchJSON(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"go"}}`))
		Expect(replayed[1:]).To(HaveLen(len(live)))
		for i := range live {
			Expect(replayed[i+1].Raw).To(MatchJSON(live[i].Raw), "update %d", i)
		}
	})
})

var _ = Describe("several writes", func() {
	It("replays every accepted write in order, and the last plan equals the last write, within and across turns", func() {
		ctx := specCtx()
		dir := GinkgoT().TempDir()
		first := serveBridge(ctx, dir, "multi-write.yaml", "")
		id, err := first.NewSessionIn(ctx, projectCwd)
		Expect(err).NotTo(HaveOccurred())
		Expect(first.PromptText(ctx, id, "turn one")).To(Equal(sdk.StopReasonEndTurn))
		Expect(first.PromptText(ctx, id, "turn two")).To(Equal(sdk.StopReasonEndTurn))
		live := wirePlans(first.Wire.Lines())
		Expect(live).To(HaveLen(3), "three accepted writes (the rejected one sends no plan)")
		closeBridge(first)

		ld, err := session.LoadFile(filepath.Join(dir, id+".jsonl"))
		Expect(err).NotTo(HaveOccurred())
		lastWrite, ok := session.CurrentTodos(ld.Events)
		Expect(ok).To(BeTrue())

		second := serveBridge(ctx, dir, "", "")
		Expect(second.Load(ctx, id, projectCwd)).To(Succeed())
		replayed := wirePlans(second.Wire.Lines())
		Expect(replayed).To(Equal(live), "the replay shows the same plans, in order")
		Expect(replayed[len(replayed)-1]).To(Equal(entriesOf(lastWrite)), "the last plan is the last write")
		Expect(replayed[len(replayed)-1]).To(Equal([]planEntry{
			{Content: "read the code", Priority: "medium", Status: "completed"},
			{Content: "write the fix", Priority: "medium", Status: "completed"},
			{Content: "run the tests", Priority: "medium", Status: "in_progress"},
		}))
		plans := second.Client.Plans()
		Expect(sdkEntries(plans[len(plans)-1])).To(Equal(entriesOf(lastWrite)), "received before the load response")

		By("the rejected write shows a failed tool call and no plan")
		kinds := strings.Join(acptest.UpdateKinds(second.Wire.Lines()), " ")
		Expect(strings.Count(kinds, "user_message_chunk")).To(Equal(2), "one user message per turn")
		Expect(strings.Count(kinds, "tool_call plan tool_call_update")).To(Equal(3))
		Expect(strings.Count(kinds, "tool_call tool_call_update")).To(Equal(1))
		failed := 0
		for _, u := range wireUpdates(second.Wire.Lines()) {
			if u.Kind == "tool_call_update" && strings.Contains(string(u.Raw), `"status":"failed"`) {
				failed++
				Expect(string(u.Raw)).To(ContainSubstring("at most one task may be in_progress, got 2"))
			}
		}
		Expect(failed).To(Equal(1))

		assertTranscript("multi-write", []string{projectCwd}, first.Wire.Lines(), second.Wire.Lines())
	})

	It("continues a loaded session: a new prompt after load appends, and the next load shows both turns", func() {
		ctx := specCtx()
		dir := GinkgoT().TempDir()
		first := serveBridge(ctx, dir, "multi-write.yaml", "")
		id, err := first.NewSessionIn(ctx, projectCwd)
		Expect(err).NotTo(HaveOccurred())
		Expect(first.PromptText(ctx, id, "turn one")).To(Equal(sdk.StopReasonEndTurn))
		closeBridge(first)

		// The second bridge's script answers the second prompt.
		second := serveBridge(ctx, dir, "turn-two.yaml", "")
		Expect(second.Load(ctx, id, projectCwd)).To(Succeed())
		Expect(second.PromptText(ctx, id, "turn two")).To(Equal(sdk.StopReasonEndTurn))
		closeBridge(second)

		third := serveBridge(ctx, dir, "", "")
		Expect(third.Load(ctx, id, projectCwd)).To(Succeed())
		plans := wirePlans(third.Wire.Lines())
		Expect(plans).To(HaveLen(3))
		Expect(plans[2]).To(Equal([]planEntry{{Content: "ship it", Priority: "medium", Status: "in_progress"}}))
		Expect(strings.Count(strings.Join(acptest.UpdateKinds(third.Wire.Lines()), " "), "user_message_chunk")).To(Equal(2))
	})
})

var _ = Describe("a cleared list", func() {
	It("replays the empty plan last, as entries: [] and never null", func() {
		ctx := specCtx()
		dir := GinkgoT().TempDir()
		first := serveBridge(ctx, dir, "clear-list.yaml", "")
		id, err := first.NewSessionIn(ctx, projectCwd)
		Expect(err).NotTo(HaveOccurred())
		Expect(first.PromptText(ctx, id, "set, then clear")).To(Equal(sdk.StopReasonEndTurn))
		closeBridge(first)

		second := serveBridge(ctx, dir, "", "")
		Expect(second.Load(ctx, id, projectCwd)).To(Succeed())
		lines := second.Wire.Lines()
		last := lastIndexOf(lines, `"sessionUpdate":"plan"`)
		Expect(last).To(BeNumerically(">=", 0))
		Expect(last).To(BeNumerically("<", len(lines)-1), "before the load response")
		Expect(string(lines[last])).To(ContainSubstring(`"entries":[]`))
		Expect(wirePlans(lines)).To(Equal([][]planEntry{
			{{Content: "read the code", Priority: "medium", Status: "in_progress"}},
			{},
		}))
	})
})

var _ = Describe("load errors", func() {
	It("answers an unknown session id with a not-found error and keeps serving", func() {
		ctx := specCtx()
		srv := serveBridge(ctx, GinkgoT().TempDir(), "", "")
		err := srv.Load(ctx, "does-not-exist", projectCwd)
		Expect(err).To(HaveOccurred())
		var re *sdk.RequestError
		Expect(err).To(BeAssignableToTypeOf(re))
		re = err.(*sdk.RequestError)
		Expect(re.Code).To(Equal(-32002))
		Expect(re.Message).To(ContainSubstring("session not found: does-not-exist"))
		_, err = srv.NewSessionIn(ctx, projectCwd)
		Expect(err).NotTo(HaveOccurred())
	})

	It("answers a log that breaks an invariant with an error naming the line and the reason", func() {
		ctx := specCtx()
		dir := GinkgoT().TempDir()
		log := `{"type":"session","version":0,"id":"bad","createdAt":0}
{"type":"turn/start","seq":0,"time":0,"data":{"turn":1,"trigger":{"kind":"message"}}}
{"type":"tool/result","seq":1,"time":0,"data":{"turn":1,"step":1,"callId":"nope","content":[],"isError":false},"surfaceOp":"append"}
`
		Expect(os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte(log), 0o644)).To(Succeed())
		srv := serveBridge(ctx, dir, "", "")
		err := srv.Load(ctx, "bad", projectCwd)
		Expect(err).To(HaveOccurred())
		re := err.(*sdk.RequestError)
		Expect(re.Message).To(ContainSubstring("line 3"))
		Expect(re.Message).To(ContainSubstring("tool/result"))
		Expect(srv.Client.Updates()).To(BeEmpty(), "nothing is replayed from a broken log")
	})
})

var _ = Describe("interop: the log recorded by the original harness", func() {
	var (
		interopDir string
		golden     [][]byte
		sessionID  string
	)
	BeforeEach(func() {
		var err error
		interopDir, err = testutil.InteropFile("todo-plan")
		Expect(err).NotTo(HaveOccurred())
		f, err := os.Open(filepath.Join(interopDir, "stdout.golden.jsonl"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(f.Close)
		golden, err = transcript.ReadLines(f)
		Expect(err).NotTo(HaveOccurred())
		ld, err := session.LoadFile(filepath.Join(interopDir, "session.jsonl"))
		Expect(err).NotTo(HaveOccurred())
		sessionID = ld.Header.ID
	})

	loadInterop := func() *acptest.Served {
		ctx := specCtx()
		dir := GinkgoT().TempDir()
		raw, err := os.ReadFile(filepath.Join(interopDir, "session.jsonl"))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, sessionID+".jsonl"), raw, 0o644)).To(Succeed())
		srv := serveBridge(ctx, dir, "", "")
		Expect(srv.Load(ctx, sessionID, "/tmp/acp-snap-cwd-4xZzZ9")).To(Succeed())
		return srv
	}

	It("loads and replays the same plan entries the original streamed live", func() {
		want := wirePlans(golden)
		Expect(want).To(HaveLen(1), "the interop golden has one plan")
		srv := loadInterop()
		Expect(wirePlans(srv.Wire.Lines())).To(Equal(want))
		plans := srv.Client.Plans()
		Expect(plans).To(HaveLen(1))
		Expect(sdkEntries(plans[0])).To(Equal(want[0]), "before the load response")
	})

	It("replays every update of the original's live stream, after the user's message", func() {
		srv := loadInterop()
		want := wireUpdates(golden)
		got := wireUpdates(srv.Wire.Lines())
		Expect(got[0].Kind).To(Equal("user_message_chunk"))
		Expect(got[1:]).To(HaveLen(len(want)))
		for i := range want {
			Expect(got[i+1].Raw).To(MatchJSON(want[i].Raw), "update %d (%s)", i, want[i].Kind)
		}
		assertTranscript("interop-load", nil, srv.Wire.Lines())
	})
})

var _ = Describe("malformed JSON-RPC input, in process", func() {
	It("gets a JSON-RPC error and the agent keeps serving", func() {
		ctx := specCtx()
		srv := serveBridge(ctx, GinkgoT().TempDir(), "todo-plan.yaml", "")
		Expect(srv.WriteRaw(`{"jsonrpc":"2.0","id":5,"method":"session/new",`)).To(Succeed())
		Expect(srv.WriteRaw(`"just a string"`)).To(Succeed())
		// The agent reads its input in order: by the answer to the next
		// request, the two errors were sent.
		id, err := srv.NewSessionIn(ctx, projectCwd)
		Expect(err).NotTo(HaveOccurred())
		lines := srv.Wire.Lines()
		Expect(lines[1]).To(MatchJSON(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"error":"invalid JSON"}}}`))
		Expect(lines[2]).To(MatchJSON(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":{"error":"a JSON-RPC message must be a JSON object"}}}`))

		Expect(srv.PromptText(ctx, id, "go")).To(Equal(sdk.StopReasonEndTurn))
		Expect(wirePlans(srv.Wire.Lines())).To(Equal([][]planEntry{threeTodos}))
		assertTranscript("malformed-input", []string{projectCwd}, srv.Wire.Lines())
	})
})

var _ = Describe("across processes: todoharness agent over stdio", func() {
	var sessions, cwd string
	BeforeEach(func() {
		sessions = GinkgoT().TempDir()
		cwd = GinkgoT().TempDir()
	})

	// promptInProcess runs one prompt in a fresh agent process and returns
	// the process (still running) and the session id.
	promptInProcess := func() (*agentProc, string) {
		ctx := specCtx()
		p := startAgent(cwd, nil, "--script", fixture("todo-plan.yaml"), "--sessions", sessions)
		_, err := p.Init(ctx)
		Expect(err).NotTo(HaveOccurred())
		id, err := p.NewSessionIn(ctx, cwd)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.PromptText(ctx, id, "Plan three todos, then say DONE.")).To(Equal(sdk.StopReasonEndTurn))
		Expect(wirePlans(p.Wire.Lines())).To(Equal([][]planEntry{threeTodos}))
		return p, id
	}

	loadInProcess := func(id string, env ...string) *agentProc {
		ctx := specCtx()
		p := startAgent(cwd, env, "--script", fixture("todo-plan.yaml"))
		_, err := p.Init(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Load(ctx, id, cwd)).To(Succeed())
		return p
	}

	It("restores the plan after the first agent exits on stdin EOF", func() {
		first, id := promptInProcess()
		Expect(first.stop(5*time.Second)).To(Equal(0), "exit status 0 on stdin EOF")
		Expect(first.stderr.String()).To(ContainSubstring("todoharness agent stopped"), "logs go to stderr")

		second := loadInProcess(id, "TODOHARNESS_SESSIONS="+sessions)
		lines := second.Wire.Lines()
		plan := indexOf(lines, `"sessionUpdate":"plan"`)
		Expect(plan).To(BeNumerically(">=", 0), "no plan replayed")
		Expect(plan).To(BeNumerically("<", len(lines)-1), "the plan precedes the load response")
		Expect(lines[len(lines)-1]).To(MatchJSON(`{"jsonrpc":"2.0","id":2,"result":{}}`))
		Expect(wirePlans(lines)).To(Equal([][]planEntry{threeTodos}))
		Expect(second.stop(5 * time.Second)).To(Equal(0))

		assertTranscript("across-processes", []string{cwd}, first.Wire.Lines(), lines)
	})

	It("restores the plan after the first agent is killed (SIGKILL) once the turn ended", func() {
		first, id := promptInProcess()
		first.kill()
		second := loadInProcess(id, "TODOHARNESS_SESSIONS="+sessions)
		Expect(wirePlans(second.Wire.Lines())).To(Equal([][]planEntry{threeTodos}))
		plans := second.Client.Plans()
		Expect(plans).To(HaveLen(1))
		Expect(sdkEntries(plans[0])).To(Equal(threeTodos))
	})

	It("writes only JSON-RPC on stdout and answers malformed input without stopping", func() {
		ctx := specCtx()
		p := startAgent(cwd, nil, "--script", fixture("todo-plan.yaml"), "--sessions", sessions, "--log-level", "debug")
		Expect(p.WriteRaw(`not json at all`)).To(Succeed())
		Expect(p.WriteRaw(`{"jsonrpc":"2.0","id":"x","method":""}`)).To(Succeed())
		_, err := p.Init(ctx)
		Expect(err).NotTo(HaveOccurred())
		id, err := p.NewSessionIn(ctx, cwd)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.PromptText(ctx, id, "go")).To(Equal(sdk.StopReasonEndTurn))
		Expect(p.stop(5 * time.Second)).To(Equal(0))

		lines := p.Wire.Lines()
		codes := map[int]int{}
		for _, l := range lines {
			var m map[string]json.RawMessage
			Expect(json.Unmarshal(l, &m)).To(Succeed(), "stdout line is not JSON: %s", l)
			Expect(string(m["jsonrpc"])).To(Equal(`"2.0"`))
			var e struct {
				Error *struct{ Code int } `json:"error"`
			}
			Expect(json.Unmarshal(l, &e)).To(Succeed())
			if e.Error != nil {
				codes[e.Error.Code]++
			}
		}
		Expect(codes).To(Equal(map[int]int{-32700: 1, -32600: 1}))
		Expect(p.stderr.String()).To(ContainSubstring("malformed JSON-RPC input"))
	})
})

var _ = Describe("todoharness agent startup", func() {
	run := func(env []string, args ...string) (int, string) {
		p := startAgent(GinkgoT().TempDir(), env, args...)
		select {
		case <-p.done:
		case <-time.After(time.Minute):
			Fail("agent did not exit")
		}
		return exitCode(p.err), p.stderr.String()
	}

	It("refuses to start without a model and says which of the three to give", func() {
		code, stderr := run(nil, "--sessions", GinkgoT().TempDir())
		Expect(code).NotTo(Equal(0))
		Expect(stderr).To(ContainSubstring("--script"))
		Expect(stderr).To(ContainSubstring("--model-url"))
		Expect(stderr).To(ContainSubstring("DEEPSEEK_API_KEY"))
	})

	It("refuses an unknown fault name", func() {
		code, stderr := run([]string{"TODOHARNESS_FAULT=no-plan,made-up"}, "--script", fixture("todo-plan.yaml"), "--sessions", GinkgoT().TempDir())
		Expect(code).NotTo(Equal(0))
		Expect(stderr).To(ContainSubstring(`unknown fault "made-up"`))
	})

	It("exits with status 3 under crash-on-prompt", func() {
		ctx := specCtx()
		p := startAgent(GinkgoT().TempDir(), []string{"TODOHARNESS_FAULT=crash-on-prompt"}, "--script", fixture("todo-plan.yaml"), "--sessions", GinkgoT().TempDir())
		_, err := p.Init(ctx)
		Expect(err).NotTo(HaveOccurred())
		id, err := p.NewSessionIn(ctx, "/tmp")
		Expect(err).NotTo(HaveOccurred())
		_, err = p.PromptText(ctx, id, "go")
		Expect(err).To(HaveOccurred())
		Eventually(p.done).Should(BeClosed())
		Expect(exitCode(p.err)).To(Equal(3))
	})
})

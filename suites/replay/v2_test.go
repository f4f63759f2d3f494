package replay

import (
	"context"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/acp/acptest"
	"github.com/todoharness/todoharness/internal/testutil"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// serveV2 serves a fresh bridge (newBridge) to a raw client that offers
// protocol version 2 and checks every line the agent sends against ACP's
// v2 schema. The bridge is closed at the end of the spec unless the spec
// closed it first.
func serveV2(ctx context.Context, dir, script, faults string) *acptest.RawConn {
	GinkgoHelper()
	c := acptest.ServeRaw(ctx, newBridge(dir, script, faults))
	DeferCleanup(func() { closeV2(c) })
	initV2(ctx, c)
	return c
}

// initV2 checks every line of c from now on against ACP's v2 schema and
// initializes it offering version 2, which the agent must answer.
func initV2(ctx context.Context, c *acptest.RawConn) {
	GinkgoHelper()
	schema, err := acptest.LoadSchema(filepath.Join(testutil.RepoRoot(), "fixtures", "acp-schema", "v2", "schema.json"))
	Expect(err).NotTo(HaveOccurred())
	c.Check = schema.CheckV2
	res, err := c.InitV2(ctx)
	Expect(err).NotTo(HaveOccurred(), "initialize")
	Expect(res).To(ContainSubstring(`"protocolVersion":2`))
}

// closeV2 ends the bridge's input and waits for it to stop.
func closeV2(c *acptest.RawConn) {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	Expect(c.Close(ctx)).To(Succeed())
}

// v2Plans returns the plan of every plan_update, checking each is an
// items plan of the todo list's planId.
func v2Plans(ups []acptest.Update) [][]planEntry {
	GinkgoHelper()
	var out [][]planEntry
	for _, u := range ups {
		if u.Kind() != "plan_update" {
			continue
		}
		raw, err := json.Marshal(u.Update["plan"])
		Expect(err).NotTo(HaveOccurred())
		var p struct {
			Type    string      `json:"type"`
			PlanID  string      `json:"planId"`
			Entries []planEntry `json:"entries"`
		}
		Expect(json.Unmarshal(raw, &p)).To(Succeed())
		Expect(p.Type).To(Equal("items"))
		Expect(p.PlanID).To(Equal(acp.PlanID), "one planId for the session's todo list")
		out = append(out, p.Entries)
	}
	return out
}

// withoutState drops v2's state_update (live only: the replay is history).
func withoutState(ups []acptest.Update) []acptest.Update {
	var out []acptest.Update
	for _, u := range ups {
		if u.Kind() != "state_update" {
			out = append(out, u)
		}
	}
	return out
}

// promptedV2 makes a session on a v2 bridge with script over dir, sends
// each prompt in turn (each turn read to its idle), closes the bridge and
// returns the session's id and the turns' updates.
func promptedV2(ctx context.Context, dir, script string, prompts ...string) (string, []acptest.Update) {
	GinkgoHelper()
	c := serveV2(ctx, dir, script, "")
	id, err := c.NewSession(ctx, projectCwd)
	Expect(err).NotTo(HaveOccurred())
	var all []acptest.Update
	for _, p := range prompts {
		res, ups, err := c.PromptV2(ctx, id, p)
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(MatchJSON(`{}`), "v2's prompt answer only acknowledges")
		Expect(ups[len(ups)-1].Update).To(HaveKeyWithValue("stopReason", "end_turn"))
		all = append(all, ups...)
	}
	closeV2(c)
	return id, all
}

func kinds(ups []acptest.Update) []string {
	out := []string{}
	for _, u := range ups {
		out = append(out, u.Kind())
	}
	return out
}

var _ = Describe("v2: session/resume from the start after a prompt, in process", func() {
	It("restores the plan under the same planId with a fresh bridge, before answering", func() {
		ctx := specCtx()
		dir := GinkgoT().TempDir()

		id, live := promptedV2(ctx, dir, "todo-plan.yaml", "Plan three todos, then say DONE.")
		Expect(v2Plans(live)).To(Equal([][]planEntry{threeTodos}), "the live prompt streams the plan")

		second := serveV2(ctx, dir, "", "")
		res, replayed, err := second.Result(ctx, "session/resume", acptest.ResumeFromStart(id, projectCwd))
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(MatchJSON(`{}`))

		By("the plan was replayed before the resume answer, under the session's id")
		Expect(v2Plans(replayed)).To(Equal([][]planEntry{threeTodos}))
		for _, u := range replayed {
			Expect(u.SessionID).To(Equal(id))
		}

		By("the replay is the live stream without its state updates: the user's message first, no tool_call")
		Expect(kinds(replayed)[0]).To(Equal("user_message"))
		Expect(kinds(replayed)).NotTo(ContainElement("tool_call"))
		liveUpdates := withoutState(live)
		Expect(replayed).To(HaveLen(len(liveUpdates)))
		for i := range liveUpdates {
			Expect(replayed[i].Update).To(Equal(liveUpdates[i].Update), "update %d", i)
		}
	})

	It("replays every write of several turns in order under one planId, the last plan the last write", func() {
		ctx := specCtx()
		dir := GinkgoT().TempDir()
		id, turns := promptedV2(ctx, dir, "multi-write.yaml", "turn one", "turn two")
		live := v2Plans(turns)
		Expect(live).To(HaveLen(3), "three accepted writes (the rejected one sends no plan)")

		second := serveV2(ctx, dir, "", "")
		_, replayed, err := second.Result(ctx, "session/resume", acptest.ResumeFromStart(id, projectCwd))
		Expect(err).NotTo(HaveOccurred())
		Expect(v2Plans(replayed)).To(Equal(live))
		Expect(live[2]).To(Equal([]planEntry{
			{Content: "read the code", Priority: "medium", Status: "completed"},
			{Content: "write the fix", Priority: "medium", Status: "completed"},
			{Content: "run the tests", Priority: "medium", Status: "in_progress"},
		}))
	})

	It("resumes without replayFrom showing nothing, and the resumed session takes a prompt", func() {
		ctx := specCtx()
		dir := GinkgoT().TempDir()
		id, _ := promptedV2(ctx, dir, "multi-write.yaml", "turn one")

		second := serveV2(ctx, dir, "turn-two.yaml", "")
		_, ups, err := second.Result(ctx, "session/resume", map[string]any{"sessionId": id, "cwd": projectCwd})
		Expect(err).NotTo(HaveOccurred())
		Expect(ups).To(BeEmpty())
		_, turn, err := second.PromptV2(ctx, id, "turn two")
		Expect(err).NotTo(HaveOccurred())
		Expect(v2Plans(turn)).To(Equal([][]planEntry{{{Content: "ship it", Priority: "medium", Status: "in_progress"}}}))
	})

	It("restores on v2 a session written on v1, and on v1 one written on v2: the log is the same", func() {
		ctx := specCtx()
		dir := GinkgoT().TempDir()
		v1 := serveBridge(ctx, dir, "todo-plan.yaml", "")
		id, err := v1.NewSessionIn(ctx, projectCwd)
		Expect(err).NotTo(HaveOccurred())
		_, err = v1.PromptText(ctx, id, "go")
		Expect(err).NotTo(HaveOccurred())
		closeBridge(v1)

		v2 := serveV2(ctx, dir, "turn-two.yaml", "")
		_, replayed, err := v2.Result(ctx, "session/resume", acptest.ResumeFromStart(id, projectCwd))
		Expect(err).NotTo(HaveOccurred())
		Expect(v2Plans(replayed)).To(Equal([][]planEntry{threeTodos}))
		_, _, err = v2.PromptV2(ctx, id, "turn two")
		Expect(err).NotTo(HaveOccurred())
		closeV2(v2)

		again := serveBridge(ctx, dir, "", "")
		Expect(again.Load(ctx, id, projectCwd)).To(Succeed())
		Expect(wirePlans(again.Wire.Lines())).To(Equal([][]planEntry{
			threeTodos, {{Content: "ship it", Priority: "medium", Status: "in_progress"}},
		}))
	})

	It("shows no plan when the agent answers the resume without replaying (no-load-replay): the spec can fail", func() {
		ctx := specCtx()
		dir := GinkgoT().TempDir()
		id, _ := promptedV2(ctx, dir, "todo-plan.yaml", "go")

		broken := serveV2(ctx, dir, "", "no-load-replay")
		_, replayed, err := broken.Result(ctx, "session/resume", acptest.ResumeFromStart(id, projectCwd))
		Expect(err).NotTo(HaveOccurred())
		Expect(v2Plans(replayed)).To(BeEmpty())
	})
})

var _ = Describe("v2 across processes: todoharness agent over stdio", func() {
	It("negotiates v2 with a client that offers it, and restores the plan in a second process with session/resume", func() {
		ctx := specCtx()
		sessions, cwd := GinkgoT().TempDir(), GinkgoT().TempDir()
		run := func(script string) (*agentProc, *acptest.RawConn) {
			p, stdin, stdout := launchAgent(cwd, nil, "--script", fixture(script), "--sessions", sessions, "--fsync=false")
			c := acptest.ConnectRaw(stdin, stdout)
			initV2(ctx, c)
			return p, c
		}
		stop := func(p *agentProc, c *acptest.RawConn) {
			Expect(c.Close(ctx)).To(Succeed())
			Eventually(p.done).Should(BeClosed())
			Expect(exitCode(p.err)).To(Equal(0), "exit status 0 on stdin EOF")
		}

		first, c := run("todo-plan.yaml")
		id, err := c.NewSession(ctx, cwd)
		Expect(err).NotTo(HaveOccurred())
		res, live, err := c.PromptV2(ctx, id, "Plan three todos, then say DONE.")
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(MatchJSON(`{}`))
		Expect(live[len(live)-1].Update).To(HaveKeyWithValue("stopReason", "end_turn"))
		Expect(v2Plans(live)).To(Equal([][]planEntry{threeTodos}))
		stop(first, c)

		second, c2 := run("todo-plan.yaml")
		_, replayed, err := c2.Result(ctx, "session/resume", acptest.ResumeFromStart(id, cwd))
		Expect(err).NotTo(HaveOccurred())
		Expect(v2Plans(replayed)).To(Equal([][]planEntry{threeTodos}))
		stop(second, c2)
	})
})

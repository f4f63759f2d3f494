package acp_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/acp/acptest"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/testutil"
)

func TestParseFaults(t *testing.T) {
	fs, err := acp.ParseFaults(" no-plan, echo-list ,,")
	if err != nil {
		t.Fatal(err)
	}
	if !fs.Has(acp.FaultNoPlan) || !fs.Has(acp.FaultEchoList) || len(fs) != 2 {
		t.Errorf("faults = %v", fs)
	}
	if fs.String() != "echo-list,no-plan" {
		t.Errorf("String() = %q", fs.String())
	}
	if _, err := acp.ParseFaults("no-plan,bogus"); err == nil || !strings.Contains(err.Error(), `"bogus"`) || !strings.Contains(err.Error(), "crash-on-prompt") {
		t.Errorf("unknown fault error = %v", err)
	}
	empty, err := acp.ParseFaults("")
	if err != nil || len(empty) != 0 {
		t.Errorf("empty = %v %v", empty, err)
	}
	if n := len(acp.KnownFaults()); n != 23 {
		t.Errorf("%d known faults, want 23 (18 of v1's plan and sessions, 5 of the v2 and plan-operation surfaces)", n)
	}
}

func planLines(lines [][]byte) [][]byte {
	var out [][]byte
	for _, l := range lines {
		if bytes.Contains(l, []byte(`"sessionUpdate":"plan"`)) {
			out = append(out, l)
		}
	}
	return out
}

func TestFaultNoPlan(t *testing.T) {
	r := start(t, "", writeThenDone(threeTodos()), withFaults("no-plan"))
	r.prompt(r.newSession(), "go")
	if p := planLines(r.conn.Wire.Lines()); len(p) != 0 {
		t.Errorf("no-plan sent %d plans", len(p))
	}
}

func TestFaultNullEntries(t *testing.T) {
	r := start(t, "", writeThenDone(threeTodos()), withFaults("null-entries"))
	r.prompt(r.newSession(), "go")
	p := planLines(r.conn.Wire.Lines())
	if len(p) != 1 || !bytes.Contains(p[0], []byte(`"entries":null`)) {
		t.Errorf("null-entries plans = %s", p)
	}
}

func TestFaultNoPriority(t *testing.T) {
	r := start(t, "", writeThenDone(threeTodos()), withFaults("no-priority"))
	r.prompt(r.newSession(), "go")
	p := planLines(r.conn.Wire.Lines())
	if len(p) != 1 || bytes.Contains(p[0], []byte(`priority`)) || !bytes.Contains(p[0], []byte(`"content":"read the code"`)) {
		t.Errorf("no-priority plans = %s", p)
	}
	// Still a well-formed session/update on the wire.
	var m struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	if err := json.Unmarshal(p[0], &m); err != nil || m.JSONRPC != "2.0" || m.Method != "session/update" || m.Params.SessionID == "" {
		t.Errorf("raw plan line malformed: %s (%v)", p[0], err)
	}
}

func TestFaultPlanOnReject(t *testing.T) {
	r := start(t, "", writeThenDone(todos("a", "in_progress", "b", "in_progress")), withFaults("plan-on-reject"))
	r.prompt(r.newSession(), "go")
	kinds := kindsWithout(acptest.UpdateKinds(r.conn.Wire.Lines()), "agent_thought_chunk", "agent_message_chunk")
	if !reflect.DeepEqual(kinds, []string{"tool_call", "plan", "tool_call_update"}) {
		t.Errorf("plan-on-reject kinds = %v", kinds)
	}
	u := firstOf(wireUpdates(r.conn.Wire.Lines()), "tool_call_update")
	if u["status"] != "failed" {
		t.Errorf("call was not rejected: %v", u)
	}
}

func TestFaultAcceptDuplicates(t *testing.T) {
	r := start(t, "", writeThenDone(todos("a", "pending", "a", "pending")), withFaults("accept-duplicates"))
	r.prompt(r.newSession(), "go")
	ups := wireUpdates(r.conn.Wire.Lines())
	jsonEq(t, "plan", firstOf(ups, "plan")["entries"], `[{"content":"a","priority":"medium","status":"pending"},{"content":"a","priority":"medium","status":"pending"}]`)
	if firstOf(ups, "tool_call_update")["status"] != "completed" {
		t.Errorf("duplicates were not accepted")
	}
}

func TestFaultAcceptDuplicatesKeepsOtherRules(t *testing.T) {
	r := start(t, "", writeThenDone(todos("a", "in_progress", "a", "in_progress", "b", "in_progress")), withFaults("accept-duplicates"))
	r.prompt(r.newSession(), "go")
	u := firstOf(wireUpdates(r.conn.Wire.Lines()), "tool_call_update")
	jsonEq(t, "update", u["content"], `[{"type":"content","content":{"type":"text","text":"Error: invalid todos: at most one task may be in_progress, got 2"}}]`)
}

func toolResultText(t *testing.T, m *fakeModel) string {
	t.Helper()
	reqs := m.requests()
	if len(reqs) < 2 {
		t.Fatalf("only %d model requests", len(reqs))
	}
	msgs := reqs[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleTool {
		t.Fatalf("last message role %q", last.Role)
	}
	return last.Text()
}

func TestFaultWrongCounts(t *testing.T) {
	m := writeThenDone(threeTodos())
	r := start(t, "", m, withFaults("wrong-counts"))
	r.prompt(r.newSession(), "go")
	if got := toolResultText(t, m); got != "Updated todo list: 3 pending, 1 in progress, 0 completed." {
		t.Errorf("result = %q", got)
	}
}

func TestFaultEchoList(t *testing.T) {
	m := writeThenDone(threeTodos())
	r := start(t, "", m, withFaults("echo-list"))
	r.prompt(r.newSession(), "go")
	got := toolResultText(t, m)
	if !strings.HasPrefix(got, "Updated todo list: 2 pending") || !strings.Contains(got, `"content":"write the fix"`) {
		t.Errorf("result = %q", got)
	}
}

func TestCorrectAgentResultHasNoList(t *testing.T) {
	m := writeThenDone(threeTodos())
	r := start(t, "", m)
	r.prompt(r.newSession(), "go")
	if got := toolResultText(t, m); got != "Updated todo list: 2 pending, 1 in progress, 0 completed." {
		t.Errorf("result = %q", got)
	}
}

func promptedSession(t *testing.T) (dir, id string) {
	r := start(t, "", writeThenDone(threeTodos()))
	id = r.newSession()
	r.prompt(id, "go")
	r.close()
	return r.dir, id
}

func TestFaultNoLoadReplay(t *testing.T) {
	dir, id := promptedSession(t)
	r := start(t, dir, newFake(), withFaults("no-load-replay"))
	if err := r.conn.Load(r.ctx, id, cwd); err != nil {
		t.Fatal(err)
	}
	if n := len(r.conn.Client.Updates()); n != 0 {
		t.Errorf("no-load-replay replayed %d updates", n)
	}
}

// refuse-live-load refuses a load of the session open on the process, as
// the original implementation did, and loads it after a restart.
func TestFaultRefuseLiveLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := start(t, "", writeThenDone(threeTodos()), withFaults("refuse-live-load"))
		id := r.newSession()
		r.prompt(id, "go")
		var re *sdk.RequestError
		if err := r.conn.Load(r.ctx, id, cwd); !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "is already loaded") {
			t.Fatalf("load of the open session: %v, want -32602 \"… is already loaded\"", err)
		}
		r.close()
		r2 := start(t, r.dir, newFake(), withFaults("refuse-live-load"))
		if err := r2.conn.Load(r2.ctx, id, cwd); err != nil {
			t.Fatalf("load after a restart: %v", err)
		}
		settle(t, "the replayed plan", func() bool { return len(r2.conn.Client.Plans()) == 1 })
	})
}

func TestFaultReplayAfterResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir, id := promptedSession(t)
		r := start(t, dir, newFake(), withFaults("replay-after-response"))
		if err := r.conn.Load(r.ctx, id, cwd); err != nil {
			t.Fatal(err)
		}
		settle(t, "the plan", func() bool { return len(r.conn.Client.Plans()) == 1 })
		lines := r.conn.Wire.Lines()
		resp, plan := -1, -1
		for i, l := range lines {
			if bytes.Contains(l, []byte(`"result":{}`)) && resp < 0 {
				resp = i
			}
			if bytes.Contains(l, []byte(`"sessionUpdate":"plan"`)) {
				plan = i
			}
		}
		if !(resp >= 0 && plan > resp) {
			t.Errorf("response at line %d, plan at line %d: want the plan after the response", resp, plan)
		}
	})
}

// updates-after-response answers the prompt before the todo_write call's
// updates, which still all arrive (after the answer, the turn goes on).
func TestFaultUpdatesAfterResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := start(t, "", writeThenDone(threeTodos()), withFaults("updates-after-response"))
		id := r.newSession()
		if _, err := r.conn.PromptText(r.ctx, id, "go"); err != nil {
			t.Fatal(err)
		}
		settle(t, "the plan", func() bool { return len(r.conn.Client.Plans()) == 1 })
		resp, call, plan := -1, -1, -1
		for i, l := range r.conn.Wire.Lines() {
			switch {
			case bytes.Contains(l, []byte(`"stopReason":"end_turn"`)) && resp < 0:
				resp = i
			case bytes.Contains(l, []byte(`"sessionUpdate":"tool_call"`)) && call < 0:
				call = i
			case bytes.Contains(l, []byte(`"sessionUpdate":"plan"`)):
				plan = i
			}
		}
		if !(resp >= 0 && call > resp && plan > call) {
			t.Errorf("answer at line %d, tool_call at %d, plan at %d: want the answer first", resp, call, plan)
		}
	})
}

// hang-on-prompt never answers a prompt, not even once it is cancelled.
// In a synctest bubble: synctest.Wait returns when the bridge has done all
// it will do with the prompt, then with the cancel.
func TestFaultHangOnPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := start(t, "", writeThenDone(threeTodos()), withFaults("hang-on-prompt"))
		id := r.newSession()
		ctx, cancel := context.WithCancel(r.ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := r.conn.PromptText(ctx, id, "go")
			done <- err
		}()
		synctest.Wait()
		if err := r.conn.Cancel(r.ctx, sdkCancel(id)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("hang-on-prompt answered the prompt (error %v) before the client gave up", err)
		default:
		}
		cancel() // the client gives up
		if err := <-done; err == nil {
			t.Fatal("hang-on-prompt answered the prompt")
		}
		for _, l := range r.conn.Wire.Lines() {
			if bytes.Contains(l, []byte(`"stopReason"`)) {
				t.Errorf("hang-on-prompt answered: %s", l)
			}
		}
		// Closing the connection still stops the bridge (checked by cleanup).
	})
}

func TestFaultCrashOnPrompt(t *testing.T) {
	reg, err := builtin.Compose("")
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := acp.ParseFaults("crash-on-prompt")
	var code atomic.Int32
	code.Store(-1)
	b, err := acp.New(acp.Config{
		Sessions: session.Dir{Path: t.TempDir()}, Model: writeThenDone(threeTodos()), Tools: reg, Faults: fs,
		Exit: func(c int) { code.Store(int32(c)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := acptest.Serve(ctx, b)
	defer s.Close(ctx)
	if _, err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := s.NewSessionIn(ctx, cwd)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = s.PromptText(ctx, id, "go")
	if code.Load() != 3 {
		t.Errorf("exit code = %d, want 3", code.Load())
	}
}

func sdkCancel(id string) sdk.CancelNotification {
	return sdk.CancelNotification{SessionId: sdk.SessionId(id)}
}

// The idle report (Config.IdleReport) names the bytes written when the
// bridge has nothing more to send: after the prompt's answer, and with
// updates-after-response only once the turn that goes on after the answer
// has sent its updates, never at the answer itself.
func TestIdleReportComesAfterTheLateWork(t *testing.T) {
	for _, fault := range []string{"", "updates-after-response"} {
		t.Run("fault "+fault, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				idle := &testutil.SyncBuffer{}
				r := start(t, "", writeThenDone(threeTodos()), withFaults(fault), func(c *acp.Config) { c.IdleReport = idle })
				id := r.newSession()
				if _, err := r.conn.PromptText(r.ctx, id, "go"); err != nil {
					t.Fatal(err)
				}
				// Line ends, and where the prompt's answer ends.
				ends := func() (all []int, answer int) {
					n := 0
					for _, l := range r.conn.Wire.Lines() {
						n += len(l) + 1
						all = append(all, n)
						if bytes.Contains(l, []byte(`"stopReason"`)) {
							answer = n
						}
					}
					return all, answer
				}
				reports := func() []int {
					var out []int
					for _, f := range strings.Fields(idle.String()) {
						n, err := strconv.Atoi(f)
						if err != nil {
							t.Fatalf("idle report %q is not a count", f)
						}
						out = append(out, n)
					}
					return out
				}
				settle(t, "an idle report at the last line's end", func() bool {
					all, _ := ends()
					got := reports()
					return len(got) > 0 && got[len(got)-1] == all[len(all)-1]
				})
				all, answer := ends()
				got := reports()
				for _, n := range got {
					if !slices.Contains(all, n) {
						t.Errorf("idle report %d is not the end of a line (line ends %v)", n, all)
					}
				}
				late := answer != all[len(all)-1]
				if late != (fault != "") {
					t.Fatalf("the answer ends at %d of %d bytes: late updates %v, want %v", answer, all[len(all)-1], late, fault != "")
				}
				if late && slices.Contains(got, answer) {
					t.Errorf("idle reported at the answer (%d), with the turn's updates still to come: reports %v", answer, got)
				}
			})
		})
	}
}

// sessionPlans are the plan updates of session id on the wire, each as
// its entries' contents.
func sessionPlans(lines [][]byte, id string) [][]string {
	var out [][]string
	for _, l := range planLines(lines) {
		var m struct {
			Params struct {
				SessionID string `json:"sessionId"`
				Update    struct {
					Entries []struct {
						Content string `json:"content"`
					} `json:"entries"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(l, &m) != nil || m.Params.SessionID != id {
			continue
		}
		contents := []string{}
		for _, e := range m.Params.Update.Entries {
			contents = append(contents, e.Content)
		}
		out = append(out, contents)
	}
	return out
}

// shared-todo-list keeps one list for the process: a session opened after
// another wrote starts with that list and shows it as its first prompt
// starts; the first session of a process starts with none. Without the
// fault each session's list is its own.
func TestFaultSharedTodoList(t *testing.T) {
	for _, fault := range []string{"", "shared-todo-list"} {
		t.Run(cmp.Or(fault, "none"), func(t *testing.T) {
			other := todos("pack the release", "in_progress")
			model := newFake(
				fakeTurn{calls: []fakeCall{{id: "call_1", name: "todo_write", args: threeTodos()}}},
				fakeTurn{text: "DONE"},
				fakeTurn{calls: []fakeCall{{id: "call_2", name: "todo_write", args: other}}},
				fakeTurn{text: "DONE"},
			)
			r := start(t, "", model, withFaults(fault))
			a := r.newSession()
			r.prompt(a, "go")
			b := r.newSession()
			r.prompt(b, "go")
			want := [][]string{{"pack the release"}}
			if fault != "" {
				want = [][]string{{"read the code", "write the fix", "run the tests"}, {"pack the release"}}
			}
			lines := r.conn.Wire.Lines()
			if got := sessionPlans(lines, a); !reflect.DeepEqual(got, [][]string{{"read the code", "write the fix", "run the tests"}}) {
				t.Errorf("the first session's plans: %q", got)
			}
			if got := sessionPlans(lines, b); !reflect.DeepEqual(got, want) {
				t.Errorf("the second session's plans: %q, want %q", got, want)
			}
		})
	}
}

package conformance

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/todolist"
)

// The test binary doubles as a small fake ACP agent (the helper-process
// pattern): with fakeAgentEnv set it speaks ACP on stdio and talks to the
// mock model over plain HTTP, independently of harness/acp, so the runner's
// infrastructure is tested without the reference agent. fakeModeEnv picks a
// behaviour.
//
// Mode updates-after-response answers session/prompt as soon as the model
// calls a tool (or the turn ends), then runs the tool calls and the rest of
// the turn after the answer, after fakeDelayEnv (a Go duration; default 0);
// it leaves as soon as its stdin ends, late updates unsent, as real agents
// do. Mode flip-plan sends no plan in every other process, counted in the
// file fakeCounterEnv names: a deliberately racy agent.
const (
	fakeAgentEnv   = "CONFORMANCE_FAKE_AGENT"
	fakeModeEnv    = "CONFORMANCE_FAKE_MODE"
	fakeDelayEnv   = "CONFORMANCE_FAKE_DELAY"
	fakeCounterEnv = "CONFORMANCE_FAKE_COUNTER"
)

func TestMain(m *testing.M) {
	if d := os.Getenv(fakeBurnEnv); d != "" {
		os.Exit(burnCPU(d))
	}
	if os.Getenv(fakeAgentEnv) == "1" {
		os.Exit(fakeAgent(os.Getenv(fakeModeEnv)))
	}
	os.Exit(m.Run())
}

// fakeTarget runs this test binary as the fake agent in mode.
func fakeTarget(t *testing.T, mode string) driver.Target {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return driver.Target{Name: "fake:" + mode, Command: []string{exe, "-test.run=^$"},
		Env: []string{fakeAgentEnv + "=1", fakeModeEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}}
}

type fakeState struct {
	mode    string
	outMu   sync.Mutex // a late turn writes beside the main loop
	out     *bufio.Writer
	in      *bufio.Scanner
	baseURL string
	nextID  int
	msgs    []map[string]any
	list    []map[string]any
	sid     string
	// beforeTools, if set, runs before the tool calls of a model answer
	// (updates-after-response); turnDone is closed when the late turn
	// running beside the main loop ends (nil: none).
	beforeTools func()
	turnDone    chan struct{}
	noPlan      bool // flip-plan: this process sends no plan
	// own is a todo tool of the fake's own in place of todo_write (nil:
	// none; see fakenoplan_test.go).
	own *fakeTool
	// mut is the fault the breakage rows of mode carry themselves
	// (breakage.Mutation): they need no mode of the fake's own.
	mut breakage.Mutation
	// proto is the protocol surface the fake speaks (fakev2_test.go).
	proto fakeProto
}

// fakeMutation merges the mutations of the fake's breakage rows named in
// mode (comma-separated).
func fakeMutation(mode string) breakage.Mutation {
	var m breakage.Mutation
	for _, b := range breakage.In(breakage.Fake) {
		if b.Mutation == nil || !slices.Contains(strings.Split(mode, ","), b.Name) {
			continue
		}
		x := b.Mutation
		if x.Schema != nil {
			m.Schema = x.Schema
		}
		if x.Entry != nil {
			m.Entry = x.Entry
		}
		if x.Result != nil {
			m.Result = x.Result
		}
	}
	return m
}

func (f *fakeState) has(m string) bool {
	for _, x := range strings.Split(f.mode, ",") {
		if x == m {
			return true
		}
	}
	return false
}

func (f *fakeState) send(v any) {
	b, _ := json.Marshal(v)
	f.outMu.Lock()
	defer f.outMu.Unlock()
	f.out.Write(append(b, '\n'))
	f.out.Flush()
}

// flipPlan counts this process in the counter file and reports whether it
// is an odd one (1st, 3rd, ...), which sends no plan.
func flipPlan() bool {
	p := os.Getenv(fakeCounterEnv)
	if p == "" {
		return false
	}
	fh, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return false
	}
	defer fh.Close()
	if _, err := fh.Write([]byte{'.'}); err != nil {
		return false
	}
	st, err := fh.Stat()
	return err == nil && st.Size()%2 == 1
}

// lateTurn runs the prompt's turn beside the main loop and returns once
// the model called a tool (or the turn ended): the caller answers the
// prompt, then calls the returned func, which lets the tool calls run
// after the delay.
func (f *fakeState) lateTurn() (answered func()) {
	delay, _ := time.ParseDuration(os.Getenv(fakeDelayEnv))
	answer, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	signal := func() { once.Do(func() { close(answer) }) }
	first := true
	f.beforeTools = func() {
		if first {
			first = false
			signal()
			<-release
			time.Sleep(delay) // the fake agent, a child process, is slow on purpose
		}
	}
	f.turnDone = make(chan struct{})
	go func() {
		defer close(f.turnDone)
		_ = f.turn()
		signal()
	}()
	<-answer
	return func() { close(release) }
}

// lateAnswer answers a prompt whose turn has run, then shows the plan
// again: at once (late-plan: the turn is over, nothing open), or, with
// open-call-late, after fakeDelayEnv, as a call of its own it announced
// before the answer ends (the turn's work not done when it answered).
func (f *fakeState) lateAnswer(reply func(any)) {
	if f.has("open-call-late") {
		f.notify(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "late-call", "title": "Tidy up", "kind": "other", "status": "in_progress"})
	}
	reply(map[string]any{"stopReason": "end_turn"})
	if f.has("open-call-late") {
		delay, _ := time.ParseDuration(os.Getenv(fakeDelayEnv))
		time.Sleep(delay) // the fake agent, a child process, is slow on purpose
		f.notify(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "late-call", "status": "completed"})
	}
	f.notify(map[string]any{"sessionUpdate": "plan", "entries": f.entries(f.list)})
}

func (f *fakeState) notify(update map[string]any) {
	for _, u := range f.proto.surface(update) {
		f.send(map[string]any{"jsonrpc": "2.0", "method": "session/update",
			"params": map[string]any{"sessionId": f.sid, "update": u}})
	}
}

// request sends a request to the client and reads lines until its answer.
func (f *fakeState) request(method string, params any) json.RawMessage {
	f.nextID++
	id := 1000 + f.nextID
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for f.in.Scan() {
		var env driver.Envelope
		if json.Unmarshal(f.in.Bytes(), &env) == nil && env.Method == "" && string(env.ID) == fmt.Sprint(id) {
			if env.Error != nil {
				b, _ := json.Marshal(env.Error)
				return b
			}
			return env.Result
		}
	}
	return nil
}

func fakeAgent(mode string) int {
	f := &fakeState{mode: mode, out: bufio.NewWriter(os.Stdout), in: bufio.NewScanner(os.Stdin),
		baseURL: os.Getenv(driver.ModelURLEnv)}
	f.in.Buffer(make([]byte, 1<<20), 16<<20)
	if f.has("ignore-term") {
		signal.Ignore(syscall.SIGTERM)
	}
	if f.has("garbage") {
		fmt.Println("hello, I am not JSON-RPC")
	}
	if f.has("hang-init") {
		select {}
	}
	f.noPlan = f.has("flip-plan") && flipPlan()
	f.own = cmp.Or(ownTool(mode), swallowTool(mode))
	f.mut = fakeMutation(mode)
	f.proto.has, f.proto.fault = f.has, strings.Contains(","+mode, ",v2-")
	for f.in.Scan() {
		if f.turnDone != nil {
			<-f.turnDone // a late turn ends before the next message is served
			f.turnDone = nil
		}
		var env driver.Envelope
		if err := json.Unmarshal(f.in.Bytes(), &env); err != nil {
			continue
		}
		reply := func(result any) {
			f.send(map[string]any{"jsonrpc": "2.0", "id": env.ID, "result": result})
		}
		switch env.Method {
		case "initialize":
			if f.proto.initialize(f, env.Params, reply) {
				continue // answered as a v2 agent (fakev2_test.go)
			}
			reply(map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{"loadSession": !f.has("no-load")},
				"agentInfo": map[string]any{"name": "fake", "version": "0"}, "authMethods": []any{}})
		case "session/new":
			// A session's conversation and list are its own (a pooled
			// process serves several sessions, one after another).
			f.sid, f.msgs, f.list = "fake-session", nil, nil
			if f.has("burn") {
				f.burn()
			}
			reply(map[string]any{"sessionId": f.sid})
			if f.has("stop-reading") {
				// Never reads its stdin again (bounded, should the runner hang).
				time.Sleep(30 * time.Second) // in the fake agent, a child process
				return 0
			}
		case "session/load", "session/resume":
			if f.has("load-error") {
				f.send(map[string]any{"jsonrpc": "2.0", "id": env.ID, "error": map[string]any{"code": -32603, "message": "cannot load: no such session"}})
				continue
			}
			var p struct {
				SessionID string `json:"sessionId"`
			}
			_ = json.Unmarshal(env.Params, &p)
			if f.has("refuse-live-load") && f.sid != "" && p.SessionID == f.sid {
				// As the original implementation: the session is open here.
				f.send(map[string]any{"jsonrpc": "2.0", "id": env.ID, "error": map[string]any{"code": -32602, "message": "Invalid params: session " + f.sid + " is already loaded"}})
				continue
			}
			f.sid = p.SessionID
			data, err := os.ReadFile(filepath.Join(".fake", f.sid+".json"))
			if err == nil {
				_ = json.Unmarshal(data, &f.list)
			}
			replay := err == nil && !f.has("no-load-replay")
			if replay && !f.has("replay-after-response") {
				f.notify(map[string]any{"sessionUpdate": "plan", "entries": f.entries(f.list)})
			}
			reply(map[string]any{})
			if replay && f.has("replay-after-response") {
				f.notify(map[string]any{"sessionUpdate": "plan", "entries": f.entries(f.list)})
			}
		case "session/prompt":
			if f.has("crash-on-prompt") {
				fmt.Fprintln(os.Stderr, "fake agent: crashing on purpose")
				return 3
			}
			if f.has("prompt-error") {
				f.send(map[string]any{"jsonrpc": "2.0", "id": env.ID, "error": map[string]any{"code": -32000, "message": "rate limited, try later"}})
				continue
			}
			if f.has("hang-on-prompt") {
				fmt.Fprintln(os.Stderr, "fake agent: hanging on purpose")
				select {}
			}
			if f.has("client-requests") {
				cwd, _ := os.Getwd()
				os.WriteFile("inside.txt", []byte("one\ntwo\nthree\n"), 0o644)
				f.request("session/request_permission", map[string]any{"sessionId": f.sid,
					"toolCall": map[string]any{"toolCallId": "x"},
					"options": []any{map[string]any{"optionId": "no", "name": "No", "kind": "reject_once"},
						map[string]any{"optionId": "yes", "name": "Yes", "kind": "allow_once"}}})
				f.request("fs/read_text_file", map[string]any{"sessionId": f.sid, "path": filepath.Join(cwd, "inside.txt"), "line": 2, "limit": 1})
				f.request("fs/read_text_file", map[string]any{"sessionId": f.sid, "path": "/etc/passwd"})
				f.request("fs/write_text_file", map[string]any{"sessionId": f.sid, "path": filepath.Join(cwd, "out", "w.txt"), "content": "written"})
				f.request("terminal/create", map[string]any{"sessionId": f.sid, "command": "ls"})
			}
			var p struct {
				Prompt []struct {
					Text string `json:"text"`
				} `json:"prompt"`
			}
			_ = json.Unmarshal(env.Params, &p)
			f.msgs = append(f.msgs, map[string]any{"role": "user", "content": p.Prompt[0].Text})
			if f.proto.v2 {
				f.promptV2(reply)
				continue
			}
			if f.has("late-plan") || f.has("open-call-late") {
				if err := f.turn(); err != nil {
					f.send(map[string]any{"jsonrpc": "2.0", "id": env.ID, "error": map[string]any{"code": -32603, "message": err.Error()}})
					continue
				}
				f.lateAnswer(reply)
				continue
			}
			if f.has("updates-after-response") {
				release := f.lateTurn()
				reply(map[string]any{"stopReason": "end_turn"})
				release()
				continue
			}
			if err := f.turn(); err != nil {
				f.send(map[string]any{"jsonrpc": "2.0", "id": env.ID, "error": map[string]any{"code": -32603, "message": err.Error()}})
				continue
			}
			reply(map[string]any{"stopReason": "end_turn"})
		default:
			if len(env.ID) > 0 {
				f.send(map[string]any{"jsonrpc": "2.0", "id": env.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		}
	}
	if f.has("slow-exit") || f.has("ignore-term") {
		time.Sleep(time.Minute) // the fake agent, a child process, is slow to exit on purpose
	}
	return 0
}

func (f *fakeState) entries(list []map[string]any) []any {
	out := []any{}
	for _, it := range list {
		e := map[string]any{"content": it["content"], "status": it["status"], "priority": "medium"}
		if f.mut.Entry != nil {
			f.mut.Entry(e)
		}
		out = append(out, e)
	}
	return out
}

func (f *fakeState) toolName() string {
	if f.has("rename-tool") {
		return "todo_list"
	}
	return "todo_write"
}

const fakeSchema = `{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed"]}},"required":["content","status"]}}},"required":["todos"]}`

// schema is the parameters schema of the fake's todo_write: fakeSchema,
// edited by its mutation.
func (f *fakeState) schema() string {
	if f.mut.Schema == nil {
		return fakeSchema
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(fakeSchema), &s); err != nil {
		panic(err) // a constant; TestRunFakeAgentPasses offers it
	}
	f.mut.Schema(s)
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// fakeModelMsg is the message of a chat completion answer.
type fakeModelMsg struct {
	Content   *string `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// ask sends the conversation to the mock model offering one tool, keeps
// the answer in the conversation and returns it.
func (f *fakeState) ask(tool, schema string) (fakeModelMsg, error) {
	body, _ := json.Marshal(map[string]any{"model": "mock", "messages": f.msgs, "tools": []any{map[string]any{
		"type": "function", "function": map[string]any{"name": tool, "description": "todo list", "parameters": json.RawMessage(schema)}}}})
	resp, err := http.Post(f.baseURL+"/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return fakeModelMsg{}, err
	}
	var out struct {
		Choices []struct {
			Message fakeModelMsg `json:"message"`
		} `json:"choices"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(out.Choices) == 0 {
		return fakeModelMsg{}, fmt.Errorf("model answered %d", resp.StatusCode)
	}
	msg := out.Choices[0].Message
	am := map[string]any{"role": "assistant", "content": msg.Content}
	if len(msg.ToolCalls) > 0 {
		var tcs []any
		for _, tc := range msg.ToolCalls {
			tcs = append(tcs, map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Function.Name, "arguments": tc.Function.Arguments}})
		}
		am["tool_calls"] = tcs
	}
	f.msgs = append(f.msgs, am)
	return msg, nil
}

// turn runs model calls until the model stops calling tools.
func (f *fakeState) turn() error {
	for step := 0; step < 10; step++ {
		name, schema, run := f.toolName(), f.schema(), f.runTool
		if f.own != nil {
			name, schema, run = f.own.name, f.own.schema, f.own.run
		}
		msg, err := f.ask(name, schema)
		if err != nil {
			return err
		}
		if msg.Content != nil && *msg.Content != "" {
			f.notify(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": *msg.Content}})
		}
		if len(msg.ToolCalls) == 0 {
			return nil
		}
		if f.beforeTools != nil {
			f.beforeTools()
		}
		for _, tc := range msg.ToolCalls {
			run(f, tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
	}
	return fmt.Errorf("too many steps")
}

// fakeTool is a todo tool the fake offers in place of todo_write: its
// name, its parameters schema, and what a call does (run announces it,
// answers it over ACP and adds its result to the conversation).
type fakeTool struct {
	name, schema string
	run          func(f *fakeState, id, name, args string)
}

// runTool runs one call of the fake's todo_write.
func (f *fakeState) runTool(_ *fakeState, id, name, args string) {
	f.notify(map[string]any{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Update todo list", "kind": "other", "status": "in_progress"})
	// Any dialect's todo tool is its own (forced into a dialect, it
	// executes that tool's calls); any other tool is unknown.
	text, isErr := "Error: unknown tool "+name, true
	if name == f.toolName() || slices.ContainsFunc(driver.Dialects(), func(d driver.Dialect) bool { return d.Tool == name }) {
		text, isErr = f.todoWrite(args)
	}
	status := "completed"
	if isErr {
		status = "failed"
	}
	f.answerTool(id, status, text, true)
}

// answerTool ends call id: a tool_call_update with its final status and
// output (when report), and the result the model is handed.
func (f *fakeState) answerTool(id, status, text string, report bool) {
	if report {
		f.notify(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status,
			"content": []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": text}}}})
	}
	f.msgs = append(f.msgs, map[string]any{"role": "tool", "tool_call_id": id, "content": text})
}

// todoWrite validates like the contract says and shows the plan.
func (f *fakeState) todoWrite(raw string) (string, bool) {
	text, isErr := f.validateWrite(raw)
	if isErr && f.has("no-error-prefix") {
		// Worded as other agents do: no "Error:" prefix, and the refused
		// arguments quoted back.
		text = "failed to parse function arguments: " + strings.TrimPrefix(text, "Error: ") + " in " + raw
	}
	if isErr && f.has("plan-on-reject") {
		var a struct {
			Todos []map[string]any `json:"todos"`
		}
		if json.Unmarshal([]byte(raw), &a) == nil {
			f.notify(map[string]any{"sessionUpdate": "plan", "entries": f.entries(a.Todos)})
		}
	}
	return text, isErr
}

func (f *fakeState) validateWrite(raw string) (string, bool) {
	var a struct {
		Todos []map[string]any `json:"todos"`
	}
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return "Error: invalid arguments: " + err.Error(), true
	}
	seen := map[string]bool{}
	active := 0
	var p, i, c int
	for _, t := range a.Todos {
		content, _ := t["content"].(string)
		if f.has("go-trim") {
			content = strings.TrimSpace(content) // Go's trim, not the contract's
		} else {
			content = todolist.Trim(content)
		}
		if !f.has("accept-dup-raw") {
			t["content"] = content // accept-dup-raw keeps (and shows) content as sent
		}
		if content == "" && !f.has("accept-empty") {
			return "Error: invalid todo: `content` must be a non-empty string", true
		}
		if seen[content] && !f.has("accept-dup-raw") {
			return fmt.Sprintf("Error: invalid todos: duplicate content %q", content), true
		}
		seen[content] = true
		if st, ok := t["status"].(string); ok && f.has("any-case-status") && slices.Contains([]string{"pending", "in_progress", "completed"}, strings.ToLower(st)) {
			// Any casing passes, and is shown raw: In_Progress counts as
			// neither pending, in progress nor completed.
			if st != strings.ToLower(st) {
				continue
			}
		}
		switch t["status"] {
		case "pending":
			p++
		case "in_progress":
			i++
			active++
		case "completed":
			c++
		default:
			return "Error: invalid arguments: bad status", true
		}
	}
	if active > 1 {
		return fmt.Sprintf("Error: invalid todos: at most one task may be in_progress, got %d", active), true
	}
	f.list = a.Todos
	_ = os.MkdirAll(".fake", 0o755)
	data, _ := json.Marshal(f.list)
	_ = os.WriteFile(filepath.Join(".fake", f.sid+".json"), data, 0o644)
	if !f.has("no-plan") && !f.noPlan {
		entries := f.entries(a.Todos)
		if f.has("null-entries") && len(entries) == 0 {
			entries = nil
		}
		f.notify(map[string]any{"sessionUpdate": "plan", "entries": entries})
	}
	if f.has("wrong-counts") {
		p++
	}
	text := fmt.Sprintf("Updated todo list: %d pending, %d in progress, %d completed.", p, i, c)
	if f.mut.Result != nil {
		text = f.mut.Result(text, f.list)
	}
	return text, false
}

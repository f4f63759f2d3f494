package fullloop

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/agent"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/jsonx"
	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/mockmodel"
)

// system is the system prompt every scenario's agent sends.
const system = "You are the full-loop test agent."

// target is one face of a script the agent can talk to.
type target struct {
	name string
	// start plays s and returns the model the agent calls and the journal
	// of the requests the script answered. Cleanup is registered with
	// DeferCleanup.
	start func(s *mockmodel.Script) (llm.Model, *mockmodel.Journal)
}

// targets are the two faces every spec runs against.
var targets = []target{
	{name: "in-process", start: func(s *mockmodel.Script) (llm.Model, *mockmodel.Journal) {
		m := mockmodel.NewModel(s)
		return m, m.Journal()
	}},
	{name: "http", start: func(s *mockmodel.Script) (llm.Model, *mockmodel.Journal) {
		GinkgoHelper()
		srv := mockmodel.NewServer(s)
		DeferCleanup(srv.Close)
		Expect(srv.URL).To(HavePrefix("http://127.0.0.1:"))
		c, err := openaichat.NewClient(openaichat.ClientConfig{
			BaseURL: srv.BaseURL(), APIKey: "test-key", Model: "mock-model", HTTPClient: srv.Client(),
		})
		Expect(err).NotTo(HaveOccurred())
		return c, srv.Journal()
	}},
}

// fixture returns the path of a script under fixtures/fullloop.
func fixture(name string) string {
	return filepath.Join(testutil.RepoRoot(), "fixtures", "fullloop", name)
}

func loadScript(name string) *mockmodel.Script {
	GinkgoHelper()
	s, err := mockmodel.LoadScript(fixture(name))
	Expect(err).NotTo(HaveOccurred())
	Expect(s.Validate()).To(Succeed())
	return s
}

// loop is one scenario: a persisted session, the real agent on the shipped
// composition, and the target's face of the script.
type loop struct {
	target  target
	model   llm.Model
	journal *mockmodel.Journal
	log     *session.Log
	agent   *agent.Agent
	id, cwd string
	path    string
}

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "fl-" + hex.EncodeToString(b[:])
}

// newLoop plays the script fixture on tg. maxSteps 0 is the default.
func newLoop(tg target, script string, maxSteps int) *loop {
	GinkgoHelper()
	model, journal := tg.start(loadScript(script))
	reg, err := builtin.Compose("")
	Expect(err).NotTo(HaveOccurred())
	dir := GinkgoT().TempDir()
	l := &loop{target: tg, model: model, journal: journal, id: randomID(), cwd: GinkgoT().TempDir()}
	l.log, err = session.Dir{Path: dir}.Create(l.id, l.cwd)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(l.log.Close)
	l.path = l.log.Store().Path()
	l.agent = agent.New(l.log, agent.Config{
		Model: model, Tools: reg, ModelName: "mock-model", System: system, MaxSteps: maxSteps,
	})
	return l
}

// prompt runs one turn; the log must accept every event.
func (l *loop) prompt(ctx context.Context, text string) session.TurnEndReason {
	GinkgoHelper()
	reason, err := l.agent.Prompt(ctx, []llm.Part{{Type: llm.PartText, Text: text}})
	Expect(err).NotTo(HaveOccurred())
	return reason
}

// completes runs a turn that must complete; a refused request (a failed
// expect of the script) shows in the failure message.
func (l *loop) completes(text string) {
	GinkgoHelper()
	reason := l.prompt(context.Background(), text)
	Expect(reason).To(Equal(session.TurnEndReason{Kind: session.TurnCompleted}),
		"journal errors: %v", journalErrors(l.journal))
}

func journalErrors(j *mockmodel.Journal) []string {
	var out []string
	for _, e := range j.Errors() {
		out = append(out, fmt.Sprintf("request %d (turn %d): %s", e.Index, e.TurnIndex, e.Error))
	}
	return out
}

// events returns the log's events; the log must satisfy the invariants.
func (l *loop) events() []session.Event {
	GinkgoHelper()
	evs := l.log.Events()
	Expect(session.CheckEvents(evs)).To(Succeed())
	return evs
}

func ofType(evs []session.Event, typ string) []session.Event {
	var out []session.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func decode[T any](e session.Event) T {
	GinkgoHelper()
	var v T
	Expect(e.Decode(&v)).To(Succeed())
	return v
}

func todoLists(evs []session.Event) [][]session.TodoItem {
	GinkgoHelper()
	var out [][]session.TodoItem
	for _, e := range ofType(evs, session.TypeTodoWrite) {
		out = append(out, decode[session.TodoWrite](e).Todos)
	}
	return out
}

func items(pairs ...string) []session.TodoItem {
	out := []session.TodoItem{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, session.TodoItem{Content: pairs[i], Status: pairs[i+1]})
	}
	return out
}

// callSpans pairs every tool/call with its tool/result: the events strictly
// between them, and both payloads.
type callSpan struct {
	call    session.ToolCall
	result  session.ToolResult
	between []session.Event
}

func callSpans(evs []session.Event) []callSpan {
	GinkgoHelper()
	var out []callSpan
	for i, e := range evs {
		if e.Type != session.TypeToolCall {
			continue
		}
		c := decode[session.ToolCall](e)
		found := false
		for j := i + 1; j < len(evs); j++ {
			if evs[j].Type == session.TypeToolResult {
				r := decode[session.ToolResult](evs[j])
				if r.CallID == c.CallID {
					out = append(out, callSpan{call: c, result: r, between: evs[i+1 : j]})
					found = true
					break
				}
			}
		}
		Expect(found).To(BeTrue(), "tool/call %s has no tool/result", c.CallID)
	}
	return out
}

// lastTurnEnd is the reason of the log's last turn/end.
func lastTurnEnd(evs []session.Event) session.TurnEnd {
	GinkgoHelper()
	ends := ofType(evs, session.TypeTurnEnd)
	Expect(ends).NotTo(BeEmpty())
	return decode[session.TurnEnd](ends[len(ends)-1])
}

// lastMessage is the last message of a journaled request.
func lastMessage(e mockmodel.JournalEntry) llm.Message {
	GinkgoHelper()
	Expect(e.Messages).NotTo(BeEmpty(), "request %d has no messages", e.Index)
	return e.Messages[len(e.Messages)-1]
}

func roles(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role)
	}
	return out
}

// file returns the session log as persisted (flushed at every turn end).
func (l *loop) file() []byte {
	GinkgoHelper()
	data, err := os.ReadFile(l.path)
	Expect(err).NotTo(HaveOccurred())
	return data
}

// golden compares the normalised persisted log with
// golden/fullloop/<name>.golden, after checking that the file holds exactly
// the events of the log in memory.
func (l *loop) golden(name string) {
	GinkgoHelper()
	data := l.file()
	ld, err := session.Read(bytes.NewReader(data), l.path)
	Expect(err).NotTo(HaveOccurred())
	Expect(ld.Warnings).To(BeEmpty())
	Expect(ld.Events).To(HaveLen(l.log.Len()), "persisted events")
	norm, err := normalizeLog(data, l.id, l.cwd, testutil.RepoRoot())
	Expect(err).NotTo(HaveOccurred())
	testutil.AssertGolden(GinkgoTB(), "fullloop", name, norm)
}

// normalizeLog normalises a JSONL session log for goldens (DESIGN.md
// "Goldens"): on each line's top level, time and createdAt become 0; in every
// string the session id becomes {{sessionId}}, cwd {{cwd}}, and the
// repository root {{repo}} (error messages name script files). Key order is
// kept; output is one compact JSON object per line.
func normalizeLog(data []byte, id, cwd, repo string) ([]byte, error) {
	var out bytes.Buffer
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		nz := normalizer{dec: dec, out: &out, id: id, cwd: cwd, repo: repo}
		if err := nz.value(0); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

type normalizer struct {
	dec     *json.Decoder
	out     *bytes.Buffer
	id, cwd string
	repo    string
}

func (n *normalizer) value(depth int) error {
	tok, err := n.dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		closer := byte('}')
		if t == '[' {
			closer = ']'
		}
		n.out.WriteByte(byte(t))
		for first := true; n.dec.More(); first = false {
			if !first {
				n.out.WriteByte(',')
			}
			if t == '{' {
				k, err := n.dec.Token()
				if err != nil {
					return err
				}
				n.str(k.(string))
				n.out.WriteByte(':')
				if depth == 0 && (k == "time" || k == "createdAt") {
					var skip json.RawMessage
					if err := n.dec.Decode(&skip); err != nil {
						return err
					}
					n.out.WriteByte('0')
					continue
				}
			}
			if err := n.value(depth + 1); err != nil {
				return err
			}
		}
		if _, err := n.dec.Token(); err != nil {
			return err
		}
		n.out.WriteByte(closer)
	case string:
		s := t
		if n.cwd != "" {
			s = strings.ReplaceAll(s, n.cwd, "{{cwd}}")
		}
		if n.id != "" {
			s = strings.ReplaceAll(s, n.id, "{{sessionId}}")
		}
		if n.repo != "" {
			s = strings.ReplaceAll(s, n.repo, "{{repo}}")
		}
		n.str(s)
	case json.Number:
		n.out.WriteString(t.String())
	case bool:
		fmt.Fprint(n.out, t)
	case nil:
		n.out.WriteString("null")
	}
	return nil
}

func (n *normalizer) str(s string) {
	_ = jsonx.Write(n.out, s) // a string always encodes
}

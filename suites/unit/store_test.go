package unit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

var _ = Describe("session store (JSONL)", func() {
	var dir session.Dir

	BeforeEach(func() {
		dir = session.Dir{Path: GinkgoT().TempDir()}
	})

	// writeTurn appends one complete turn with a todo_write call to l.
	writeTurn := func(l *session.Log, turn int, todos []session.TodoItem) {
		GinkgoHelper()
		mustAppend(l, session.TypeTurnStart, session.TurnStart{Turn: turn, Trigger: session.Trigger{Kind: "message", Source: &session.Source{Kind: "user"}}})
		mustAppend(l, session.TypeUserMessage, session.UserMessage{Content: []llm.Part{{Type: llm.PartText, Text: "go"}}, Source: &session.Source{Kind: "user"}})
		mustAppend(l, session.TypeStepStart, session.Step{Turn: turn, Step: 1})
		mustAppend(l, session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Index: llm.IntPtr(0), Text: "ok"}})
		mustAppend(l, session.TypeToolCall, session.ToolCall{Turn: turn, Step: 1, CallID: "c", Name: "todo_write", Arguments: rawJSON(map[string]any{"todos": todos})})
		mustAppend(l, session.TypeTodoWrite, session.TodoWrite{Todos: todos})
		mustAppend(l, session.TypeToolResult, session.ToolResult{Turn: turn, Step: 1, CallID: "c", Content: []llm.Part{{Type: llm.PartText, Text: "done"}}}, session.WithSourceEventSeqs(l.Len()-2))
		mustAppend(l, session.TypeStepEnd, session.Step{Turn: turn, Step: 1})
		mustAppend(l, session.TypeTurnEnd, session.TurnEnd{Turn: turn, Reason: session.TurnEndReason{Kind: session.TurnCompleted}})
	}
	plan1 := []session.TodoItem{{Content: "read", Status: "in_progress"}, {Content: "fix", Status: "pending"}}
	plan2 := []session.TodoItem{{Content: "read", Status: "completed"}, {Content: "fix", Status: "in_progress"}}

	It("round-trips header and events through the file, byte for byte", func() {
		l, err := dir.Create("s1", "/cwd", session.WithClock(fixedClock))
		Expect(err).NotTo(HaveOccurred())
		writeTurn(l, 1, plan1)
		Expect(l.Close()).To(Succeed())

		path, _ := dir.File("s1")
		ld, err := session.LoadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(ld.Warnings).To(BeEmpty())
		Expect(ld.Header).To(Equal(session.Header{Type: "session", Version: 0, ID: "s1", CreatedAt: 1000, Cwd: "/cwd"}))
		Expect(ld.Events).To(Equal(l.Events()))
		Expect(ld.Lines[0]).To(Equal(2), "line 1 is the header")
		Expect(session.CheckEvents(ld.Events)).To(Succeed())

		data, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		Expect(lines).To(HaveLen(1 + l.Len()))
		Expect(lines[0]).To(Equal(`{"type":"session","version":0,"id":"s1","createdAt":1000,"cwd":"/cwd"}`))
		Expect(lines[6]).To(Equal(`{"type":"todo/write","seq":5,"time":1000,"data":{"todos":[{"content":"read","status":"in_progress"},{"content":"fix","status":"pending"}]}}`))
		Expect(lines[7]).To(Equal(`{"type":"tool/result","seq":6,"time":1000,"data":{"turn":1,"step":1,"callId":"c","content":[{"type":"text","text":"done"}],"isError":false},"sourceEventSeqs":[4],"surfaceOp":"append"}`))
	})

	It("writes JSON as the original does: no escaping of <, > and &", func() {
		l, err := dir.Create("s1", "/a&b", session.WithClock(fixedClock))
		Expect(err).NotTo(HaveOccurred())
		writeTurn(l, 1, []session.TodoItem{{Content: "check a < b && c > d", Status: "pending"}})
		Expect(l.Close()).To(Succeed())
		path, _ := dir.File("s1")
		data, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(data)).To(ContainSubstring(`"cwd":"/a&b"`))
		Expect(string(data)).To(ContainSubstring(`{"type":"todo/write","seq":5,"time":1000,"data":{"todos":[{"content":"check a < b && c > d","status":"pending"}]}}`))
	})

	It("flushes at turn end, so a finished turn is on disk before Close", func() {
		l, err := dir.Create("s1", "", session.WithClock(fixedClock))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(l.Close)
		writeTurn(l, 1, plan1)
		path, _ := dir.File("s1")
		ld, err := session.LoadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(ld.Events).To(HaveLen(l.Len()))
	})

	It("drops a torn last line with a warning and reopens the file for append after the last good line", func() {
		l, err := dir.Create("s1", "", session.WithClock(fixedClock))
		Expect(err).NotTo(HaveOccurred())
		writeTurn(l, 1, plan1)
		n := l.Len()
		Expect(l.Close()).To(Succeed())
		path, _ := dir.File("s1")
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		Expect(err).NotTo(HaveOccurred())
		_, err = f.WriteString(`{"type":"turn/start","seq":9,"time":1000,"data":{"tu`)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Close()).To(Succeed())

		ld, err := session.LoadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(ld.Events).To(HaveLen(n))
		Expect(ld.Warnings).To(ConsistOf(HavePrefix(path + ":11: dropped torn last line")))

		r, warnings, err := dir.Open("s1", session.WithClock(fixedClock))
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(ConsistOf(ContainSubstring("dropped torn last line"), ContainSubstring("moved the torn last line")))
		Expect(r.Len()).To(Equal(n))
		writeTurn(r, 2, plan2)
		Expect(r.Close()).To(Succeed())

		ld, err = session.LoadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(ld.Warnings).To(BeEmpty(), "the torn bytes are gone")
		Expect(ld.Events).To(HaveLen(2 * n))
		Expect(session.CheckEvents(ld.Events)).To(Succeed())
		for i, e := range ld.Events {
			Expect(e.Seq).To(Equal(i))
			Expect(ld.Lines[i]).To(Equal(i + 2))
		}
		todos, ok := session.CurrentTodos(ld.Events)
		Expect(ok).To(BeTrue())
		Expect(todos).To(Equal(plan2))
	})

	It("cuts a torn tail off on reopen even when nothing is appended after it", func() {
		l, err := dir.Create("s1", "", session.WithClock(fixedClock))
		Expect(err).NotTo(HaveOccurred())
		writeTurn(l, 1, plan1)
		Expect(l.Close()).To(Succeed())
		path, _ := dir.File("s1")
		good, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		torn := `{"type":"turn/start","seq":9,"time":1000,"data":{"turn":2,"trigger":{"kind":"message","source":{"kind":"us`
		Expect(os.WriteFile(path, append(append([]byte(nil), good...), torn...), 0o644)).To(Succeed())

		r, warnings, err := dir.Open("s1")
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(HaveLen(2))
		Expect(r.Close()).To(Succeed())
		after, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(after)).To(Equal(string(good)))
		side, err := os.ReadFile(fmt.Sprintf("%s.torn-%d", path, len(good)))
		Expect(err).NotTo(HaveOccurred(), "the torn bytes are kept aside, not lost")
		Expect(string(side)).To(Equal(torn))
	})

	It("round-trips a log larger than the reader's buffer, with a line longer than it", func() {
		// Built in memory and written through the store in one go: the
		// spec is about the reader's buffer, and Append's fsync per durable
		// event would cost 2,800 fsyncs here.
		l := session.New("big", "", session.WithClock(fixedClock))
		long := strings.Repeat("x", 600<<10)
		for turn := 1; turn <= 400; turn++ {
			plan := []session.TodoItem{{Content: fmt.Sprintf("task %d of a long session", turn), Status: "in_progress"}}
			if turn == 200 {
				plan = append(plan, session.TodoItem{Content: long, Status: "pending"})
			}
			writeTurn(l, turn, plan)
		}
		path, _ := dir.File("big")
		st, err := session.CreateFile(path, l.Header())
		Expect(err).NotTo(HaveOccurred())
		for _, e := range l.Events() {
			Expect(st.Write(e)).To(Succeed())
		}
		Expect(st.Close()).To(Succeed())
		fi, err := os.Stat(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Size()).To(BeNumerically(">", 1<<20), "bigger than the 256 KiB read buffer, several times over")

		ld, err := session.LoadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(ld.Warnings).To(BeEmpty())
		want := l.Events()
		Expect(ld.Events).To(HaveLen(len(want)))
		for i := range want {
			Expect(ld.Events[i]).To(Equal(want[i]), "event %d", i)
		}
		Expect(session.CheckEvents(ld.Events)).To(Succeed())
	})

	It("reopens a file whose last good line has no newline without gluing lines together", func() {
		l, err := dir.Create("s1", "", session.WithClock(fixedClock))
		Expect(err).NotTo(HaveOccurred())
		writeTurn(l, 1, plan1)
		Expect(l.Close()).To(Succeed())
		path, _ := dir.File("s1")
		data, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(path, data[:len(data)-1], 0o644)).To(Succeed())

		r, warnings, err := dir.Open("s1", session.WithClock(fixedClock))
		Expect(err).NotTo(HaveOccurred())
		Expect(warnings).To(ConsistOf(ContainSubstring("no trailing newline")))
		writeTurn(r, 2, plan2)
		Expect(r.Close()).To(Succeed())
		ld, err := session.LoadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(ld.Warnings).To(BeEmpty())
		Expect(ld.Events).To(HaveLen(18))
	})

	It("fails on a corrupt line in the middle, naming file and line", func() {
		path := filepath.Join(GinkgoT().TempDir(), "bad.jsonl")
		Expect(os.WriteFile(path, []byte(strings.Join([]string{
			`{"type":"session","version":0,"id":"x","createdAt":0}`,
			`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`,
			`{"type":"user/message","seq":1,"time":0,"data":{"content":[]},"surfaceOp":"appe`,
			`{"type":"turn/end","seq":2,"time":0,"data":{"turn":1}}`,
		}, "\n")+"\n"), 0o644)).To(Succeed())
		_, err := session.LoadFile(path)
		Expect(err).To(HaveOccurred())
		var le *session.LineError
		Expect(errors.As(err, &le)).To(BeTrue())
		Expect(le.File).To(Equal(path))
		Expect(le.Line).To(Equal(3))
		Expect(err.Error()).To(HavePrefix(path + ":3: invalid JSON"))
	})

	It("fails on a middle line that is JSON but not an event", func() {
		_, err := session.Read(strings.NewReader(
			`{"type":"session","version":0,"id":"x","createdAt":0}`+"\n"+
				`{"seq":0,"data":{}}`+"\n"+
				`{"type":"turn/start","seq":1,"time":0,"data":{"turn":1}}`+"\n"), "mem.jsonl")
		Expect(err).To(MatchError(`mem.jsonl:2: event: missing field "type"`))
	})

	DescribeTable("fails without a session header on line 1",
		func(content, want string) {
			_, err := session.Read(strings.NewReader(content), "h.jsonl")
			Expect(err).To(MatchError(ContainSubstring(want)))
			var le *session.LineError
			Expect(errors.As(err, &le)).To(BeTrue())
			Expect(le.Line).To(Equal(1))
		},
		Entry("empty file", "", "h.jsonl:1: missing session header (empty file)"),
		Entry("an event first", `{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`+"\n"+`{"type":"turn/end","seq":1,"time":0,"data":{"turn":1}}`+"\n",
			`h.jsonl:1: session header: type is "turn/start", want "session"`),
		Entry("a header without id", `{"type":"session","version":0}`+"\n", `h.jsonl:1: session header: missing field "id"`),
		Entry("a torn header", `{"type":"sess`, "h.jsonl:1: session header: invalid JSON"),
	)

	It("Dir.Open reports an invariant violation with its file line", func() {
		path, _ := dir.File("s1")
		Expect(os.WriteFile(path, []byte(
			`{"type":"session","version":0,"id":"s1","createdAt":0}`+"\n"+
				`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`+"\n"+
				`{"type":"turn/end","seq":1,"time":0,"data":{"turn":1}}`+"\n"+
				"\n"+
				`{"type":"todo/write","seq":2,"time":0,"data":{"todos":[]}}`+"\n"), 0o644)).To(Succeed())
		_, _, err := dir.Open("s1")
		Expect(err).To(MatchError(ContainSubstring(path + ": restore session s1: line 5: event seq 2 (todo/write): event outside an open turn")))
		var ie *session.InvariantError
		Expect(errors.As(err, &ie)).To(BeTrue())
		Expect(ie.Line).To(Equal(5))
	})

	It("keeps unknown event types and unknown fields through load", func() {
		ld, err := session.Read(strings.NewReader(
			`{"type":"session","version":0,"id":"x","createdAt":0}`+"\n"+
				`{"type":"future/kind","seq":0,"time":5,"data":{"z":1,"a":[true]}}`+"\n"), "f.jsonl")
		Expect(err).NotTo(HaveOccurred())
		Expect(ld.Events).To(HaveLen(1))
		Expect(ld.Events[0].Type).To(Equal("future/kind"))
		Expect(string(ld.Events[0].Data)).To(Equal(`{"z":1,"a":[true]}`))
		b, err := json.Marshal(ld.Events[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(Equal(`{"type":"future/kind","seq":0,"time":5,"data":{"z":1,"a":[true]}}`))
	})

	It("rejects an unsafe session id", func() {
		_, err := dir.Create("../escape", "")
		Expect(err).To(MatchError(ContainSubstring(`invalid session id "../escape"`)))
		_, _, err = dir.Open("nope")
		Expect(errors.Is(err, session.ErrNotFound)).To(BeTrue())
	})
})

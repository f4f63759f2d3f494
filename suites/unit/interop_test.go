package unit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/testutil"
)

// interopLog is the session log recorded by the original TypeScript harness.
const interopLog = "todo-plan/session.jsonl"

// interopPath locates the committed interop fixture, failing the spec with
// where it looked when it is absent.
func interopPath() string {
	GinkgoHelper()
	p, err := testutil.InteropFile(interopLog)
	if err != nil {
		Fail(err.Error())
	}
	return p
}

var interopPlan = []session.TodoItem{
	{Content: "read the code", Status: "in_progress"},
	{Content: "write the fix", Status: "pending"},
	{Content: "run the tests", Status: "pending"},
}

var _ = Describe("interop: a log recorded by the original harness", func() {
	It("loads without warnings, passes the invariants, and its plan is the three todos", func() {
		path := interopPath()
		ld, err := session.LoadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(ld.Warnings).To(BeEmpty())
		Expect(ld.Header.Type).To(Equal("session"))
		Expect(ld.Header.ID).To(Equal("259ed557-03cf-4f50-9592-fc7fdbece7f3"))
		Expect(session.CheckEvents(ld.Events)).To(Succeed())

		todos, ok := session.CurrentTodos(ld.Events)
		Expect(ok).To(BeTrue())
		Expect(todos).To(Equal(interopPlan))

		l, err := session.Restore(ld.Header, ld.Events)
		Expect(err).NotTo(HaveOccurred())
		todos, ok = l.CurrentTodos()
		Expect(ok).To(BeTrue())
		Expect(todos).To(Equal(interopPlan))
	})

	It("keeps todo/write off the surface: it is not in the derived model history", func() {
		ld, err := session.LoadFile(interopPath())
		Expect(err).NotTo(HaveOccurred())
		msgs := session.DeriveMessages(ld.Events)
		Expect(msgs).NotTo(BeEmpty())
		for _, m := range msgs {
			Expect(m.Role).To(BeElementOf("user", "assistant", "tool"))
		}
		var tw *session.Event
		for i := range ld.Events {
			if ld.Events[i].Type == session.TypeTodoWrite {
				tw = &ld.Events[i]
			}
		}
		Expect(tw).NotTo(BeNil())
		Expect(tw.SurfaceOp).To(BeEmpty())
	})

	It("writes back byte-identical event lines (the on-disk format is the original's)", func() {
		path := interopPath()
		ld, err := session.LoadFile(path)
		Expect(err).NotTo(HaveOccurred())
		dir := session.Dir{Path: GinkgoT().TempDir()}
		l, err := session.Restore(ld.Header, ld.Events)
		Expect(err).NotTo(HaveOccurred())
		out, _ := dir.File(ld.Header.ID)
		s, err := session.CreateFile(out, ld.Header)
		Expect(err).NotTo(HaveOccurred())
		for _, e := range l.Events() {
			Expect(s.Write(e)).To(Succeed())
		}
		Expect(s.Close()).To(Succeed())
		want, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		got, err := os.ReadFile(out)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Split(string(got), "\n")).To(Equal(strings.Split(string(want), "\n")))
	})
})

var _ = Describe("todoharness log check | log show", func() {
	// run runs the command line in process (no binary is built) and returns
	// stdout, stderr and the exit status the binary would exit with.
	run := func(args ...string) (string, string, int) {
		GinkgoHelper()
		var stdout, stderr bytes.Buffer
		code := cli.Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}

	writeLog := func(lines ...string) string {
		GinkgoHelper()
		p := filepath.Join(GinkgoT().TempDir(), "s.jsonl")
		Expect(os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)).To(Succeed())
		return p
	}
	const header = `{"type":"session","version":0,"id":"t","createdAt":0}`

	It("log check passes the interop fixture (exit 0)", func() {
		path := interopPath()
		stdout, stderr, code := run("log", "check", path)
		Expect(code).To(Equal(0), "stderr: %s", stderr)
		Expect(stdout).To(Equal("ok " + path + ": session 259ed557-03cf-4f50-9592-fc7fdbece7f3, 123 events\n"))
		Expect(stderr).To(BeEmpty())
	})

	It("log check fails a broken log with exit 1 and the line number", func() {
		path := writeLog(header,
			`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`,
			`{"type":"turn/end","seq":1,"time":0,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
			`{"type":"todo/write","seq":2,"time":0,"data":{"todos":[]}}`)
		stdout, stderr, code := run("log", "check", path)
		Expect(code).To(Equal(1))
		Expect(stdout).To(BeEmpty())
		Expect(stderr).To(Equal("FAIL " + path + ": line 4: event seq 2 (todo/write): event outside an open turn [LOG-TURN]\n"))
	})

	It("log check fails a corrupt middle line with exit 1 and file:line", func() {
		path := writeLog(header,
			`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`,
			`{"type":"turn/end",`,
			`{"type":"turn/end","seq":1,"time":0,"data":{"turn":1}}`)
		_, stderr, code := run("log", "check", path)
		Expect(code).To(Equal(1))
		Expect(stderr).To(HavePrefix("FAIL " + path + ":3: invalid JSON"))
	})

	It("log check warns about an unknown event type and a torn last line, and still passes", func() {
		path := writeLog(header,
			`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`,
			`{"type":"future/thing","seq":1,"time":0,"data":{}}`,
			`{"type":"turn/end","seq":2,"time":0,"data":{"turn":1}}`,
			`{"type":"turn/sta`)
		// Torn means cut off mid-write: the last line has no newline.
		data, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(path, data[:len(data)-1], 0o644)).To(Succeed())
		stdout, stderr, code := run("log", "check", path)
		Expect(code).To(Equal(0), stderr)
		Expect(stdout).To(HavePrefix("ok "))
		Expect(stderr).To(ContainSubstring(path + `:3: unknown event type "future/thing"`))
		Expect(stderr).To(ContainSubstring(path + ":5: dropped torn last line"))
	})

	It("log show prints the plan checklist and a count per event type (golden)", func() {
		stdout, stderr, code := run("log", "show", interopPath())
		Expect(code).To(Equal(0), stderr)
		Expect(stdout).To(ContainSubstring("    [~] read the code\n    [ ] write the fix\n    [ ] run the tests\n"))
		golden("log-show.interop", []byte(stdout))
	})

	It("log show of a log with no todo_write says so", func() {
		path := writeLog(header,
			`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`,
			`{"type":"turn/end","seq":1,"time":0,"data":{"turn":1}}`)
		stdout, _, code := run("log", "show", path)
		Expect(code).To(Equal(0))
		Expect(stdout).To(ContainSubstring("(no todo_write in this session)"))
	})
})

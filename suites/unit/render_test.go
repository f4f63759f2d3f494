package unit

import (
	"bytes"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/stdio"
)

var _ = Describe("stdio [todos] checklist", func() {
	It("renders a mixed list with its glyphs, in order (golden)", func() {
		out := stdio.RenderTodos([]session.TodoItem{
			{Content: "read the code", Status: "completed"},
			{Content: "write the fix", Status: "in_progress"},
			{Content: "run the tests", Status: "pending"},
		})
		Expect(out).To(Equal("\n  [todos]\n    [x] read the code\n    [~] write the fix\n    [ ] run the tests\n"))
		golden("render.mixed", []byte(out))
	})

	It("renders an empty list as the bare header (golden)", func() {
		out := stdio.RenderTodos([]session.TodoItem{})
		Expect(out).To(Equal("\n  [todos]\n"))
		golden("render.empty", []byte(out))
	})

	It("maps statuses to glyphs", func() {
		Expect(stdio.Glyph("completed")).To(Equal("[x]"))
		Expect(stdio.Glyph("in_progress")).To(Equal("[~]"))
		Expect(stdio.Glyph("pending")).To(Equal("[ ]"))
	})

	It("WriteTodos writes the same text", func() {
		var b bytes.Buffer
		todos := []session.TodoItem{{Content: "a", Status: "pending"}}
		Expect(stdio.WriteTodos(&b, todos)).To(Succeed())
		Expect(b.String()).To(Equal(stdio.RenderTodos(todos)))
	})
})

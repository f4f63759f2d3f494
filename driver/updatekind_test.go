package driver

import (
	"testing"

	"github.com/todoharness/todoharness/harness/acp/transcript"
)

// The sessionUpdate kind of every session/update the runner receives is
// read once, as it is recorded, and says what reading the line again says
// (the judge asks it of every message many times); a message read from
// saved evidence, without it, has its line read.
func TestUpdateKindIsReadOnceAsRecorded(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":5}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"a","sessionUpdate":"b"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":null}`,
		`{"jsonrpc":"2.0","method":5,"method":"session/update","params":{"update":{"sessionUpdate":"plan"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","Params":{"Update":{"SessionUpdate":"tool_call"}}}`,
		`{"jsonrpc":"1.0","method":"session/update","params":{"update":{"sessionUpdate":"plan"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"update":{"sessionUpdate":"plan"}}}`,
	}
	savedWireLines(t, func(l string) { lines = append(lines, l) })
	c, log, outW := readingConn(t)
	go func() {
		for _, l := range lines {
			_, _ = outW.Write([]byte(l + "\n"))
		}
		outW.Close()
	}()
	<-c.done
	updates := 0
	for _, m := range log.snapshot() {
		want, _, _ := transcript.UpdateKind([]byte(m.Line))
		if m.Method != "session/update" {
			want = ""
		} else {
			updates++
			if !m.updateRead {
				t.Errorf("a session/update recorded without its kind: %s", Truncate(m.Line, 200))
			}
		}
		saved := m
		saved.update, saved.updateRead = "", false
		if got, again := m.UpdateKind(), saved.UpdateKind(); got != want || again != want {
			t.Errorf("update kind %q as recorded, %q read again, want %q: %s", got, again, want, Truncate(m.Line, 200))
		}
	}
	if updates < 100 {
		t.Errorf("%d session/update messages recorded: the corpus moved", updates)
	}
}

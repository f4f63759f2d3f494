package transcript_test

import (
	"testing"

	"github.com/todoharness/todoharness/harness/acp/transcript"
)

func TestUpdateKind(t *testing.T) {
	for _, c := range []struct {
		line, kind string
		isUpdate   bool
		bad        bool
	}{
		{line: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`, kind: "plan", isUpdate: true},
		{line: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{}}}`, isUpdate: true},
		{line: `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`},
		{line: `{"jsonrpc":"2.0","method":"session/prompt","params":{"update":{"sessionUpdate":"plan"}}}`},
		{line: `not json`, bad: true},
	} {
		kind, isUpdate, err := transcript.UpdateKind([]byte(c.line))
		if kind != c.kind || isUpdate != c.isUpdate || (err != nil) != c.bad {
			t.Errorf("%s: kind %q, update %v, err %v; want %q, %v, error %v", c.line, kind, isUpdate, err, c.kind, c.isUpdate, c.bad)
		}
	}
}

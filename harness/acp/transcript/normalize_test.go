package transcript_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/todoharness/todoharness/harness/acp/transcript"
	"github.com/todoharness/todoharness/internal/testutil"
)

func TestNormalizeRewritesVolatileFields(t *testing.T) {
	seg1 := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":41,"result":{"sessionId":"abc-123"}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"abc-123","update":{"z":1,"a":{"time":1782701599722,"createdAt":5,"text":"in /home/me/proj: <b>"}}}}`),
		[]byte(`{"jsonrpc":"2.0","id":"x","error":{"code":-32002,"message":"session not found: other-9"}}`),
		[]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`),
		[]byte(`{"jsonrpc":"2.0","id":41,"result":{"sessionId":"other-9","list":[1,[true,null],{}]}}`),
	}
	seg2 := [][]byte{[]byte(`{"jsonrpc":"2.0","id":99,"result":{}}`)}
	got, err := transcript.Normalizer{Cwds: []string{"/home/me/proj"}}.Normalize(seg1, seg2)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"{{sessionId}}"}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{sessionId}}","update":{"z":1,"a":{"time":0,"createdAt":0,"text":"in {{cwd}}: \u003cb\u003e"}}}}
{"jsonrpc":"2.0","id":"2","error":{"code":-32002,"message":"session not found: other-9"}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}
{"jsonrpc":"2.0","id":1,"result":{"sessionId":"{{sessionId2}}","list":[1,[true,null],{}]}}
{"jsonrpc":"2.0","id":1,"result":{}}
`
	// other-9 is learnt from the sessionId field, so the error text is
	// rewritten too.
	want = string(bytes.Replace([]byte(want), []byte("session not found: other-9"), []byte("session not found: {{sessionId2}}"), 1))
	if string(got) != want {
		t.Errorf("normalised:\n%s\nwant:\n%s", got, want)
	}
}

func TestNormalizeKeepsTheInteropGoldenAsIs(t *testing.T) {
	p, err := testutil.InteropFile("todo-plan/stdout.golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := transcript.ReadLines(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := transcript.Normalizer{}.Normalize(lines)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, raw) {
		t.Errorf("normalising the interop golden changed it")
	}
}

package acpnorm

import (
	"strings"
	"testing"
)

func TestNormalizeAsTheKitDoes(t *testing.T) {
	sid := "5f0c3c39-4f7e-4a8c-9d7e-2b1f0e6a9c11"
	other := "0b7e9a4e-1c2d-4e5f-8a9b-c0d1e2f3a4b5"
	raw := []string{
		`{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":"7","result":{"sessionId":"` + sid + `"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"read /tmp/run-x/a.go and /private/tmp/run-x/b.go","rawInput":{"id":"` + other + `"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"usage_update","used":1234,"size":99}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"agent_message_chunk","messageId":"m-1","content":{"type":"text","text":"<ok> & done"}}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
	}
	var lines [][]byte
	for _, l := range raw {
		lines = append(lines, []byte(l))
	}
	got, err := Normalizer{Cwd: "/tmp/run-x"}.Normalize(lines)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"{{sessionId}}"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{sessionId}}","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"read {{cwd}}/a.go and {{cwd}}/b.go","rawInput":{"id":"{{sessionId}}"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{sessionId}}","update":{"sessionUpdate":"usage_update","used":"{{usedTokens}}","size":99}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"{{sessionId}}","update":{"sessionUpdate":"agent_message_chunk","messageId":"{{messageId}}","content":{"type":"text","text":"<ok> & done"}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
	}, "\n") + "\n"
	if string(got) != want {
		t.Fatalf("normalised:\n%s\nwant:\n%s", got, want)
	}
}

func TestNormalizeRefusesALineThatIsNotJSON(t *testing.T) {
	_, err := Normalizer{}.Normalize([][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), []byte("INFO starting up")})
	if err == nil || !strings.Contains(err.Error(), "stdout line 2 is not JSON") || !strings.Contains(err.Error(), "INFO starting up") {
		t.Fatalf("err %v, want one naming line 2 and quoting it", err)
	}
}

func TestCanonicalSortsKeysAndNamesBadLines(t *testing.T) {
	a, err := Canonical([]byte(`{"b":1,"a":{"d":[{"y":1,"x":2}],"c":"s"}}`+"\n\n"), "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || a[0] != `{"a":{"c":"s","d":[{"x":2,"y":1}]},"b":1}` {
		t.Fatalf("canonical %q", a)
	}
	if _, err := Canonical([]byte("{}\n{oops\n"), "x.jsonl"); err == nil || !strings.Contains(err.Error(), "x.jsonl:2") {
		t.Fatalf("err %v, want x.jsonl:2", err)
	}
}

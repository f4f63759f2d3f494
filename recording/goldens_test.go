package recording

import "testing"

// The plan golden keeps every plan notification of either protocol version,
// and nothing else.
func TestPlanLinesKeepsV1AndV2Plans(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"plan":{"entries":[],"planId":"todo","type":"items"},"sessionUpdate":"plan_update"},"sessionId":"s"}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan_removed","planId":"todo"}}}`),
		[]byte(``),
	}
	got, err := PlanLines(lines)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"entries":[],"sessionUpdate":"plan"}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"plan":{"entries":[],"planId":"todo","type":"items"},"sessionUpdate":"plan_update"}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"planId":"todo","sessionUpdate":"plan_removed"}}}
`
	if string(got) != want {
		t.Errorf("PlanLines =\n%s\nwant\n%s", got, want)
	}
}

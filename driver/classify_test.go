package driver

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// classifyTwice is Classify as it was: the line decoded as an object, then
// again as an Envelope.
func classifyTwice(line []byte) (Envelope, WireMsg) {
	return classify(line, func(map[string]json.RawMessage) (Envelope, bool) { return Envelope{}, false })
}

// classifySeeds are lines where the one decode and the two could part:
// duplicates, names that differ in case only, nulls, wrong types, escapes.
var classifySeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"a":1}}`,
	`{"jsonrpc":"2.0","id":"x","result":null}`,
	`{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"bad"}}`,
	`{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"a"},"error":{"code":2}}`,
	`{"jsonrpc":"2.0","method":"x","method":null}`,
	`{"jsonrpc":"2.0","method":"x","METHOD":"y"}`,
	`{"jsonrpc":"2.0","Method":"y","method":"x"}`,
	`{"jsonrpc":"2.0","\u006dethod":"x","id":3}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"id":null,"result":1}`,
	`{"jsonrpc":"2.0","params":1,"params":null,"method":"m"}`,
	`{"jsonrpc":2,"method":"m"}`,
	`{"jsonrpc":"2.0","method":5}`,
	`{"jsonrpc":null,"jsonrpc":"2.0","method":"m"}`,
	`{"jsonrpc":"2.0","ID":7,"result":1}`,
	`{"jsonrpc":"2.0","ſ":1,"method":"m"}`,
	`{"jsonrpc":"2.0","parameters":1,"method":"m"}`,
	`[1,2]`, `null`, `"s"`, `{}`, `{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":1}`, `not json`,
}

// Classify decodes a line once where it can: it says what decoding it
// twice says, on the repository's saved wire lines and on lines made to
// part the two.
func TestClassifyOnceAgreesWithTwice(t *testing.T) {
	lines := append([]string(nil), classifySeeds...)
	archives := savedWireLines(t, func(l string) { lines = append(lines, l) })
	if archives == 0 || len(lines) < 1000 {
		t.Fatalf("%d archives, %d lines: the corpus moved", archives, len(lines))
	}
	for _, l := range lines {
		classifyAgrees(t, []byte(l))
	}
}

func classifyAgrees(t *testing.T, line []byte) {
	t.Helper()
	e1, m1 := Classify(line)
	e2, m2 := classifyTwice(line)
	if !reflect.DeepEqual(e1, e2) || !reflect.DeepEqual(m1, m2) {
		t.Fatalf("line %q:\nonce  %+v %+v\ntwice %+v %+v", line, e1, m1, e2, m2)
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range classifySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { classifyAgrees(t, line) })
}

// A message is decoded once: a big one costs its line's copy (WireMsg.Line)
// and its members' (the object), not a third for an Envelope.
func TestClassifyDecodesOnce(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", 64<<10) + `"}}}}`)
	per := func(f func([]byte) (Envelope, WireMsg)) float64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 20 {
			f(line)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / 20 / float64(len(line))
	}
	if once, twice := per(Classify), per(classifyTwice); once > 2.5 {
		t.Errorf("Classify allocates %.2f times the line (decoding it twice: %.2f)", once, twice)
	}
}

func BenchmarkClassify(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"medium","status":"pending"},{"content":"b","priority":"medium","status":"pending"}]}}}`)
	b.Run("once", func(b *testing.B) {
		for b.Loop() {
			Classify(line)
		}
	})
	b.Run("twice", func(b *testing.B) {
		for b.Loop() {
			classifyTwice(line)
		}
	})
}

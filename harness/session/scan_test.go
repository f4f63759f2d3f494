package session

import (
	"encoding/json"
	"reflect"
	"testing"
)

var fastDecodeSeeds = []string{
	`{"turn":1,"step":2,"callId":"c1","chunk":{"type":"text-delta","text":"a \"}\" b"}}`,
	`{"type":"assistant/chunk","seq":3,"time":1782701600164,"data":{"turn":1,"step":1,"chunk":{"type":"block-start","index":0}}}`,
	`{"type":"tool/result","seq":6,"time":1,"data":{"callId":"c"},"sourceEventSeqs":[4,5],"surfaceOp":"append"}`,
	` { "type" : "x" , "seq" : 0 , "data" : [1, {"a": "]"}] } `,
	`{"Turn":5,"turn":1}`, `{"TURN":5}`, `{"turn":1,"Turn":5}`, `{"tu\u0072n":3}`,
	`{"turn":1.0}`, `{"turn":1e2}`, `{"turn":-0}`, `{"turn":null}`, `{"turn":"1"}`, `{"turn":99999999999999999999}`,
	`{"callId":"a\nb"}`, `{"callId":"a\u0041"}`, `{"callId":null}`, `{"callId":7}`,
	`{"type":"turn/st\u0061rt","seq":1,"data":{}}`, `{"type":null,"seq":1}`, `{"seq":null,"type":"a"}`,
	`{"type":"a","seq":1,"data":null}`, `{"type":"a","seq":1,"sourceEventSeqs":null}`, `{"type":"a","seq":1,"sourceEventSeqs":[1.5]}`,
	`{"type":"a","seq":1,"time":-5,"Data":{"x":1}}`, `{"type":"a","seq":1,"SEQ":2}`,
	`{"type":"a","seq":1,"data":{},"data":{"b":2}}`,
	"{\"type\":\"\xdb\"}", `{"ſeq":3,"type":"a","seq":1}`, `{"Key":1}`, `{"callId":"é"}`,
	`[]`, `"str"`, `{}`, `null`, `{"a":}`, `{"turn":1,}`, ``, `{"a":[1,2,{"b":[3]}],"turn":4}`,
}

// The fast decoders must agree with encoding/json whenever they answer.
func FuzzFastDecode(f *testing.F) {
	for _, s := range fastDecodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := scope{Turn: noNum, Step: noNum}
		wantErr := json.Unmarshal(data, &want)
		got := scope{Turn: noNum, Step: noNum}
		gotErr := decodeScope(data, false, &got)
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("decodeScope(%s): err %v, encoding/json: %v", data, gotErr, wantErr)
		}
		if wantErr == nil && got != want {
			t.Fatalf("decodeScope(%s) = %+v, encoding/json: %+v", data, got, want)
		}
		if json.Valid(data) { // as the log's own encoding is not validated again
			known := scope{Turn: noNum, Step: noNum}
			knownErr := decodeScope(data, true, &known)
			if (knownErr == nil) != (wantErr == nil) || (knownErr != nil && knownErr.Error() != wantErr.Error()) || known != got {
				t.Fatalf("decodeScope(%s, valid) = %+v, %v; encoding/json: %+v, %v", data, known, knownErr, want, wantErr)
			}
		}

		re := rawEvent{Seq: noNum}
		if fastRawEvent(data, &re) {
			ref := rawEvent{Seq: noNum}
			if err := json.Unmarshal(data, &ref); err != nil {
				t.Fatalf("fastRawEvent accepted %s, encoding/json: %v", data, err)
			}
			if !reflect.DeepEqual(re, ref) {
				t.Fatalf("fastRawEvent(%s) = %+v, encoding/json: %+v", data, re, ref)
			}
		}
	})
}

func TestFastDecodeTakesTheFastPath(t *testing.T) {
	var sc scope
	it := fields{data: []byte(fastDecodeSeeds[0])}
	n := 0
	for _, _, ok := it.next(); ok; _, _, ok = it.next() {
		n++
	}
	if it.bad || n != 4 {
		t.Fatalf("fields: %d fields, bad %v", n, it.bad)
	}
	re := rawEvent{Seq: noNum}
	if !fastRawEvent([]byte(fastDecodeSeeds[1]), &re) || re.Type != TypeAssistantChunk || re.Seq != 3 || string(re.Data) != `{"turn":1,"step":1,"chunk":{"type":"block-start","index":0}}` {
		t.Fatalf("fastRawEvent: %+v", re)
	}
	if err := decodeScope([]byte(fastDecodeSeeds[0]), false, &sc); err != nil || sc.Turn != 1 || sc.Step != 2 || sc.CallID != "c1" {
		t.Fatalf("decodeScope: %+v %v", sc, err)
	}
	if raceEnabled {
		t.Log("allocation count not checked: the race detector allocates")
		return
	}
	chunk := []byte(`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":" word"}}`)
	allocs := testing.AllocsPerRun(100, func() {
		sc := scope{Turn: noNum, Step: noNum}
		_ = decodeScope(chunk, false, &sc)
	})
	if allocs != 0 {
		t.Fatalf("decodeScope of a chunk allocates %.0f times", allocs)
	}
}

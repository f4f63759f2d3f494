package openaichat

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// chunkSeeds are streamed chunks as the mock model and real servers send
// them, and variants encoding/json reads its own way.
var chunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1733577600,"model":"mock","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"todo_write","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"todos\":[{\"content\":\"a \\u003c b\""}}]},"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}`,
	`{"id":"c","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4},"prompt_cache_hit_tokens":5}}`,
	`{"choices":[{"index":0,"delta":{"content":"héllo","reasoning_content":"think"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":null,"reasoning_content":null,"tool_calls":null},"finish_reason":null}],"error":null}`,
	`{"error":{"message":"overloaded","code":529}}`,
	`{"choices":[null,{"index":1,"delta":null}]}`,
	`{"Choices":[{"index":0}]}`, `{"choices":[{"INDEX":2}]}`, `{"choices":[],"choices":[{"index":1}]}`,
	`{"choices":[{"index":1.5}]}`, `{"choices":[{"index":"1"}]}`, `{"choices":{}}`, `{"choices":[{"delta":{"content":7}}]}`,
	`{"choices":[{"index":99999999999999999999}]}`, `{"usage":{"prompt_tokens":"x"}}`, `{"usage":[]}`,
	"{\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}", `{"choices":[{"delta":{"content":"a\u0000b\/"}}]}`,
	`{"ſhoices":[]}`, `null`, `[]`, `{"a":1}x`, `{"choices":[{"index":-0,"delta":{"tool_calls":[]}}]}`,
	` { "choices" : [ { "index" : 3 , "x" : [ 1 , { "y" : "}" } ] } ] } `,
}

// decodeChunk reads every chunk as json.Unmarshal does: the same value,
// the same error.
func FuzzDecodeChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want wireChunk
		wantErr := json.Unmarshal(data, &want)
		got := wireChunk{Usage: &wireUsage{PromptTokens: 7}} // decodeChunk starts from nothing
		gotErr := decodeChunk(data, &got)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("decodeChunk(%s): error %v, encoding/json %v", data, gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeChunk(%s)\n got  %+v\n want %+v", data, got, want)
		}
	})
}

// A tool-call delta, most of a stream, is read without reflection: a
// fraction of encoding/json's allocations (5 against 15).
func TestDecodeChunkOfAToolCallDelta(t *testing.T) {
	data := []byte(chunkSeeds[2])
	var wc wireChunk
	if err := decodeChunk(data, &wc); err != nil {
		t.Fatal(err)
	}
	if p := (chunkParser{in: data}); !p.chunk(&wireChunk{}) {
		t.Fatal("a tool-call delta is not read by the fast path")
	}
	fast := testing.AllocsPerRun(50, func() { _ = decodeChunk(data, &wc) })
	slow := testing.AllocsPerRun(50, func() { _ = json.Unmarshal(data, &wireChunk{}) })
	t.Logf("a tool-call delta: %.0f allocations, encoding/json %.0f", fast, slow)
	if fast*2 > slow {
		t.Errorf("a tool-call delta: %.0f allocations, encoding/json's %.0f: want at most half", fast, slow)
	}
}

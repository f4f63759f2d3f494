package acp

import (
	"bytes"
	"encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/session"
)

// sdkUpdates are tool_call, tool_call_update and plan updates as the mapper
// makes them, with contents and arguments that need escaping, and a few
// the mapper never makes.
func sdkUpdates(t testing.TB) []sdk.SessionUpdate {
	t.Helper()
	hostile := []string{"plain", "", "a \"quoted\" \\ back", "<b>&amp;</b>", "é😀", "\u2028\u2029", "tab\tnew\nline\x00\x1f", string([]byte{0xff, 'x'}), " edge "}
	var out []sdk.SessionUpdate
	for _, h := range hostile {
		out = append(out,
			PlanUpdate([]session.TodoItem{{Content: h, Status: session.StatusPending}, {Content: "next", Status: session.StatusInProgress}}),
			sdk.StartToolCall(sdk.ToolCallId("call_"+h), "Update "+h, sdk.WithStartKind(sdk.ToolKindThink), sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
				sdk.WithStartRawInput(map[string]any{"todos": []any{map[string]any{"content": h, "status": "pending"}}, h: 1.5, "n": 12, "big": 1e21, "tiny": 1e-7, "neg": -0.0, "int": 123456789012345678})),
			sdk.StartToolCall(sdk.ToolCallId("c"), h, sdk.WithStartRawInput(json.RawMessage(`{"b": "\u0041\/", "a":[1.0, 2e3, -0, 10000000000000000000001, true, null, {"z":{}, "z":[]}]}`))),
			sdk.UpdateToolCall(sdk.ToolCallId("call_1"), sdk.WithUpdateStatus(sdk.ToolCallStatusFailed), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("Error: " + h))})),
		)
	}
	out = append(out, PlanUpdate(nil), sdk.SessionUpdate{Plan: &sdk.SessionUpdatePlan{}}, sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{SessionUpdate: "something else", Meta: map[string]any{"sessionUpdate": 1}}})
	return out
}

// The bridge encodes tool_call, tool_call_update and plan updates itself:
// byte for byte what the SDK writes.
func TestSDKUpdatesEncodeAsTheSDK(t *testing.T) {
	for _, u := range sdkUpdates(t) {
		want, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := encodeSDKUpdate(u)
		if !ok {
			t.Errorf("not encoded: %s", want)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("encoded\n got  %s\n want %s", got, want)
		}
	}
	if _, ok := encodeSDKUpdate(sdk.UpdateAgentMessageText("x")); ok {
		t.Error("a text chunk was encoded: the mapper encodes those itself")
	}
}

// What canonicalJSON writes is what decoding into an any and json.Marshal
// write, or it says it cannot.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"A":2,"a":3}`, `{"sessionUpdate":"x","b":[1,2.50,"\u003c"]}`, `[{"\u00e9":"\ud800"}]`, `"<&>"`, `1e400`, `-0`, `0.1e1`, `{"z":null,"y":true,"x":false}`, ` { "k" : [ ] } `, "\"\xff\"", `{"a":}`} {
		f.Add([]byte(s), "")
		f.Add([]byte(s), "plan")
	}
	f.Fuzz(func(t *testing.T, doc []byte, kind string) {
		if kind != "" && kind != "plan" {
			kind = "tool_call"
		}
		var out bytes.Buffer
		if !canonicalJSON(&out, doc, kind) {
			return
		}
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			t.Fatalf("canonicalJSON wrote %s of %s, no JSON: %v", out.Bytes(), doc, err)
		}
		if kind != "" {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("canonicalJSON wrote %s of %s, no object", out.Bytes(), doc)
			}
			m["sessionUpdate"] = kind
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("canonicalJSON(%s)\n got  %s\n want %s", doc, out.Bytes(), want)
		}
	})
}

// A plan update costs a fraction of the SDK's allocations (it encoded
// the plan, decoded it into maps and encoded those).
func TestPlanUpdateEncodesOnce(t *testing.T) {
	u := PlanUpdate([]session.TodoItem{{Content: "read the code", Status: session.StatusCompleted}, {Content: "write the fix", Status: session.StatusInProgress},
		{Content: "run the tests", Status: session.StatusPending}, {Content: "update the docs", Status: session.StatusPending}})
	sdkAllocs := testing.AllocsPerRun(50, func() { _, _ = json.Marshal(u) })
	allocs := testing.AllocsPerRun(50, func() { _, _ = encodeSDKUpdate(u) })
	t.Logf("a plan of 4 entries: %.0f allocations, the SDK's %.0f", allocs, sdkAllocs)
	if allocs*3 > sdkAllocs {
		t.Errorf("a plan of 4 entries: %.0f allocations, the SDK's %.0f: want at most a third", allocs, sdkAllocs)
	}
}

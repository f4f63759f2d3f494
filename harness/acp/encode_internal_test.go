package acp

import (
	"bytes"
	"encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// The text chunks and the notification frame are encoded without the SDK
// for speed; they must be byte for byte what the SDK writes.
func TestDirectEncodingMatchesSDK(t *testing.T) {
	texts := []string{"", "plain", " leading space", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnew\nline", "é😀", "\u2028\u2029", string([]byte{0xff, 'x'}), "\x00\x1f"}
	for _, text := range texts {
		for kind, sdkUpdate := range map[string]sdk.SessionUpdate{
			kindThought: sdk.UpdateAgentThoughtText(text),
			kindMessage: sdk.UpdateAgentMessageText(text),
			kindUser:    sdk.UpdateUserMessageText(text),
		} {
			want, err := json.Marshal(sdkUpdate)
			if err != nil {
				t.Fatal(err)
			}
			got := textChunk(kind, text).Raw
			if !bytes.Equal(got, want) {
				t.Errorf("%s %q:\n got  %s\n want %s", kind, text, got, want)
			}
			// The frame, as the SDK's connection writes a notification.
			params, err := json.Marshal(sdk.SessionNotification{SessionId: sdk.SessionId(text), Update: sdkUpdate})
			if err != nil {
				t.Fatal(err)
			}
			frame, err := json.Marshal(struct {
				JSONRPC string          `json:"jsonrpc"`
				Method  string          `json:"method"`
				Params  json.RawMessage `json:"params"`
			}{"2.0", sdk.ClientMethodSessionUpdate, params})
			if err != nil {
				t.Fatal(err)
			}
			if line := appendNotification(nil, text, got); !bytes.Equal(line, append(frame, '\n')) {
				t.Errorf("frame for session %q:\n got  %s want %s", text, line, frame)
			}
		}
	}
}

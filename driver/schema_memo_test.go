package driver

import (
	"encoding/json"
	"fmt"
	"testing"
)

// A validator remembers the messages it accepted and answers them again
// without validating, and says what a validator that remembers nothing
// says: on every saved wire line, validated twice, with its id made
// wrong and its result claimed for another method; a line it accepted as
// one method's answer is still rejected as another's, and as another
// kind of message.
func TestAcceptedMessagesAreRemembered(t *testing.T) {
	t.Parallel()
	memo, err := NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	fresh := func(m WireMsg) error {
		v, err := NewSchemaValidator()
		if err != nil {
			t.Fatal(err)
		}
		return v.validate(m, true)
	}
	var lines []string
	savedWireLines(t, func(l string) { lines = append(lines, l) })
	if len(lines) < 1000 {
		t.Fatalf("%d saved lines: the corpus moved", len(lines))
	}
	accepted := 0
	for _, l := range lines {
		m := msg(l, "session/new")
		first, again := memo.Validate(m, true), memo.Validate(m, true)
		if want := memo.validate(m, true); fmt.Sprint(first) != fmt.Sprint(want) || fmt.Sprint(again) != fmt.Sprint(want) {
			t.Fatalf("line %s: %v, then %v; without memory %v", l, first, again, want)
		}
		if first == nil {
			accepted++
		}
	}
	if accepted < 500 {
		t.Fatalf("only %d saved lines accepted", accepted)
	}
	// The same line, remembered as session/new's answer, answering a
	// prompt (whose answer needs a stopReason), and as a notification.
	newAnswer := `{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s1"}}`
	if err := memo.Validate(msg(newAnswer, "session/new"), true); err != nil {
		t.Fatalf("session/new's answer: %v", err)
	}
	as := msg(newAnswer, "session/prompt")
	if err, want := memo.Validate(as, true), fresh(as); err == nil || fmt.Sprint(err) != fmt.Sprint(want) {
		t.Errorf("session/new's answer taken as session/prompt's: %v, want %v", err, want)
	}
	note := msg(newAnswer, "session/new")
	note.Kind = KindNotification
	if err := memo.Validate(note, true); err == nil {
		t.Error("session/new's answer, said to be a notification, was accepted")
	}
}

// A session/update accepted for one session is remembered for every
// session (the schema takes any string as its sessionId): each saved
// update line validated, then the same line for other sessions, says what
// a validator that remembers nothing says of them; an ID with an escape,
// or none, is validated as written; a rejected update stays rejected for
// every session.
func TestSessionUpdatesAreRememberedForEverySession(t *testing.T) {
	t.Parallel()
	memo, err := NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	savedWireLines(t, func(l string) {
		rest, ok := afterSessionID(l)
		if !ok {
			return
		}
		n++
		first := memo.Validate(msg(l, ""), true)
		for _, id := range []string{"other-session", "x", `a\"b`, `\u0041`, "", "é", "s\tt"} {
			m := msg(updateFrame+id+rest, "")
			if got, want := memo.Validate(m, true), fresh.validate(m, true); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("line %s for session %q: %v; without memory %v (the first session's: %v)", l, id, got, want, first)
			}
		}
	})
	if n < 500 {
		t.Fatalf("only %d saved session/update lines", n)
	}
	bad := updateFrame + `s1","update":{"sessionUpdate":"plan","entries":[{"content":"a","status":"done"}]}}}`
	for range 2 {
		if err := memo.Validate(msg(bad, ""), true); err == nil {
			t.Fatal("a plan entry with status done was accepted")
		}
	}
}

// The same update of another session is not validated again (it was:
// 135 allocations a text chunk in version 1, 221 in version 2).
func TestAnotherSessionsUpdateIsNotValidatedAgain(t *testing.T) {
	for _, version := range []int{1, ACPv2} {
		v1, err := NewSchemaValidator()
		if err != nil {
			t.Fatal(err)
		}
		v, err := v1.ForVersion(version)
		if err != nil {
			t.Fatal(err)
		}
		if !v.anySessionID {
			t.Fatalf("version %d: the schema's sessionId is not taken for any string", version)
		}
		update := `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Working on it."}}}}`
		if version == ACPv2 {
			update = `","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Working on it."}}}}`
		}
		var lines []WireMsg
		for i := range 60 {
			lines = append(lines, msg(fmt.Sprint(updateFrame, "s", i, update), ""))
		}
		if err := v.Validate(lines[0], true); err != nil {
			t.Fatal(err)
		}
		i := 0
		allocs := testing.AllocsPerRun(50, func() {
			i++
			if err := v.Validate(lines[i], true); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 2 {
			t.Errorf("version %d: the same update of another session: %.0f allocations, want at most 2", version, allocs)
		}
	}
}

// Only a sessionId the schema takes as any string sets it aside.
func TestPlainStringSessionID(t *testing.T) {
	doc := func(sid, def string, extra string) any {
		var d any
		s := `{"$defs":{"SessionId":` + def + `,"N":{"type":"object","x-method":"session/update"` + extra + `,"properties":{"sessionId":` + sid + `}}}}`
		if err := json.Unmarshal([]byte(s), &d); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return d
	}
	ref, str := `{"$ref":"#/$defs/SessionId"}`, `{"type":"string","description":"d"}`
	for _, c := range []struct {
		sid, def, extra string
		want            bool
	}{
		{ref, str, "", true},
		{`{"allOf":[` + ref + `],"description":"x"}`, str, "", true},
		{`{"type":"string"}`, str, "", false},
		{ref, `{"type":"string","pattern":"^s"}`, "", false},
		{ref, `{"type":"string","maxLength":3}`, "", false},
		{ref, `{"type":["string","null"]}`, "", false},
		{`{"allOf":[` + ref + `,{"minLength":2}]}`, str, "", false},
		{`{"allOf":[` + ref + `],"enum":["a"]}`, str, "", false},
		{ref, str, `,"patternProperties":{"^s":{"maxLength":1}}`, false},
		{ref, str, `,"allOf":[{"properties":{"sessionId":{"const":"a"}}}]`, false},
		{`{"$ref":"#/$defs/Other"}`, str, "", false},
	} {
		if got := plainStringSessionID(doc(c.sid, c.def, c.extra), "N"); got != c.want {
			t.Errorf("sessionId %s, SessionId %s, %s: %v, want %v", c.sid, c.def, c.extra, got, c.want)
		}
	}
}

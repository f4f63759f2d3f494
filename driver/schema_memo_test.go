package driver

import (
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

package mockmodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
)

func postBody(t *testing.T, srv *Server, path string, body []byte) {
	t.Helper()
	res, err := srv.Client().Post(srv.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

// A big request body is journaled as a prefix, its size and its hash; a
// big message text keeps its beginning and is listed as capped.
func TestJournalCapsBigBodies(t *testing.T) {
	s, err := ParseScript([]byte("- text: ok\n"), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(s)
	defer srv.Close()
	big := strings.Repeat("a", 3<<20)
	body, _ := json.Marshal(map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": big}}})
	postBody(t, srv, "/v1/chat/completions", body)
	control := bytes.Repeat([]byte{1}, 2<<20) // not JSON: 6 bytes of escape each if kept
	postBody(t, srv, "/v1/chat/completions", control)

	es := srv.Journal().Entries()
	if len(es) != 2 {
		t.Fatalf("%d entries", len(es))
	}
	for i, b := range [][]byte{body, control} {
		e := es[i]
		sum := sha256.Sum256(b)
		if !e.RawCapped || e.RawBytes != len(b) || e.RawSHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("entry %d: capped %v, %d bytes, sha256 %s; want capped, %d bytes, %x", i, e.RawCapped, e.RawBytes, e.RawSHA256, len(b), sum)
		}
		if len(e.Raw) > 6*JournalBodyPrefix+2 || !json.Valid(e.Raw) {
			t.Errorf("entry %d: Raw of %d bytes (valid JSON %v), want a JSON string of the %d-byte prefix", i, len(e.Raw), json.Valid(e.Raw), JournalBodyPrefix)
		}
	}
	if got := es[0].Messages[0].Text(); len(got) != MaxJournalText {
		t.Errorf("the user text kept %d bytes, want %d", len(got), MaxJournalText)
	}
	if len(es[0].Capped) != 1 || !strings.Contains(es[0].Capped[0], "messages[0].content[0].text: 3145728 bytes") {
		t.Errorf("capped %q, want the user text named with its size", es[0].Capped)
	}
}

// The journal is a ring: beyond JournalRingEntries (or JournalRingBytes)
// the oldest entries go, the indexes go on.
func TestJournalRing(t *testing.T) {
	j := NewJournal()
	n := JournalRingEntries + 10
	for i := 0; i < n; i++ {
		j.add(JournalEntry{Status: 200})
	}
	es := j.Entries()
	if j.Len() != n || j.Dropped() != 10 || len(es) != JournalRingEntries || es[0].Index != 10 || es[len(es)-1].Index != n-1 {
		t.Errorf("len %d, dropped %d, kept %d (indexes %d..%d)", j.Len(), j.Dropped(), len(es), es[0].Index, es[len(es)-1].Index)
	}

	j = NewJournal()
	text := strings.Repeat("b", MaxJournalText)
	for i := 0; i < 2*JournalRingBytes/MaxJournalText; i++ {
		j.add(JournalEntry{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: text}}}}})
	}
	kept := 0
	for _, e := range j.Entries() {
		kept += entrySize(e)
	}
	if kept > JournalRingBytes || j.Dropped() == 0 {
		t.Errorf("kept %d bytes (cap %d), dropped %d", kept, JournalRingBytes, j.Dropped())
	}
}

// Errors returns copies of the refused entries, in arrival order, and
// copies nothing else: the runner asks after every case, where most
// entries are answers with their whole conversation.
func TestJournalErrorsCopiesOnlyThem(t *testing.T) {
	var j Journal
	msgs := []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "hi"}}}}
	for i := range 50 {
		e := JournalEntry{Messages: msgs, Raw: json.RawMessage(`{"model":"m"}`)}
		if i == 10 || i == 40 {
			e.Error = "refused " + string(rune('a'+i%26))
		}
		j.add(e)
	}
	errs := j.Errors()
	if len(errs) != 2 || errs[0].Index != 10 || errs[1].Index != 40 || errs[0].Error != "refused k" {
		t.Fatalf("errors %+v", errs)
	}
	errs[0].Messages[0].Content[0].Text = "changed"
	if j.Errors()[0].Messages[0].Content[0].Text != "hi" {
		t.Error("an error entry returned is the journal's own, not a copy")
	}
	// Two copies of two entries (a slice each for the raw body, the
	// messages and their parts) and the result: not fifty.
	if n := testing.AllocsPerRun(10, func() { j.Errors() }); n > 10 {
		t.Errorf("Errors: %.0f allocations for 2 refused entries of 50", n)
	}
}

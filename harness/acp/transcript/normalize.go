package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Normalizer rewrites raw transcripts into the golden format of DESIGN.md:
// one JSON object per line, keys in wire order, with every session id
// replaced by {{sessionId}} (a second distinct one by {{sessionId2}}, …),
// each cwd by {{cwd}}, JSON-RPC ids renumbered from 1 per segment in order of
// first appearance (null stays null), and every "time"/"createdAt" number
// set to 0. Session ids are learnt from the "sessionId" fields of the
// transcript itself (and from SessionIDs).
type Normalizer struct {
	// Cwds are replaced by {{cwd}} wherever they occur in a string.
	Cwds []string
	// SessionIDs are known session ids, replaced in this order first.
	SessionIDs []string
}

// Normalize rewrites the segments (one per connection: ids restart at 1 in
// each) and joins them, one object per line, ending with a newline.
func (n Normalizer) Normalize(segments ...[][]byte) ([]byte, error) {
	ids := map[string]string{}
	order := 0
	learn := func(id string) {
		if id == "" {
			return
		}
		if _, ok := ids[id]; ok {
			return
		}
		order++
		if order == 1 {
			ids[id] = "{{sessionId}}"
		} else {
			ids[id] = fmt.Sprintf("{{sessionId%d}}", order)
		}
	}
	for _, id := range n.SessionIDs {
		learn(id)
	}
	for _, seg := range segments {
		for _, line := range seg {
			for _, id := range sessionIDsIn(line) {
				learn(id)
			}
		}
	}
	var repl []string
	// Longer strings first so that no replacement eats part of another.
	type pair struct{ from, to string }
	var pairs []pair
	for id, to := range ids {
		pairs = append(pairs, pair{id, to})
	}
	for _, c := range n.Cwds {
		if c != "" {
			pairs = append(pairs, pair{c, "{{cwd}}"})
		}
	}
	for i := 1; i < len(pairs); i++ {
		for j := i; j > 0 && (len(pairs[j].from) > len(pairs[j-1].from) || len(pairs[j].from) == len(pairs[j-1].from) && pairs[j].from < pairs[j-1].from); j-- {
			pairs[j], pairs[j-1] = pairs[j-1], pairs[j]
		}
	}
	for _, p := range pairs {
		repl = append(repl, p.from, p.to)
	}
	r := strings.NewReplacer(repl...)

	var out bytes.Buffer
	for si, seg := range segments {
		rpcIDs := map[string]int{}
		for li, line := range seg {
			b, err := rewriteLine(line, r, rpcIDs)
			if err != nil {
				return nil, fmt.Errorf("segment %d line %d: %w", si+1, li+1, err)
			}
			out.Write(b)
			out.WriteByte('\n')
		}
	}
	return out.Bytes(), nil
}

func sessionIDsIn(line []byte) []string {
	var out []string
	dec := json.NewDecoder(bytes.NewReader(line))
	wantValue := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		if s, ok := tok.(string); ok {
			if wantValue {
				out = append(out, s)
				wantValue = false
				continue
			}
			wantValue = s == "sessionId" && dec.More()
			continue
		}
		wantValue = false
	}
}

// rewriteLine re-encodes one JSON value token by token, keeping key order,
// and applies the normalisation.
func rewriteLine(line []byte, r *strings.Replacer, rpcIDs map[string]int) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	w := &lineWriter{r: r, rpcIDs: rpcIDs}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		if !w.key(tok) {
			w.value(tok)
		}
	}
	return w.out.Bytes(), nil
}

// lineWriter writes the tokens of one JSON value (rewriteLine).
type lineWriter struct {
	r      *strings.Replacer
	rpcIDs map[string]int
	out    bytes.Buffer
	stack  []*frame
}

// frame is an object or an array being written.
type frame struct {
	object    bool
	n         int    // values (arrays) or members (objects) written
	expectKey bool   // objects: the next string is a key
	key       string // objects: the current key
}

func (w *lineWriter) writeString(s string) {
	b, _ := json.Marshal(s)
	w.out.Write(b)
}

// key writes tok when it is an object key, and reports whether it was.
func (w *lineWriter) key(tok json.Token) bool {
	if len(w.stack) == 0 {
		return false
	}
	f := w.stack[len(w.stack)-1]
	s, ok := tok.(string)
	if !ok || !f.object || !f.expectKey {
		return false
	}
	if f.n > 0 {
		w.out.WriteByte(',')
	}
	f.n++
	f.key = s
	f.expectKey = false
	w.writeString(s)
	w.out.WriteByte(':')
	return true
}

// beforeValue writes the separator a value needs and reports its key.
func (w *lineWriter) beforeValue() string {
	if len(w.stack) == 0 {
		return ""
	}
	f := w.stack[len(w.stack)-1]
	if f.object {
		f.expectKey = true
		return f.key
	}
	if f.n > 0 {
		w.out.WriteByte(',')
	}
	f.n++
	return ""
}

// value writes a value token (or a delimiter), normalised: a top-level
// "id" renumbered, strings with the replacements, times zeroed.
func (w *lineWriter) value(tok json.Token) {
	depth := len(w.stack)
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{', '[':
			w.beforeValue()
			w.out.WriteByte(byte(t))
			w.stack = append(w.stack, &frame{object: t == '{', expectKey: t == '{'})
		case '}', ']':
			w.out.WriteByte(byte(t))
			w.stack = w.stack[:len(w.stack)-1]
		}
	case string:
		key := w.beforeValue()
		if depth == 1 && key == "id" {
			w.out.WriteString(strconv.Quote(strconv.Itoa(renumber(w.rpcIDs, strconv.Quote(t)))))
			return
		}
		w.writeString(w.r.Replace(t))
	case json.Number:
		key := w.beforeValue()
		switch {
		case depth == 1 && key == "id":
			w.out.WriteString(strconv.Itoa(renumber(w.rpcIDs, t.String())))
		case key == "time" || key == "createdAt":
			w.out.WriteByte('0')
		default:
			w.out.WriteString(t.String())
		}
	case bool:
		w.beforeValue()
		w.out.WriteString(strconv.FormatBool(t))
	case nil:
		w.beforeValue()
		w.out.WriteString("null")
	}
}

func renumber(ids map[string]int, key string) int {
	if n, ok := ids[key]; ok {
		return n
	}
	n := len(ids) + 1
	ids[key] = n
	return n
}

// ReadLines splits r into its non-empty lines (for files in the transcript
// format).
func ReadLines(r io.Reader) ([][]byte, error) {
	var out [][]byte
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			out = append(out, append([]byte(nil), line...))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read lines: %w", err)
	}
	return out, nil
}

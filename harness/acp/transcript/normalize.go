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
	var out bytes.Buffer
	type frame struct {
		object    bool
		n         int    // values (arrays) or members (objects) written
		expectKey bool   // objects: the next string is a key
		key       string // objects: the current key
	}
	var stack []*frame
	writeString := func(s string) {
		b, _ := json.Marshal(s)
		out.Write(b)
	}
	// beforeValue writes the separator a value needs and reports its key.
	beforeValue := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.object {
			f.expectKey = true
			return f.key
		}
		if f.n > 0 {
			out.WriteByte(',')
		}
		f.n++
		return ""
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		// An object key?
		if len(stack) > 0 {
			f := stack[len(stack)-1]
			if s, ok := tok.(string); ok && f.object && f.expectKey {
				if f.n > 0 {
					out.WriteByte(',')
				}
				f.n++
				f.key = s
				f.expectKey = false
				writeString(s)
				out.WriteByte(':')
				continue
			}
		}
		depth := len(stack)
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				beforeValue()
				out.WriteByte(byte(t))
				stack = append(stack, &frame{object: t == '{', expectKey: t == '{'})
			case '}', ']':
				out.WriteByte(byte(t))
				stack = stack[:len(stack)-1]
			}
		case string:
			key := beforeValue()
			if depth == 1 && key == "id" {
				out.WriteString(strconv.Quote(strconv.Itoa(renumber(rpcIDs, strconv.Quote(t)))))
				continue
			}
			writeString(r.Replace(t))
		case json.Number:
			key := beforeValue()
			switch {
			case depth == 1 && key == "id":
				out.WriteString(strconv.Itoa(renumber(rpcIDs, t.String())))
			case key == "time" || key == "createdAt":
				out.WriteByte('0')
			default:
				out.WriteString(t.String())
			}
		case bool:
			beforeValue()
			out.WriteString(strconv.FormatBool(t))
		case nil:
			beforeValue()
			out.WriteString("null")
		}
	}
	return out.Bytes(), nil
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

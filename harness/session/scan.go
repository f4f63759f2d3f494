package session

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// A fast path for the two hot decodes of a session log, the event line
// (parseLine) and the turn/step scope of its data (Checker.Check): a million
// events means two million encoding/json decodes otherwise. Both first check
// the input with json.Valid (which allocates nothing), then walk the top-level
// fields of the object by hand. Anything out of the ordinary (escapes or
// non-ASCII bytes in a key, a key that differs from ours only in case,
// escapes or invalid UTF-8 in a string we keep, a number that is not a plain
// integer, a null) makes the fast path give up, and the caller decodes with
// encoding/json as before, so results and error messages are the same.
// FuzzFastDecode checks that equivalence.

// fields iterates over the top-level fields of a JSON object that is known
// to be valid. After next returns false, bad reports whether the walk gave up
// (data is not an object, or a key has escapes or non-ASCII bytes) rather
// than reached the end.
type fields struct {
	data    []byte
	i       int
	started bool
	bad     bool
}

// next returns the raw key (without quotes) and raw value of the next field.
func (f *fields) next() (key, val []byte, ok bool) {
	d := f.data
	i := skipWS(d, f.i)
	if !f.started {
		f.started = true
		if i >= len(d) || d[i] != '{' {
			f.bad = true
			return nil, nil, false
		}
		i = skipWS(d, i+1)
		if i < len(d) && d[i] == '}' {
			return nil, nil, false
		}
	} else {
		if i >= len(d) {
			f.bad = true
			return nil, nil, false
		}
		switch d[i] {
		case ',':
			i = skipWS(d, i+1)
		case '}':
			return nil, nil, false
		default:
			f.bad = true
			return nil, nil, false
		}
	}
	if i >= len(d) || d[i] != '"' {
		f.bad = true
		return nil, nil, false
	}
	end := stringEnd(d, i)
	key = d[i+1 : end-1]
	if bytes.IndexByte(key, '\\') >= 0 || !ascii(key) {
		f.bad = true
		return nil, nil, false
	}
	i = skipWS(d, end)
	if i >= len(d) || d[i] != ':' {
		f.bad = true
		return nil, nil, false
	}
	i = skipWS(d, i+1)
	vend := valueEnd(d, i)
	f.i = vend
	return key, d[i:vend], true
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the (valid) JSON value at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// plainInt parses an optionally negative decimal integer without exponent,
// fraction or overflow risk (at most 18 digits).
func plainInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 18 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// plainString returns the contents of a JSON string without escapes.
func plainString(b []byte) ([]byte, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return nil, false
	}
	s := b[1 : len(b)-1]
	// encoding/json replaces invalid UTF-8 with U+FFFD: leave those to it.
	if bytes.IndexByte(s, '\\') >= 0 || (!ascii(s) && !utf8.Valid(s)) {
		return nil, false
	}
	return s, true
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// foldedOnly reports a key equal to want only when case is ignored: the key
// encoding/json would match (it folds exactly as bytes.EqualFold) but the
// fast path would not.
func foldedOnly(key []byte, want string) bool {
	return string(key) != want && bytes.EqualFold(key, []byte(want))
}

// decodeScope fills sc from data (an event's data), as json.Unmarshal would;
// valid says data is known to be valid JSON.
func decodeScope(data []byte, valid bool, sc *scope) error {
	if (valid || json.Valid(data)) && fastScope(data, sc) {
		return nil
	}
	// A copy, so that sc itself does not escape (and allocate) on the fast path.
	slow := new(scope)
	*slow = *sc
	err := json.Unmarshal(data, slow)
	*sc = *slow
	return err
}

func fastScope(data []byte, sc *scope) bool {
	fast := *sc
	it := fields{data: data}
	for {
		key, val, ok := it.next()
		if !ok {
			break
		}
		switch string(key) {
		case "turn", "step":
			n, ok := plainInt(val)
			if !ok || n != int64(int(n)) {
				return false
			}
			if key[0] == 't' {
				fast.Turn = int(n)
			} else {
				fast.Step = int(n)
			}
		case "callId":
			s, ok := plainString(val)
			if !ok {
				return false
			}
			fast.CallID = string(s)
		default:
			if foldedOnly(key, "turn") || foldedOnly(key, "step") || foldedOnly(key, "callId") {
				return false
			}
		}
	}
	if it.bad {
		return false
	}
	*sc = fast
	return true
}

// eventKeys are the fields of an event line.
var eventKeys = [...]string{"type", "surfaceOp", "seq", "time", "data", "sourceEventSeqs"}

// fastRawEvent is the fast path of parseLine's decode: it returns false when
// encoding/json must decide.
func fastRawEvent(body []byte, re *rawEvent) bool {
	if !json.Valid(body) {
		return false
	}
	fast := *re
	it := fields{data: body}
	for {
		key, val, ok := it.next()
		if !ok {
			break
		}
		switch string(key) {
		case "type", "surfaceOp":
			s, ok := plainString(val)
			if !ok {
				return false
			}
			name := internedName(interned[string(s)])
			if name == "" {
				name = internedName(s)
			}
			if key[0] == 't' {
				fast.Type = name
			} else {
				fast.SurfaceOp = name
			}
		case "seq":
			n, ok := plainInt(val)
			if !ok || n != int64(int(n)) {
				return false
			}
			fast.Seq = int(n)
		case "time":
			n, ok := plainInt(val)
			if !ok {
				return false
			}
			fast.Time = n
		case "data":
			if string(val) == "null" {
				return false
			}
			fast.Data = append(json.RawMessage(nil), val...)
		case "sourceEventSeqs":
			fast.SourceEventSeqs = nil
			if string(val) == "null" || json.Unmarshal(val, &fast.SourceEventSeqs) != nil {
				return false
			}
		default:
			for _, k := range eventKeys {
				if foldedOnly(key, k) {
					return false
				}
			}
		}
	}
	if it.bad {
		return false
	}
	*re = fast
	return true
}

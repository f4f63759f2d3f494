package session

import (
	"bytes"
	"strconv"
)

// appendEventLine appends e as encodeJSON writes an Event, its Data taken
// as it is: the caller knows it is valid, compact JSON (what encodeJSON
// would write of it). It reports false, having written part of the line,
// when e has a string the encoder would escape (a quote, a backslash, a
// control character or anything outside ASCII), or no Data: the caller
// then encodes the event.
func appendEventLine(buf *bytes.Buffer, e Event) bool {
	if len(e.Data) == 0 || !plainASCII(e.Type) || !plainASCII(e.SurfaceOp) {
		return false
	}
	var num [20]byte
	buf.WriteString(`{"type":"`)
	buf.WriteString(e.Type)
	buf.WriteString(`","seq":`)
	buf.Write(strconv.AppendInt(num[:0], int64(e.Seq), 10))
	buf.WriteString(`,"time":`)
	buf.Write(strconv.AppendInt(num[:0], e.Time, 10))
	buf.WriteString(`,"data":`)
	buf.Write(e.Data)
	if len(e.SourceEventSeqs) > 0 {
		buf.WriteString(`,"sourceEventSeqs":[`)
		for i, n := range e.SourceEventSeqs {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(strconv.AppendInt(num[:0], int64(n), 10))
		}
		buf.WriteByte(']')
	}
	if e.SurfaceOp != "" {
		buf.WriteString(`,"surfaceOp":"`)
		buf.WriteString(e.SurfaceOp)
		buf.WriteByte('"')
	}
	buf.WriteByte('}')
	return true
}

// plainASCII reports whether encodeJSON writes s between its quotes as it
// is (it escapes neither <, > nor &).
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

package jsonx

import (
	"bytes"
	"encoding/json"
)

// Write appends the compact JSON of v to buf. On error nothing is written.
func Write(buf *bytes.Buffer, v any) error {
	return encode(buf, v, "")
}

// Marshal returns the compact JSON of v.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := encode(&buf, v, ""); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// MarshalIndent returns the JSON of v indented by two spaces.
func MarshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := encode(&buf, v, "  "); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encode appends the JSON of v to buf, indented by indent when it is not
// empty, without json.Encoder's trailing newline.
func encode(buf *bytes.Buffer, v any, indent string) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}

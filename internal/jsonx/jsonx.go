package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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

// Decode decodes exactly one JSON value from b, numbers kept as written
// (json.Number); anything after the value is an error.
func Decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

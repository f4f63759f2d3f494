package jsonx

import (
	"bytes"
	"testing"
)

func TestNoHTMLEscapingNoNewline(t *testing.T) {
	v := map[string]any{"b": "a < b & c", "a": []int{1, 2}}
	got, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":[1,2],"b":"a < b & c"}`; string(got) != want {
		t.Fatalf("Marshal = %s, want %s", got, want)
	}
	got, err = MarshalIndent(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": \"a < b & c\"\n}"; string(got) != want {
		t.Fatalf("MarshalIndent = %q, want %q", got, want)
	}
}

func TestWriteAppendsAndWritesNothingOnError(t *testing.T) {
	buf := bytes.NewBufferString("x ")
	if err := Write(buf, "<>"); err != nil {
		t.Fatal(err)
	}
	if err := Write(buf, func() {}); err == nil {
		t.Fatal("a func encoded")
	}
	if got := buf.String(); got != `x "<>"` {
		t.Fatalf("buffer = %q", got)
	}
}

func TestDecodeKeepsNumbersAndRefusesTrailingData(t *testing.T) {
	v, err := Decode([]byte(`{"n": 1.50}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Marshal(v); string(got) != `{"n":1.50}` {
		t.Errorf("round trip = %s", got)
	}
	if _, err := Decode([]byte(`{} {}`)); err == nil {
		t.Error("trailing data accepted")
	}
}

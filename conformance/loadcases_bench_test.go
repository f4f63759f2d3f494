package conformance_test

import (
	"testing"

	"github.com/todoharness/todoharness/conformance"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
)

// BenchmarkLoadCases is the built-in catalogue's parse, a serial part of
// every conform run before its first case starts.
func BenchmarkLoadCases(b *testing.B) {
	for b.Loop() {
		if _, err := conformance.LoadCases(conformancefixtures.FS, "."); err != nil {
			b.Fatal(err)
		}
	}
}

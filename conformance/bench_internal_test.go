package conformance

import (
	"testing"

	"github.com/todoharness/todoharness/driver"
)

// BenchmarkSchemaValidator measures compiling the ACP schema and validating
// a plan notification with it.
func BenchmarkSchemaValidator(b *testing.B) {
	line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"medium","status":"pending"}]}}}`
	b.Run("compile", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := driver.NewSchemaValidator(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("validate", func(b *testing.B) {
		v, err := driver.NewSchemaValidator()
		if err != nil {
			b.Fatal(err)
		}
		m := msg(line, "")
		for i := 0; i < b.N; i++ {
			if err := v.Validate(m, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}

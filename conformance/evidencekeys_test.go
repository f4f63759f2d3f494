package conformance

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestEveryEvidenceFieldHasAPlaceInItsKeys: each JSON key an Evidence (and
// the driver's record it embeds) can write has its place in evidenceKeys,
// else MarshalJSON fails on the first evidence that sets it.
func TestEveryEvidenceFieldHasAPlaceInItsKeys(t *testing.T) {
	keys := strings.Fields(evidenceKeys)
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		for f := range ty.Fields() {
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if f.Anonymous && tag == "" {
				walk(f.Type)
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if !slices.Contains(keys, name) {
				t.Errorf("Evidence field %s writes key %q, which has no place in evidenceKeys", f.Name, name)
			}
		}
	}
	walk(reflect.TypeFor[Evidence]())
}

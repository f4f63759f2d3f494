package testutil

import "flag"

// flagLookup returns the value of a registered command-line flag ("" when
// there is none or flags are not parsed yet).
func flagLookup(name string) string {
	if !flag.Parsed() {
		return ""
	}
	f := flag.Lookup(name)
	if f == nil {
		return ""
	}
	return f.Value.String()
}

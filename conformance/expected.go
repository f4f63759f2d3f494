package conformance

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/todoharness/todoharness/internal/yamlx"
)

// ExpectedFailure is one entry of an expected-failures baseline: a check
// known to fail for this agent, and why. A listed failure does not fail the
// run; a listed check that passes is stale and fails the run (remove it).
type ExpectedFailure struct {
	ID     string `yaml:"id" json:"id"`
	Reason string `yaml:"reason" json:"reason"`
}

// ReadExpectedFailures reads a YAML baseline: a list of {id, reason}.
func ReadExpectedFailures(path string) ([]ExpectedFailure, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("conformance: expected failures: %w", err)
	}
	return ParseExpectedFailures(data, path)
}

// ParseExpectedFailures parses a YAML baseline; name is used in errors.
func ParseExpectedFailures(data []byte, name string) ([]ExpectedFailure, error) {
	var out []ExpectedFailure
	if err := yamlx.Unmarshal(data, &out, true); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("conformance: %s: want a list of {id, reason}: %w", name, err)
	}
	for i, e := range out {
		if e.ID == "" {
			return nil, fmt.Errorf("conformance: %s: entry %d has no id", name, i+1)
		}
		if e.Reason == "" {
			return nil, fmt.Errorf("conformance: %s: %s: say why it is expected to fail (reason)", name, e.ID)
		}
	}
	return out, nil
}

// validateExpected rejects unknown or repeated IDs (a typo would silently
// hide nothing and never go stale).
func validateExpected(es []ExpectedFailure, cat []Check) error {
	idx := catalogueIndex(cat)
	seen := map[string]bool{}
	for _, e := range es {
		if _, ok := idx[e.ID]; !ok {
			return fmt.Errorf("conformance: expected failures: unknown check %q", e.ID)
		}
		if seen[e.ID] {
			return fmt.Errorf("conformance: expected failures: %s listed twice", e.ID)
		}
		seen[e.ID] = true
	}
	return nil
}

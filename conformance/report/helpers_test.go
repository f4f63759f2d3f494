package report

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
)

// evidenceDir holds the captured runs the conformance tests judge.
const evidenceDir = "../testdata/evidence"

var (
	savedRuns     sync.Map // name -> []*conformance.Evidence
	validatorOnce sync.Once
	validatorVal  *driver.SchemaValidator
	validatorErr  error
)

// savedRun is the captured run named, read once.
func savedRun(t *testing.T, name string) []*conformance.Evidence {
	t.Helper()
	if evs, ok := savedRuns.Load(name); ok {
		return evs.([]*conformance.Evidence)
	}
	evs, err := conformance.ReadEvidenceArchive(filepath.Join(evidenceDir, name+".jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	savedRuns.Store(name, evs)
	return evs
}

// sharedValidator is one schema validator for the package's tests.
func sharedValidator(t *testing.T) *driver.SchemaValidator {
	t.Helper()
	validatorOnce.Do(func() { validatorVal, validatorErr = driver.NewSchemaValidator() })
	if validatorErr != nil {
		t.Fatal(validatorErr)
	}
	return validatorVal
}

// capturedChecks is the catalogue the saved runs were captured with (see
// the conformance package's own capturedChecks).
func capturedChecks(t *testing.T) []conformance.Check {
	t.Helper()
	var cases []*conformance.Case
	for _, ev := range savedRun(t, "reference") {
		cases = append(cases, ev.Case)
	}
	return conformance.FedChecks(conformance.Catalogue(), cases)
}

// judgeSaved judges a captured run (only the cases named, when any).
func judgeSaved(t *testing.T, run string, strict bool, es []conformance.ExpectedFailure, only ...string) *conformance.Report {
	t.Helper()
	var evs []*conformance.Evidence
	for _, ev := range savedRun(t, run) {
		if len(only) == 0 || slices.Contains(only, ev.Case.ID) {
			evs = append(evs, ev)
		}
	}
	rep, err := conformance.Judge(evs, conformance.JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t), Strict: strict, Expected: es})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

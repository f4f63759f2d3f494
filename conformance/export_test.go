package conformance

import (
	"bytes"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
)

// The internal tests' helpers, for the external tests of the summary and
// the transcripts (report_text_test.go, package conformance_test: they
// use package conformance/report, which imports conformance).

// Captured runs and their judging (evidence_test.go, verdicts_test.go,
// ci_test.go).
func SavedRun(t *testing.T, name string) []*Evidence       { return savedRun(t, name) }
func CapturedChecks(t *testing.T) []Check                  { return capturedChecks(t) }
func SharedValidator(t *testing.T) *driver.SchemaValidator { return sharedValidator(t) }
func JudgeSaved(t *testing.T, run string, es []ExpectedFailure, only ...string) *Report {
	return judgeSaved(t, run, es, only...)
}
func JudgeStrict(t *testing.T, run string, strict bool, es ...ExpectedFailure) *Report {
	return judgeStrict(t, run, strict, es...)
}
func Render(t *testing.T, write func(*bytes.Buffer) error) string { return render(t, write) }

// Runs of the fake and in-process agents (runner_test.go,
// fakeagent_test.go, inprocess_test.go, hardening_test.go).
func RunFake(t *testing.T, mode string, mod func(*Config)) *Report { return runFake(t, mode, mod) }
func FakeTarget(t *testing.T, mode string) driver.Target           { return fakeTarget(t, mode) }
func OneCase(t *testing.T, id string) []*Case                      { return oneCase(t, id) }
func BuiltinCases(t *testing.T) []*Case                            { return builtinCases(t) }
func ShellTarget(script string) driver.Target                      { return shellTarget(script) }
func HangCheck(t *testing.T, d time.Duration, what string, f func()) {
	hangCheck(t, d, what, f)
}
func RunStub(t *testing.T, tg driver.Target, c *Case, mod func(*Config)) *Report {
	return runStub(t, tg, c, mod)
}
func StubTarget(f driver.InProcessFunc) driver.Target { return stubTarget(f) }
func StubServe(p driver.ProcIO, onPrompt func())      { stubServe(p, onPrompt) }
func StubCase(prompt bool) *Case                      { return stubCase(prompt) }
func DumpFailures(t *testing.T, rep *Report)          { dumpFailures(t, rep) }
func NewCaseResult(id, title string, ev *Evidence) *CaseResult {
	return &CaseResult{ID: id, Title: title, ev: ev}
}

const (
	HangLimit      = hangLimit
	FakeCounterEnv = fakeCounterEnv
	SrcREADME      = srcREADME
)

package conformance

import (
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/safefile"
	"github.com/todoharness/todoharness/internal/termtext"
	"github.com/todoharness/todoharness/internal/yamlx"
)

// ExpectedFailure is one entry of an expected-failures baseline: failures
// of a check known for this agent, and why. It covers only the failures it
// matches: of check ID, in one of Cases (IDs or globs; empty: any case),
// whose reason contains Match (a substring, or a regular expression
// written /like this/; empty: any reason). Each failure of a check in a
// case is matched on its own (one entry may match several): a check is
// XFAIL in a case only when every failure there is matched; any other
// failure of the same check fails the run. An
// entry that matches no failure while the check passed on a case it covers
// is stale and fails the run (remove it); one about checks or cases the
// run did not judge (narrowed with --case or --check) is left alone.
type ExpectedFailure struct {
	ID     string   `yaml:"id" json:"id"`
	Reason string   `yaml:"reason" json:"reason"`
	Cases  []string `yaml:"cases,omitempty" json:"cases,omitempty"`
	Match  string   `yaml:"match,omitempty" json:"match,omitempty"`
	// Cut says, for each of its reason and match that YAML ended at " #"
	// (an unquoted "tracked in #123" reads as "tracked in" and a
	// comment), what was cut and how to quote it; ParseExpectedFailures
	// sets it, the command line reports it.
	Cut []string `yaml:"-" json:"-"`
}

// String names the entry in messages: "TW-LOAD-1 (cases load-replay; match "x")".
func (e ExpectedFailure) String() string {
	var parts []string
	if len(e.Cases) > 0 {
		parts = append(parts, "cases "+strings.Join(e.Cases, ", "))
	}
	if e.Match != "" {
		parts = append(parts, fmt.Sprintf("match %q", e.Match))
	}
	if len(parts) == 0 {
		return e.ID
	}
	return e.ID + " (" + strings.Join(parts, "; ") + ")"
}

// matcher compiles Match: a /regexp/ or a substring.
func (e ExpectedFailure) matcher() (func(string) bool, error) {
	m := e.Match
	if len(m) >= 2 && strings.HasPrefix(m, "/") && strings.HasSuffix(m, "/") {
		re, err := regexp.Compile(m[1 : len(m)-1])
		if err != nil {
			return nil, fmt.Errorf("%s: match %s: %w", e.ID, m, err)
		}
		return re.MatchString, nil
	}
	return func(s string) bool { return strings.Contains(s, m) }, nil
}

// matches reports whether the entry covers check id's failure on caseID
// with reason.
func (e ExpectedFailure) matches(id, caseID, reason string) bool {
	if e.ID != id || !e.matchesCase(caseID) {
		return false
	}
	match, err := e.matcher()
	return err == nil && match(reason)
}

// matchesCase reports whether the entry covers case caseID.
func (e ExpectedFailure) matchesCase(caseID string) bool {
	if len(e.Cases) == 0 {
		return true
	}
	for _, c := range e.Cases {
		if m, _ := path.Match(c, caseID); m || c == caseID {
			return true
		}
	}
	return false
}

// maxBaselineBytes is the largest baseline ReadExpectedFailures reads.
const maxBaselineBytes = 16 << 20

// ReadExpectedFailures reads a YAML baseline: a list of {id, reason,
// cases?, match?}. The file must be a regular file (never a FIFO or a
// device) of at most 16 MiB.
func ReadExpectedFailures(path string) ([]ExpectedFailure, error) {
	data, err := safefile.ReadRegular(path, maxBaselineBytes)
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
		return nil, fmt.Errorf("conformance: %s: want a list of {id, reason, cases, match}: %w", name, err)
	}
	for i, cut := range commentCuts(data) {
		if i < len(out) {
			out[i].Cut = cut
		}
	}
	for i, e := range out {
		if e.ID == "" {
			return nil, fmt.Errorf("conformance: %s: entry %d has no id", name, i+1)
		}
		if e.Reason == "" {
			return nil, fmt.Errorf("conformance: %s: %s: say why it is expected to fail (reason)", name, e.ID)
		}
		if _, err := e.matcher(); err != nil {
			return nil, fmt.Errorf("conformance: %s: entry %d: %w", name, i+1, err)
		}
		if e.Cases != nil && len(e.Cases) == 0 {
			return nil, fmt.Errorf("conformance: %s: entry %d: %s: field \"cases\" is an empty list, which names no case: leave the key out for every case", name, i+1, e.ID)
		}
		for _, c := range e.Cases {
			if _, err := path.Match(c, ""); err != nil {
				return nil, fmt.Errorf("conformance: %s: entry %d: %s: case pattern %q: %w", name, i+1, e.ID, c, err)
			}
		}
	}
	return out, nil
}

// commentCuts finds, by entry, the reasons and matches YAML cut at a
// " #": an unquoted value followed on its line by what YAML reads as a
// comment. It says where, what was kept and what was cut.
func commentCuts(data []byte) map[int][]string {
	doc, err := yamlx.Parse(data)
	if err != nil {
		return nil
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.SequenceNode {
		return nil
	}
	out := map[int][]string{}
	for i, m := range doc.Content {
		if m.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(m.Content); j += 2 {
			k, v := m.Content[j], m.Content[j+1]
			if (k.Value != "reason" && k.Value != "match") || v.Kind != yaml.ScalarNode || v.Style != 0 || v.LineComment == "" {
				continue
			}
			out[i] = append(out[i], fmt.Sprintf("line %d: %s %s: YAML reads the rest of the line, %s, as a comment; if it belongs to the %s, quote it: %s: %s",
				v.Line, k.Value, strconv.Quote(v.Value), strconv.Quote(v.LineComment), k.Value, k.Value, strconv.Quote(v.Value+" "+v.LineComment)))
		}
	}
	return out
}

// validateExpected rejects unknown check IDs and repeated entries (a typo
// would silently hide nothing and never go stale).
func validateExpected(es []ExpectedFailure, cat []Check) error {
	idx := catalogueIndex(cat)
	seen := map[string]bool{}
	for _, e := range es {
		if _, ok := idx[e.ID]; !ok {
			return fmt.Errorf("conformance: expected failures: unknown check %q%s", e.ID, Suggest(e.ID, CheckIDs(cat), "checks"))
		}
		if _, err := e.matcher(); err != nil {
			return fmt.Errorf("conformance: expected failures: %w", err)
		}
		key := e.String()
		if seen[key] {
			return fmt.Errorf("conformance: expected failures: %s listed twice", key)
		}
		seen[key] = true
	}
	return nil
}

// WriteBaseline writes the run's failures (of MUST checks, and of SHOULD
// checks under Strict, not already expected) as a baseline: one entry per check, for the cases it failed
// in, with reason "TODO" to be filled in; every value double-quoted.
func (r *Report) WriteBaseline(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# todoharness conform --write-baseline: the failures of this run, one entry per check.\n")
	b.WriteString("# Say why each is expected (reason, in quotes: YAML ends an unquoted value at \" #\"),\n")
	b.WriteString("# narrow it with match: \"substring\" or \"/regexp/\" if you like,\n")
	b.WriteString("# and pass the file with --expected-failures. An entry that matches no failure fails the run.\n")
	n := 0
	for _, c := range r.Checks {
		if c.Outcome != Fail || !r.Required(c.Check) {
			continue
		}
		var cases []string
		for _, cv := range c.Cases {
			if cv.Outcome == Fail {
				cases = append(cases, cv.Case)
			}
		}
		n++
		// Every value but the catalogue's check ID quoted: a reason such
		// as "tracked in #123" stays whole (unquoted, YAML would end it at
		// " #"), and a case ID holding ", " or "]" stays one ID.
		quoted := make([]string, len(cases))
		for i, id := range cases {
			quoted[i] = yamlQuote(id)
		}
		fmt.Fprintf(&b, "- id: %s\n  reason: %s\n  cases: [%s]\n", c.ID, yamlQuote(BaselineTODO), strings.Join(quoted, ", "))
		if len(cases) > 0 {
			for _, cv := range c.Cases {
				if cv.Outcome == Fail {
					// A comment ends at the line's end: nothing in it may
					// break the line (termtext.Visible).
					fmt.Fprintf(&b, "  # %s: %s\n", termtext.Visible(cv.Case), termtext.Visible(driver.OneLine(cv.Reason, 160)))
				}
			}
		}
	}
	if n == 0 {
		b.WriteString("[]\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("conformance: write baseline: %w", err)
	}
	return nil
}

// BaselineTODO is the reason --write-baseline writes for each entry, to
// be replaced by why the failure is expected.
const BaselineTODO = "TODO"

// yamlQuote writes s as a YAML double-quoted scalar (Go's quoting: its
// escapes \n, \t, \xNN, \uNNNN are YAML's too).
func yamlQuote(s string) string {
	return strconv.Quote(s)
}

// Suggest says which of valid a mistyped name most likely meant, and lists
// them all (driver.Suggest).
func Suggest(name string, valid []string, what string) string {
	return driver.Suggest(name, valid, what)
}

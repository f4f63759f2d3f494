package snapshot

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/todoharness/todoharness/internal/junit"
)

// Report is the verdicts of a run over several scenarios.
type Report struct {
	Agent   string    `json:"agent"`
	Results []*Result `json:"results"`
}

// OK reports whether every scenario passed (or was updated).
func (r *Report) OK() bool {
	for _, x := range r.Results {
		if x.Status != Pass && x.Status != Updated {
			return false
		}
	}
	return true
}

// Counts returns how many scenarios have each status.
func (r *Report) Counts() map[Status]int {
	c := map[Status]int{}
	for _, x := range r.Results {
		c[x.Status]++
	}
	return c
}

// WriteText writes one block per scenario (status, reason, notes, diff)
// and a last line with the counts.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, x := range r.Results {
		label := map[Status]string{Pass: "PASS", Fail: "FAIL", Error: "COULD NOT RUN", Updated: "UPDATED"}[x.Status]
		fmt.Fprintf(&b, "%s %s (%s, %.2fs)", label, x.Name, x.Dir, x.Duration.Seconds())
		switch x.Status {
		case Pass:
			fmt.Fprintf(&b, ": the normalised stdout matches %s\n", x.Expected)
		case Updated:
			fmt.Fprintf(&b, ": wrote %s\n", x.Expected)
		default:
			fmt.Fprintf(&b, ": %s\n", x.Reason)
		}
		for _, n := range x.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
		if x.Diff != "" {
			for _, l := range strings.Split(strings.TrimRight(x.Diff, "\n"), "\n") {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
	}
	c := r.Counts()
	fmt.Fprintf(&b, "%d scenario(s) against %s: %d pass, %d fail, %d could not run", len(r.Results), r.Agent, c[Pass], c[Fail], c[Error])
	if c[Updated] > 0 {
		fmt.Fprintf(&b, ", %d updated", c[Updated])
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("snapshot: write report: %w", err)
	}
	return nil
}

// WriteJUnit writes the report as JUnit XML: one test case per scenario, a
// failure carrying the diff, an error saying why it could not run.
func (r *Report) WriteJUnit(w io.Writer) error {
	s := junit.Suite{Name: "snapshot run: " + r.Agent, Tests: len(r.Results)}
	errs := 0
	var total time.Duration
	for _, x := range r.Results {
		total += x.Duration
		c := junit.Case{Name: x.Name, Classname: "snapshot", Time: secs(x.Duration), SystemOut: strings.Join(x.Notes, "\n")}
		switch x.Status {
		case Fail:
			s.Failures++
			c.Failure = &junit.Message{Message: x.Reason, Body: x.Diff}
		case Error:
			errs++
			c.Error = &junit.Message{Message: x.Reason}
		}
		s.Cases = append(s.Cases, c)
	}
	s.Errors, s.Time = &errs, secs(total)
	if err := junit.Write(w, s); err != nil {
		return fmt.Errorf("snapshot: write JUnit: %w", err)
	}
	return nil
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

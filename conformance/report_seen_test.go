package conformance

import "testing"

// Every check of the catalogue has words for what a pass saw (the
// summary's and the HTML report's REASON of a passing row:
// report_text_test.go's TestPassingRowSaysWhatWasSeen).
func TestEveryCheckHasWordsForAPass(t *testing.T) {
	t.Parallel()
	for _, c := range Catalogue() {
		if _, ok := seenRuleOf(c.ID); !ok {
			t.Errorf("%s: no words for what a pass saw (report_seen.go)", c.ID)
		}
	}
}

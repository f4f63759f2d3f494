package conformance

import "testing"

// Every check of the catalogue has words for what a pass saw (the
// summary's and the HTML report's REASON of a passing row:
// report_text_test.go's TestPassingRowSaysWhatWasSeen).
func TestEveryCheckHasWordsForAPass(t *testing.T) {
	t.Parallel()
	for _, c := range Catalogue() {
		if c.seen.count == nil || c.seen.say == nil {
			t.Errorf("%s: no words for what a pass saw (its seen in Catalogue())", c.ID)
		}
	}
}

package tier

import (
	"os"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// EventuallyTimeout is how long an Eventually without a timeout of its
// own waits: it bounds a failure (a spec that waits that long has
// failed), so it is generous enough for the race detector on a loaded
// 2-core machine. gomega's default (1 s) is not.
const EventuallyTimeout = time.Minute

// Run runs the suite's specs as the tier named label ("tier:unit", ...).
func Run(t *testing.T, description, label string) bool {
	gomega.RegisterFailHandler(ginkgo.Fail)
	gomega.SetDefaultEventuallyTimeout(EventuallyTimeout)
	suite, reporter := ginkgo.GinkgoConfiguration()
	if !Colour(os.Stdout) {
		reporter.NoColor = true
	}
	return ginkgo.RunSpecs(t, description, ginkgo.Label(label), suite, reporter)
}

// Colour says whether output to f may use terminal colour codes: only on
// a terminal, and never under $NO_COLOR (https://no-color.org).
func Colour(f *os.File) bool {
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package conformance

// stdinReady cannot tell elsewhere (Windows): the fake v2 agent then never sees a
// cancel during its turn.
func stdinReady() bool { return false }

// Command testrun is `make test`'s runner: `go test` for every package
// that has tests, NumCPU packages at a time, printing one line per package
// as it finishes, with its time, and a package's whole output when it
// fails; then a closing line ("N passed, N failed").
//
// `go test ./...` prints its packages in order, so one slow package holds
// back the lines of every package after it; testrun prints them as they
// end. It runs one test binary more than the machine has CPUs (-p): the
// suites wait on timers about a third of the time, and the extra package
// fills it. Each line ends with the package's CPU time (go test and the test
// binary, user and system), the cost that decides how long the whole run
// takes on a small machine.
//
// -plain PATTERN tests those packages once more without -race, in the same
// queue; -plain-run REGEXP narrows that run to the tests that skip or
// shrink under -race (go test -run); -norace PATTERN tests those packages
// without -race instead of with it. Everything is built with -trimpath, so that a fresh clone in
// another folder reuses the build cache.
//
// The queue starts the longest packages first: each job's CPU time is kept
// in -times (testrun-times.json in the user's cache folder, shared by every
// clone on the machine), and the next run orders by it; jobs with no time
// yet come first, the plain ones, then the larger test files. On two cores
// the run ends when its last long package does.
//
// Why not gotestsum, the well-kept formatter of `go test -json` output: it
// runs one `go test` and formats what it prints, and what make test needs
// of its runner is in the scheduling, which `go test` does not offer: the
// order of the queue (go test starts packages in the order of its build
// graph), -race and plain jobs in one queue under one bound on the binaries
// at once (go test takes one set of build flags a run: two runs side by side
// would have two bounds, one after the other would add the exploration's two
// minutes), and each package's CPU time. Its extras (JUnit files, reruns of
// failed tests, watching) are not wanted here: a rerun would hide a flaky
// spec. docs/performance.md, "make test on 2 cores", has the figures.
//
//	go run ./scripts/testrun [-p N] [-race] [-plain PATTERN]... [-plain-run REGEXP] [-norace PATTERN]... [-timeout D] [-times FILE] [PACKAGES]
package main

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
// queue (first, as they are the long ones: explorations that skip under
// -race). Everything is built with -trimpath, so that a fresh clone in
// another folder reuses the build cache.
//
//	go run ./scripts/testrun [-p N] [-race] [-plain PATTERN]... [-timeout D] [PACKAGES]
package main

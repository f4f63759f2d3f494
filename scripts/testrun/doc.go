// Command testrun is `make test`'s runner: `go test` for every package
// that has tests, NumCPU packages at a time, printing one line per package
// as it finishes, with its time, and a package's whole output when it
// fails; then a closing line ("N passed, N failed").
//
// `go test ./...` prints its packages in order, so one slow package holds
// back the lines of every package after it; testrun prints them as they
// end. It never runs more test binaries at once than the machine has CPUs
// (-p).
//
//	go run ./scripts/testrun [-p N] [-race] [-timeout D] [PACKAGES]
package main

// Package selfexec lets a test binary double as the command-line programs
// its specs run as subprocesses, so that no test builds a binary with
// `go build` (the way rogpeppe/go-internal/testscript's RunMain does).
//
// A suite that runs programs declares them in its TestMain:
//
//	func TestMain(m *testing.M) {
//		selfexec.Main(m, selfexec.Programs{"todoharness": cli.Main})
//	}
//
// and starts them with Command (or Path and Environ when it builds the
// command line itself): the child is the test binary with
// $TODOHARNESS_TEST_PROGRAM naming the program, and Main runs that program's main with the child's
// arguments instead of the tests. Children inherit the variable, so a
// program that re-executes itself (todoharness conform runs
// os.Executable() agent) runs the same program again.
package selfexec

// Package scratch puts a test binary's temporary files in memory: a
// folder on /dev/shm, when that is a tmpfs with room, becomes $TMPDIR for
// the tests and every process they start, and is removed after them.
//
// It is for suites that make thousands of throw-away folders and fsync
// logs in them (the conformance tier: two folders per case, an agent's
// fsynced session log in each): on a disk file system each of those
// system calls waits on the journal, on tmpfs it costs next to nothing,
// and what the tests observe is the same (an fsync is still called, only
// cheaper). A $TMPDIR the user set is left as it is, and so is every
// system without a usable /dev/shm.
//
//	func TestMain(m *testing.M) {
//		selfexec.Main(scratch.InMemory(m), programs)
//	}
package scratch

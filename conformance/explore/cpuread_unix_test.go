//go:build unix

package explore_test

// cpuRead says the report gives the CPU time here.
const cpuRead = true

// Package junit writes JUnit XML reports, the one writer behind
// `todoharness conform --junit` and `todoharness snapshot run --junit`:
// one test suite of test cases, each failed, in error, skipped or passed.
package junit

// Package junit writes JUnit XML reports: one test suite of test cases,
// each passed, failed, skipped or in error. The conformance run and the
// snapshot run both write their verdicts through it.
package junit

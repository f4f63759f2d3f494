// Package testutil holds helpers shared by the test suites: finding the
// repository root and the shared folder beside it (the spec, the interop
// fixtures), and goldie golden-file testers rooted at golden/<suite>/.
//
// It is imported only from tests (suites/* and _test.go files); nothing in
// harness/, mockmodel/ or conformance/ may depend on it.
package testutil

// Package testutil holds helpers shared by the test suites: finding the
// repository root and the committed interop fixtures under it
// (fixtures/interop/deepseek-harness), where the optional upstream spec
// texts are looked for, and goldie golden-file testers rooted at
// golden/<suite>/. Everything a test reads is inside the repository; only
// the spec-quote test reads the optional spec folder, and skips without it.
//
// It is imported only from tests (suites/* and _test.go files); nothing in
// harness/, mockmodel/ or conformance/ may depend on it.
package testutil

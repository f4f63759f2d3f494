// Package report draws a conformance report (conformance.Report) for a
// reader other than the terminal: WriteHTML writes one self-contained
// HTML page (the checks, every failure linked to its evidence, each
// case's ACP wire beside the model journal), WritePeersHTML one page for
// a peers run, WriteJUnit JUnit XML (one test case per check, `conform
// --junit`), WriteGitHub GitHub Actions annotations (`conform --format
// github`; Formats and ParseFormat are the --format values). The summary,
// JSON and the transcripts stay with the report in conformance: the run
// and its tests write them.
package report

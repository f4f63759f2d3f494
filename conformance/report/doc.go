// Package report draws a conformance report (conformance.Report) for its
// readers: WriteSummary writes the text summary (a row per check, the
// failures that share a root cause (RootCauses), the clause each failing
// check tests, the verdict: VerdictLine); WriteTranscripts a folder per
// case under --out (its evidence.json, and for a failing case its
// transcript); WriteHTML one self-contained HTML page (the checks, every
// failure linked to its evidence, each case's ACP wire beside the model
// journal), WritePeersHTML one page for a peers run, WriteJUnit JUnit XML
// (one test case per check, `conform --junit`), WriteGitHub GitHub
// Actions annotations (`conform --format github`; Formats and ParseFormat
// are the --format values), WriteMarkdown the summary as Markdown for a
// job summary or a pull-request comment (`conform --format markdown`,
// `--summary-md FILE`). The JSON report stays with the report in
// conformance (Report.WriteJSON).
package report

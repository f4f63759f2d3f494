package report

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/jsonx"
	"github.com/todoharness/todoharness/internal/safefile"
	"github.com/todoharness/todoharness/mockmodel"
)

// WriteTranscripts writes a folder per case of r under dir holding its evidence
// (evidence.json, which `todoharness conform --judge DIR` judges again)
// and, for a case with a failed check or that did not complete, its
// transcript: transcript.txt (readable: steps, the ACP wire both ways, the
// model requests, stderr), wire.jsonl, journal.jsonl and stderr-N.txt.
//
// Each case gets a folder of its own (FolderNames). While it writes, dir
// holds conformance.IncompleteFile; it is removed once every folder is
// written, and stays when one could not be (a full disk): --judge and
// conform merge then refuse dir rather than judge part of a run.
func WriteTranscripts(dir string, r *conformance.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("conformance: transcripts: %w", err)
	}
	marker := filepath.Join(dir, conformance.IncompleteFile)
	if err := safefile.WriteFile(marker, []byte(incompleteText), 0o644); err != nil {
		return fmt.Errorf("conformance: transcripts: %w", err)
	}
	names := FolderNames(r)
	for i, cr := range r.Cases {
		if cr.Evidence() == nil {
			continue
		}
		d, err := safefile.MkdirInside(dir, names[i])
		if err != nil {
			return fmt.Errorf("conformance: transcripts: %w", err)
		}
		ev := *cr.Evidence()
		ev.PlanTies = cr.Plans // what the judge made of the plans, for readers
		if err := conformance.WriteEvidence(d, &ev); err != nil {
			return err
		}
		if cr.Completed && len(cr.Failed) == 0 {
			continue
		}
		if err := WriteTranscript(d, r, cr); err != nil {
			return err
		}
		cr.Transcript = d
	}
	if err := os.Remove(marker); err != nil {
		return fmt.Errorf("conformance: transcripts: %w", err)
	}
	return nil
}

// incompleteText is what conformance.IncompleteFile says.
const incompleteText = `todoharness conform writes the case folders here and removes this file once
every one is written. It is still here: the run could not write them all (its
error output says why), so conform --judge and conform merge refuse this folder.
`

// FolderNames is the name of each case's folder under --out, by position
// in r.Cases: its ID with every character but letters, digits, - and _
// replaced by _ (SafeID), and -runN for run N of --repeat. Two cases whose
// names would be the same, also but for case (a.b and a_b, A and a), never
// share a folder: the later one's name gets a hash of its ID.
func FolderNames(r *conformance.Report) []string {
	names := make([]string, len(r.Cases))
	used := map[string]bool{}
	for i, cr := range r.Cases {
		name := cr.SafeID()
		if cr.Run > 0 {
			name += fmt.Sprintf("-run%d", cr.Run)
		}
		if used[strings.ToLower(name)] {
			h := fnv.New32a()
			fmt.Fprintf(h, "%s\x00%d", cr.ID, cr.Run)
			base := fmt.Sprintf("%s-%08x", name, h.Sum32())
			name = base
			for k := 2; used[strings.ToLower(name)]; k++ {
				name = fmt.Sprintf("%s-%d", base, k)
			}
		}
		used[strings.ToLower(name)] = true
		names[i] = name
	}
	return names
}

// WriteTranscript writes the transcript of case cr of r in folder d:
// transcript.txt (its failures and r's marks on its wire lines and model
// requests), wire.jsonl, journal.jsonl and stderr-N.txt.
func WriteTranscript(d string, r *conformance.Report, cr *conformance.CaseResult) error {
	ev, reqMarks := cr.Evidence(), RequestMarks(r, cr)
	var b strings.Builder
	transcriptHead(&b, cr)
	transcriptProcs(&b, ev)
	transcriptSteps(&b, ev)
	transcriptWire(&b, cr)
	transcriptRequests(&b, cr, reqMarks)
	for _, p := range ev.Procs {
		fmt.Fprintf(&b, "\n== stderr, process %d\n%s\n", p.Index+1, p.Stderr)
	}
	if err := safefile.WriteFile(filepath.Join(d, "transcript.txt"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("conformance: transcripts: %w", err)
	}
	if err := writeJSONL(filepath.Join(d, "wire.jsonl"), len(ev.Wire), func(i int) any { return ev.Wire[i] }); err != nil {
		return err
	}
	all := ev.AllRequests()
	if err := writeJSONL(filepath.Join(d, "journal.jsonl"), len(all), func(i int) any { return all[i] }); err != nil {
		return err
	}
	for _, p := range ev.Procs {
		if err := safefile.WriteFile(filepath.Join(d, fmt.Sprintf("stderr-%d.txt", p.Index+1)), []byte(p.Stderr), 0o644); err != nil {
			return fmt.Errorf("conformance: transcripts: %w", err)
		}
	}
	return nil
}

// transcriptHead writes what the case is and what failed.
func transcriptHead(b *strings.Builder, cr *conformance.CaseResult) {
	ev := cr.Evidence()
	fmt.Fprintf(b, "case %s: %s\nsource: %s\ndialect: %s\n", cr.ID, cr.Title, ev.Case.Source, ev.Dialect.Name)
	if ev.Aborted != "" {
		fmt.Fprintf(b, "DID NOT COMPLETE: %s\n", ev.Aborted)
	}
	if len(cr.Failed) > 0 {
		fmt.Fprintf(b, "failed checks: %s\n", strings.Join(cr.Failed, ", "))
		for _, f := range cr.Failures() {
			fmt.Fprintf(b, "  %s\n", f)
		}
	}
}

// transcriptProcs writes the agent's processes and their client requests.
func transcriptProcs(b *strings.Builder, ev *conformance.Evidence) {
	b.WriteString("\n== processes\n")
	for _, p := range ev.Procs {
		kind := "process"
		if p.InProcess {
			kind = "in-process agent"
		}
		fmt.Fprintf(b, "%s %d: %s\n  startup %s, %s, %s\n", kind, p.Index+1, strings.Join(p.Argv, " "), p.Startup.Round(time.Millisecond), p.Shutdown, p.Exit)
		for _, q := range p.ClientRequests {
			detail := ""
			if q.Detail != "" {
				detail = " " + q.Detail
			}
			fmt.Fprintf(b, "  client request %s%s -> %s\n", q.Method, detail, q.Answer)
		}
		for _, k := range p.Killed {
			fmt.Fprintf(b, "  left running, killed by the runner: %s\n", k)
		}
	}
}

// transcriptSteps writes the steps the runner took.
func transcriptSteps(b *strings.Builder, ev *conformance.Evidence) {
	b.WriteString("\n== steps\n")
	for _, s := range ev.Steps {
		fmt.Fprintf(b, "%d %s (process %d) %s", s.Index+1, s.Op, s.Proc+1, s.Duration.Round(time.Millisecond))
		if s.Error != "" {
			fmt.Fprintf(b, " ERROR %s", s.Error)
		}
		if s.Skipped != "" {
			fmt.Fprintf(b, " SKIPPED %s", s.Skipped)
		}
		if s.Settled != "" {
			fmt.Fprintf(b, "; settled after %s: %s", s.Settle.Round(time.Millisecond), s.Settled)
		}
		b.WriteString("\n")
	}
}

// transcriptWire writes the ACP wire, each line with its marks.
func transcriptWire(b *strings.Builder, cr *conformance.CaseResult) {
	b.WriteString("\n== ACP wire (> client to agent, < agent to client)\n")
	for _, m := range cr.Evidence().Wire {
		arrow := ">"
		if m.Dir == driver.Received {
			arrow = "<"
		}
		capped := ""
		if m.Capped {
			capped = fmt.Sprintf(" […] CAPPED: %s", m.Problem)
		}
		fmt.Fprintf(b, "#%-4d p%d %8.3fs %s %s%s\n", m.Seq, m.Proc+1, m.At.Seconds(), arrow, m.Line, capped)
		notes := slices.Clone(cr.LineMarks()[m.Seq])
		sort.Strings(notes)
		for _, note := range notes {
			fmt.Fprintf(b, "      ^^^ FAILED %s\n", note)
		}
		if tie := planTieAt(cr, m.Seq); tie != "" {
			fmt.Fprintf(b, "      ^^^ PLAN %s\n", tie)
		}
	}
}

// transcriptRequests writes the model's journal, each request with its
// marks (reqMarks, by journal Index).
func transcriptRequests(b *strings.Builder, cr *conformance.CaseResult, reqMarks map[int][]string) {
	b.WriteString("\n== model requests (journal; canonical form, whatever the wire)\n")
	for _, e := range cr.Evidence().AllRequests() {
		for _, note := range reqMarks[e.Index] {
			fmt.Fprintf(b, "vvv FAILED %s\n", note)
		}
		fmt.Fprintf(b, "request %d (turn %d) %s %s", e.Index+1, e.TurnIndex+1, e.Wire, e.Path)
		if e.Side {
			fmt.Fprintf(b, " SIDE REQUEST (no tools offered: answered %q, no script turn)", conformance.SideText)
		}
		if e.Error != "" {
			fmt.Fprintf(b, " REFUSED: %s", e.Error)
		}
		b.WriteString("\n")
		if e.RawCapped {
			fmt.Fprintf(b, "  BODY CAPPED: %d bytes, sha256 %s: only its first %d bytes were kept\n", e.RawBytes, e.RawSHA256, mockmodel.JournalBodyPrefix)
		}
		for _, c := range e.Capped {
			fmt.Fprintf(b, "  CAPPED: %s\n", c)
		}
		var tools []string
		for _, t := range e.Tools {
			tools = append(tools, t.Name)
		}
		fmt.Fprintf(b, "  tools: %s\n", strings.Join(tools, ", "))
		for _, m := range e.Messages {
			line := m.Text()
			for _, tc := range m.ToolCalls() {
				line += fmt.Sprintf(" [call %s %s %s]", tc.ID, tc.Name, tc.Arguments)
			}
			flag := ""
			if m.IsError {
				flag = " isError"
			}
			if m.ToolCallID != "" {
				flag += " for " + m.ToolCallID
			}
			fmt.Fprintf(b, "  %s%s: %s\n", m.Role, flag, driver.OneLine(line, 400))
		}
	}
}

// writeJSONL writes n values (at) to path, one JSON line each, without
// HTML escaping (a "<" is one byte, not six).
func writeJSONL(path string, n int, at func(int) any) error {
	var b strings.Builder
	for i := 0; i < n; i++ {
		line, err := jsonx.Marshal(at(i))
		if err != nil {
			return fmt.Errorf("conformance: transcripts: %w", err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := safefile.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("conformance: transcripts: %w", err)
	}
	return nil
}

// planTieAt says which write the plan update at seq of case cr was tied
// to, and why ("" when seq is no plan update).
func planTieAt(cr *conformance.CaseResult, seq int) string {
	for _, t := range cr.Plans {
		if t.Seq != seq {
			continue
		}
		if t.Call == "" {
			return "tied to no write: " + t.Why
		}
		return "tied to " + t.Call + ": " + t.Why
	}
	return ""
}

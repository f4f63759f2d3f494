// Package cassette is the cassette format: the file that holds the HTTP
// exchanges between an agent (or the llm client) and a model server, as
// recorded by package record and replayed by package replay.
//
// A cassette is a go-vcr (gopkg.in/dnaeon/go-vcr.v3) version 2 YAML file
// with one extra top-level key, provenance, written first in the file.
// go-vcr's loader ignores keys it does not know, so the file loads with
// stock go-vcr; Load and Parse validate it and refuse a cassette that has
// no provenance:
//
//	---
//	provenance:
//	  source: real-model        # real-model | mock-server | session-log
//	  realModelOutput: true     # false for anything produced by a script
//	  description: recorded against https://api.deepseek.com
//	  apiHost: api.deepseek.com
//	  baseURL: https://api.deepseek.com
//	  model: deepseek-chat
//	  recordedAt: "2026-06-29T02:53:19Z"
//	  toolVersion: todoharness (devel)
//	  scenario: todo-plan
//	version: 2
//	interactions: [...]
//
// Only package record writes cassettes (WithProvenance, WriteFile), and it
// always writes the block. Bodies are stored decoded; server-sent-event
// bodies are stored whole and handed back one event per Read (Rechunk), so
// a client's streaming parser works exactly as it does on a live
// connection. Run-specific values are stored as Placeholders ("{{cwd}}").
//
// The packages around the format:
//
//   - scrub: credentials never reach a cassette (scrubbing before save, the
//     scans that police committed cassettes);
//   - record: the recording transport (go-vcr underneath), provenance
//     completion, normalisation;
//   - replay: the replaying transport and its matcher;
//   - proxy: either transport served over HTTP on loopback, for agents in
//     any language;
//   - fromlog: a cassette rebuilt from a session log.
package cassette

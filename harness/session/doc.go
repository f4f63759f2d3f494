// Package session is the event-sourced session log of the reference harness.
//
// A session is a header plus an append-only list of events
// ({type, seq, time, data}) in the on-disk JSONL format of the original
// TypeScript harness, so logs written by either implementation load in the
// other. The package holds the typed event payloads, the invariants every log
// must satisfy, the surface projection that DeriveMessages turns into model
// history, the current todo list (last todo/write wins), and an append-only
// JSONL store that survives a torn last line.
package session

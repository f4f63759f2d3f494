// Package session is the event-sourced session log of the reference harness.
//
// A session is a header plus an append-only list of events
// ({type, seq, time, data}) in the on-disk JSONL format of the original
// TypeScript harness, so logs written by either implementation load in the
// other. The package holds the typed event payloads, the invariants every log
// must satisfy (Checker, Invariants; Check also judges each todo/write by
// the todo_write contract, whose rules harness/todolist owns), the surface
// projection that DeriveMessages turns into model history, the current todo
// list (last todo/write wins), a streaming reader and an append-only JSONL
// store.
//
// # Formats read
//
// The writer writes one format, the runtime one: every event has seq and
// time. The Reader also reads the original's current committed-fixture
// format: events without seq/time (seq is synthesised in file order, time is
// zero), header fields delegationDepth/origin/parentSession (kept), packed
// chunk rows text-chunks/reasoning-chunks/tool-call-chunks (expanded to the
// assistant/chunk events they stand for, one seq each, times from seq0/time0
// and the dt deltas), and the original's message shapes (assistant
// {message: {content}}, tool/result with a tool-result part). Event types
// the package does not model are kept in order and only their seq checked.
// A log is one format or the other, decided by its first event.
//
// # Durability: nothing shown is lost
//
// A Log with a FileStore (Dir.Create, Dir.Open) persists an event before it
// tells anyone about it: Append writes the line and, for the durable types
// (IsDurableType: turn/start, turn/end, user/message, assistant/message,
// tool/call, tool/result, todo/write), fsyncs it; other events (chunks, step
// markers) are handed to the kernel whenever someone is subscribed. Only
// then are the Subscribe callbacks called. A client bridge that sends its
// updates from a subscription (as harness/acp does) therefore cannot send
// an update for an event a crash or a SIGKILL loses, and has nothing to
// remember to call; if persisting fails, Append returns the error and calls
// no subscriber. Log.Sync is there for anything written outside Append.
//
// # One owner per session
//
// The store opens a log with O_APPEND and holds an exclusive advisory flock
// on it while open (flock is per open file, so two stores in one process
// conflict too). The holder records its pid, command line and start time in
// the sidecar <log>.lock; a second Dir.Open or Dir.Create of a held session
// fails with a *LockedError (errors.Is ErrLocked) naming the holder.
//
// # Reading never writes; reopening only appends
//
// Reader streams a log in memory bounded by its longest line
// (DefaultMaxLineBytes, 64 MiB, or ReadOptions.MaxLineBytes; a longer line
// is a *LineError wrapping ErrLineTooLong naming the limit) and stops with
// the context's error when the context ends (OpenForRead also wakes a read
// blocked on a silent FIFO). Every line must be UTF-8 and decode; a bad
// line is a *LineError naming file:line and the rule it breaks. The one
// exception is a torn line: the last line with no trailing newline, which a
// crash mid-write leaves behind; it is dropped with a warning. A UTF-8 byte
// order mark before the header is skipped with a warning. LoadFile, Read,
// Reader, Check and the `log` commands never modify the file.
//
// Dir.Open is the path of an agent that continues a session: it locks the
// log, reads and checks it, moves a torn last line to <log>.torn-<offset>,
// and closes a turn a killed agent left open by appending an error
// tool/result for each unanswered call of the open step, step/end and
// turn/end {"reason":{"kind":"interrupted"}}. It never rewrites a complete
// line.
//
// # Memory
//
// Check streams a log holding one event at a time. A Log opened with
// Dir.Open keeps none of the events it was loaded with in memory, only
// what appending needs (the invariant state, the projected model history,
// the current plan): Log.Replay streams them back from the file for a
// replay (Range and Events use it), followed by the events appended since.
// docs/performance.md has the numbers.
package session

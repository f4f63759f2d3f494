package session_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todolist"
)

// Benchmarks of reading persisted logs of 10k, 100k and 1M events (the 1M
// log is about 200 MB). The logs are written turn by turn, never held in
// memory, so the process's peak RSS (reported as maxrss-MB) is the reading's
// when one sub-benchmark runs alone, e.g.
//
//	go test -run '^$' -bench 'BenchmarkCheck/events=1M$' -benchtime 1x ./harness/session/
//
// With SESSION_BENCH_DIR set, the logs are kept (and reused) there, as
// <dir>/events-1M.jsonl and so on: docs/performance.md runs
// `todoharness log check` on them.

// benchLog returns the path of a persisted log of n generated events.
func benchLog(b *testing.B, n int) string {
	b.Helper()
	dir := os.Getenv("SESSION_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	id := fileID(n)
	path := filepath.Join(dir, id+".jsonl")
	if ld, err := countEvents(path); err == nil && ld == n {
		return path
	}
	s, err := session.CreateFile(path, session.Header{Type: "session", ID: id, CreatedAt: 1})
	if err != nil {
		b.Fatal(err)
	}
	written := 0
	for turn := 1; written < n; turn++ {
		for _, e := range closedTurn(turn, n-written) {
			e.Seq = written
			e.Time = 1782701599722 + int64(written)
			if err := s.Write(e); err != nil {
				b.Fatal(err)
			}
			written++
		}
		if err := s.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// closedTurn is turnEvents(turn), or when fewer than its events are left, a
// shorter turn that still ends (a log that ends mid-turn gets closed as
// interrupted when opened, which appends to it).
func closedTurn(turn, left int) []session.Event {
	full := turnEvents(turn)
	if left >= len(full) {
		return full
	}
	switch {
	case left >= 4: // turn/start, step/start, chunks, step/end, turn/end
		out := append([]session.Event{}, full[0], full[2])
		for len(out) < left-2 {
			out = append(out, full[4])
		}
		return append(out, full[len(full)-2], full[len(full)-1])
	case left >= 2:
		out := []session.Event{full[0]}
		if left == 3 {
			out = append(out, full[1])
		}
		return append(out, full[len(full)-1])
	}
	return []session.Event{{Type: "bench/padding", Data: json.RawMessage(`{}`)}}
}

// countEvents counts the event lines of an existing log (to reuse it).
func countEvents(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	n := -1
	for {
		_, err := br.ReadSlice('\n')
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return 0, err
		}
		if err == nil {
			n++
		}
	}
}

func reportMaxRSS(b *testing.B) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MB") // Linux: KiB
	}
}

// BenchmarkDecodeBaseline is the yardstick of issue 14: read every line and
// decode it with encoding/json into {type, seq, time, data RawMessage}.
func BenchmarkDecodeBaseline(b *testing.B) {
	type line struct {
		Type string          `json:"type"`
		Seq  int             `json:"seq"`
		Time int64           `json:"time"`
		Data json.RawMessage `json:"data"`
	}
	for _, n := range sizes {
		path := benchLog(b, n)
		b.Run(sizeName(n), func(b *testing.B) {
			p := startPerEvent(b, n)
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				sc := bufio.NewScanner(f)
				sc.Buffer(make([]byte, 256<<10), 64<<20)
				got := 0
				for sc.Scan() {
					var l line
					if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
						b.Fatal(err)
					}
					got++
				}
				f.Close()
				if sc.Err() != nil || got != n+1 {
					b.Fatalf("%d lines: %v", got, sc.Err())
				}
			}
			p.stop()
			reportMaxRSS(b)
		})
	}
}

// BenchmarkCheck is `todoharness log check`: stream, check every event and
// every todo/write (session.Check under the single policy).
func BenchmarkCheck(b *testing.B) {
	for _, n := range sizes {
		path := benchLog(b, n)
		b.Run(sizeName(n), func(b *testing.B) {
			p := startPerEvent(b, n)
			for b.Loop() {
				f, err := session.OpenForRead(context.Background(), path)
				if err != nil {
					b.Fatal(err)
				}
				sum, err := session.Check(context.Background(), f.Reader(session.ReadOptions{}), todolist.Single, session.CheckHooks{})
				f.Close()
				if err != nil || sum.Events != n || sum.Findings != 0 {
					b.Fatalf("%+v %v", sum, err)
				}
			}
			p.stop()
			reportMaxRSS(b)
		})
	}
}

// BenchmarkOpenReplay is what session/load does with a stored session:
// Dir.Open (lock, read, check, project the history; no event kept in
// memory) then a replay of every event (Log.Replay streams them from the
// file). heap-MB is the live heap while the log is open, after a GC.
func BenchmarkOpenReplay(b *testing.B) {
	for _, n := range sizes {
		path := benchLog(b, n)
		dir := session.Dir{Path: filepath.Dir(path)}
		b.Run(sizeName(n), func(b *testing.B) {
			p := startPerEvent(b, n)
			var heap uint64
			for b.Loop() {
				l, warnings, err := dir.Open(fileID(n))
				if err != nil || len(warnings) > 0 {
					b.Fatal(err, warnings)
				}
				got := 0
				if err := l.Replay(context.Background(), func(session.Event) error { got++; return nil }); err != nil || got != n {
					b.Fatalf("replayed %d of %d: %v", got, n, err)
				}
				b.StopTimer()
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				heap = ms.HeapAlloc
				runtime.KeepAlive(l)
				b.StartTimer()
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}
			p.stop()
			b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
			reportMaxRSS(b)
		})
	}
}

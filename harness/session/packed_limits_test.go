package session_test

import (
	"bytes"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/session"
)

// packedLine is a committed-fixture reasoning-chunks row of n entries "ab"
// (with n-1 dt of 5 ms when dt).
func packedLine(n int, dt bool) []byte {
	var b bytes.Buffer
	b.Grow(n * 9)
	b.WriteString(`{"type":"reasoning-chunks","data":{"turn":1,"step":1,"index":0,`)
	if dt {
		b.WriteString(`"dt":[`)
		for i := 0; i < n-1; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('5')
		}
		b.WriteString(`],`)
	}
	b.WriteString(`"texts":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"ab"`)
	}
	b.WriteString("]}}\n")
	return b.Bytes()
}

// A packed row of more than MaxPackedChunks entries is refused with an
// error naming the file, the line and the field; one of exactly that many
// is read.
func TestPackedRowOverTheEntryLimitIsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		row  []byte
		want string
	}{
		{"texts", packedLine(session.MaxPackedChunks+1, false), `big.jsonl:2: reasoning-chunks row: field "data.texts": more entries than the limit`},
		{"dt", []byte(`{"type":"reasoning-chunks","data":{"turn":1,"step":1,"index":0,"texts":["a"],"dt":[` +
			strings.Repeat("1,", session.MaxPackedChunks) + `1]}}` + "\n"), `big.jsonl:2: reasoning-chunks row: field "data.dt": more entries than the limit`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := session.Read(bytes.NewReader(append([]byte(hdr), c.row...)), "big.jsonl")
			if !errors.Is(err, session.ErrTooManyChunks) || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %s…", err, c.want)
			}
		})
	}
	// The row at the limit is accepted: a Reader decodes a row's arrays
	// whole (refusing the entry over the limit) before it makes the row's
	// first event, so the first Next proves it. Its million events are not
	// made: held at once (as session.Read would) they take over a gigabyte
	// under -race, and expanding a row is specified with small ones.
	rd := session.NewReader(bytes.NewReader(append([]byte(hdr), packedLine(session.MaxPackedChunks, false)...)), "big.jsonl", session.ReadOptions{})
	if e, err := rd.Next(t.Context()); err != nil || e.Type != session.TypeAssistantChunk || !strings.Contains(string(e.Data), `"ab"`) {
		t.Fatalf("a row at the limit: %v, first event %+v", err, e)
	}
}

// Packed rows whose dt is negative or absurdly large are read, with a
// warning naming the file, the line and the entry.
func TestPackedRowImplausibleDTIsWarned(t *testing.T) {
	row := func(dt string) string {
		return `{"type":"text-chunks","data":{"turn":1,"step":1,"index":0,"dt":[` + dt + `],"texts":["a","b","c"]}}` + "\n"
	}
	log := hdr + row("1,2") + row("4,-7") + row("1000000000000000000,3")
	ld, err := session.Read(strings.NewReader(log), "dt.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`dt.jsonl:3: text-chunks row: field "data.dt[1]" is -7: negative`, `dt.jsonl:4: text-chunks row: field "data.dt[0]" is 1000000000000000000: over`}
	if len(ld.Warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", ld.Warnings, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(ld.Warnings[i], w) {
			t.Errorf("warning %q, want %s…", ld.Warnings[i], w)
		}
	}
}

// BenchmarkPackedRowMemory reads one packed reasoning-chunks row of 10.5 M
// entries (a 63 MB line, as the probe had) and one at the entry
// limit, reporting the peak heap (sampled with runtime.ReadMemStats every
// 5 ms) against the file size. It measures, it asserts nothing:
//
//	go test -run '^$' -bench BenchmarkPackedRowMemory -benchtime 1x ./harness/session/
func BenchmarkPackedRowMemory(b *testing.B) {
	for _, n := range []int{10_500_000, session.MaxPackedChunks} {
		data := append([]byte(hdr), packedLine(n, false)...)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			peak := uint64(0)
			for i := 0; i < b.N; i++ {
				runtime.GC()
				var base runtime.MemStats
				runtime.ReadMemStats(&base)
				stop, wg := make(chan struct{}), sync.WaitGroup{}
				wg.Add(1)
				var top uint64
				go func() {
					defer wg.Done()
					var m runtime.MemStats
					for {
						runtime.ReadMemStats(&m)
						top = max(top, m.HeapInuse)
						select {
						case <-stop:
							return
						case <-time.After(5 * time.Millisecond):
						}
					}
				}()
				rd := session.NewReader(bytes.NewReader(data), "big.jsonl", session.ReadOptions{})
				events := 0
				for {
					if _, err := rd.Next(b.Context()); err != nil {
						break
					}
					events++
				}
				close(stop)
				wg.Wait()
				if top > base.HeapInuse {
					peak = max(peak, top-base.HeapInuse)
				}
				b.ReportMetric(float64(events), "events")
			}
			b.ReportMetric(float64(len(data))/1e6, "file-MB")
			b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
			b.ReportMetric(float64(peak)/float64(len(data)), "peak/file")
		})
	}
}

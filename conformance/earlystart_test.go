package conformance

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
)

// While the probe detects the dialect, the other cases start: their
// agents answer initialize and open their sessions before the probe's
// first model request, and only their prompts wait for the dialect. The
// stub's probe makes its model request only once the other case has
// opened its session: without the early start that never happens, the
// probe runs out of its timeout with no tools seen, and the other case is
// judged in the default dialect instead of the detected one.
func TestOtherCasesStartDuringTheProbe(t *testing.T) {
	t.Parallel()
	var once sync.Once
	otherOpened := make(chan struct{})
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	f := func(ctx context.Context, p driver.ProcIO) int {
		probe := p.Getenv("STUB_CASE") == "probe"
		base := p.Getenv(driver.ModelURLEnv)
		acp := func(method string) {
			if method == "session/new" && !probe {
				note("other: session/new")
				once.Do(func() { close(otherOpened) })
			}
		}
		onPrompt := func() {
			if probe {
				select {
				case <-otherOpened:
				case <-ctx.Done():
					return
				}
				note("probe: model request")
			}
			body := `{"model":"m","stream":false,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"todo_write","parameters":{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed"]}},"required":["content","status"]}}},"required":["todos"]}}}]}`
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		stubServe(p, onPrompt, acp)
		return 0
	}
	tg := driver.Target{Name: "stub", Command: []string{"stub-agent"}, InProcess: f, Env: []string{"STUB_CASE={{.Case}}"}}
	other := stubCase(true)
	other.ID = "other"
	cfg := Config{Agent: tg, Cases: []*Case{other}, Timeout: 20 * time.Second,
		Grace: 10 * time.Second, Settle: testSettle, Validator: Compiled(sharedValidator(t))}
	rep := runBounded(t, "Run with a probe", cfg)
	if rep.DialectSource != "detected" {
		t.Errorf("dialect source %q, want detected: the probe saw no tools", rep.DialectSource)
	}
	for _, c := range rep.Cases {
		if ev := c.ev; ev.Aborted != "" || ev.Interrupted != "" {
			t.Errorf("case %s: aborted %q, interrupted %q", ev.Case.ID, ev.Aborted, ev.Interrupted)
		}
		if c.ev.Case.ID == "other" && (c.ev.ScriptWait <= 0 || c.Waiting < c.ev.ScriptWait) {
			t.Errorf("other: waited %s for the dialect, %s waiting in all; want the first counted in the second", c.ev.ScriptWait, c.Waiting)
		}
		if c.ev.Dialect.Name != driver.DialectTodoWrite || c.ev.Script == nil {
			t.Errorf("case %s: dialect %q, script %v; want the detected todo_write and a script", c.ev.Case.ID, c.ev.Dialect.Name, c.ev.Script != nil)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"other: session/new", "probe: model request"}; !slices.Equal(order, want) {
		t.Errorf("order %q, want %q", order, want)
	}
}

package report

import (
	"context"
	"flag"
	"fmt"
	"github.com/todoharness/todoharness/conformance"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// -html-screenshot FILE saves what the browser spec shows first (the top
// of a failing run's page) as a PNG, and FILE-evidence.png what it shows
// after the click through to a failure's evidence: docs/html-report*.png
// are made so.
var htmlScreenshot = flag.String("html-screenshot", "", "write a screenshot of the HTML report to FILE (TestHTMLReportInBrowser)")

// chromiumPath is Debian's chromium (or another Chromium on the PATH).
func chromiumPath() (string, bool) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// The HTML report in a real browser: headless Chromium loads a failing
// run's page (with a plan entry holding markup), logs no console error
// and runs none of the agent's markup; the outcome filter hides the
// passing checks when clicked; clicking a failure's evidence link opens
// its case and lands on the wire line the check failed on.
func TestHTMLReportInBrowser(t *testing.T) {
	bin, ok := chromiumPath()
	if !ok {
		t.Skip("no Chromium on the PATH (Debian: apt-get install -y chromium): the HTML report is not tried in a browser")
	}
	rep, html := htmlOf(t, hostileRun(t, "bridge-plan-on-reject"))
	t.Logf("browser: %s", bin)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.WindowSize(1280, 1000),
	)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	// What the page writes to the console, and any dialog it opens, is
	// collected while the spec runs.
	var mu sync.Mutex
	var problems []string
	var wg sync.WaitGroup
	console := chromedp.Console(bctx)
	dialogs := chromedp.Events(bctx, page.JavascriptDialogOpening)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("console %s: %s", m.Type, m))
				mu.Unlock()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			mu.Lock()
			problems = append(problems, "dialog: "+ev.Message)
			mu.Unlock()
			_, _ = chromedp.Call(bctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()

	if err := chromedp.Do(bctx,
		chromedp.Navigate("file://"+file),
		chromedp.WaitVisible(chromedp.ID("verdict")),
	); err != nil {
		t.Fatalf("load %s: %v", file, err)
	}
	screenshot(t, bctx, *htmlScreenshot)
	title, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if title != "todoharness conformance: "+rep.Agent {
		t.Errorf("title %q: the agent's markup ran", title)
	}

	// The outcome filter, clicked: only the checks that do not pass stay.
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`.filters input.f-outcome[value="pass"]`))); err != nil {
		t.Fatalf("filter: %v", err)
	}
	shown := evaluate[int](t, bctx, `document.querySelectorAll("#checks tbody tr:not(.hidden)").length`)
	total := evaluate[int](t, bctx, `document.querySelectorAll("#checks tbody tr").length`)
	pass := 0
	for _, c := range rep.Checks {
		if c.Outcome == conformance.Pass && !c.Stale {
			pass++
		}
	}
	if pass == 0 || shown != total-pass {
		t.Errorf("with pass unticked %d of %d checks shown, want %d", shown, total, total-pass)
	}

	// The search narrows the checks to those whose row holds the text.
	if err := chromedp.Do(bctx, chromedp.SendKeys(chromedp.CSS(`.filters input.f-search`), "TW-LOAD")); err != nil {
		t.Fatalf("search: %v", err)
	}
	if rows := evaluate[[]string](t, bctx, `Array.from(document.querySelectorAll("#checks tbody tr:not(.hidden) td:first-child")).map(function (td) { return td.textContent })`); len(rows) == 0 || slices.ContainsFunc(rows, func(id string) bool { return !strings.HasPrefix(id, "TW-LOAD") }) {
		t.Errorf("searching TW-LOAD shows %v", rows)
	}
	// "failed cases only": the cases that passed are hidden.
	failed := 0
	for _, cr := range rep.Cases {
		if !cr.Completed || len(cr.Failed) > 0 {
			failed++
		}
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`.casefilters input.f-failed`))); err != nil {
		t.Fatalf("failed cases only: %v", err)
	}
	if n := evaluate[int](t, bctx, `document.querySelectorAll("details.case:not(.hidden)").length`); failed == 0 || failed == len(rep.Cases) || n != failed {
		t.Errorf("failed cases only: %d of %d cases shown, want the %d that failed", n, len(rep.Cases), failed)
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`.casefilters input.f-failed`))); err != nil {
		t.Fatalf("failed cases only, off: %v", err)
	}

	// A failure's evidence, clicked: its case opens on the failed line.
	href, err := chromedp.Run(bctx, chromedp.AttributeValue(chromedp.CSS(`a.evidence`), "href"))
	if err != nil {
		t.Fatal(err)
	}
	// A line in a closed case is never visible: a generous bound says so.
	cctx, ccancel := context.WithTimeout(bctx, 30*time.Second)
	defer ccancel()
	if err := chromedp.Do(cctx,
		chromedp.Click(chromedp.CSS(`a.evidence`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.marked:target`)),
	); err != nil {
		t.Fatalf("click through to the evidence: %v", err)
	}
	if *htmlScreenshot != "" {
		screenshot(t, bctx, strings.TrimSuffix(*htmlScreenshot, ".png")+"-evidence.png")
	}
	target := evaluate[string](t, bctx, `location.hash`)
	open := evaluate[bool](t, bctx, `document.querySelector(":target").closest("details").open`)
	inView := evaluate[bool](t, bctx, `(function(){var r=document.querySelector(":target").getBoundingClientRect();return r.bottom>0&&r.top<innerHeight})()`)
	if target != href.Value || !open || !inView {
		t.Errorf("after the click: at %s (link %s), case open %v, line in view %v", target, href.Value, open, inView)
	}
	if text := evaluate[string](t, bctx, `document.querySelector(":target").innerText`); !strings.Contains(text, "FAILED") {
		t.Errorf("the line the link lands on is not marked: %q", text)
	}
	if n := evaluate[int](t, bctx, `document.querySelectorAll("img").length`); n > 0 {
		t.Errorf("%d img elements: the agent's markup became elements", n)
	}

	bcancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser: %s", p)
	}
}

// screenshot saves what the browser shows to file ("": nothing).
func screenshot(t *testing.T, ctx context.Context, file string) {
	t.Helper()
	if file == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", file)
}

// evaluate runs a script in the page and returns its value.
func evaluate[T any](t *testing.T, ctx context.Context, script string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script))
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return v
}

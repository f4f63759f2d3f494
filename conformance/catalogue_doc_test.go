package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/internal/testutil"
)

const (
	docBegin = "<!-- catalogue:begin (generated; do not edit by hand) -->\n"
	docEnd   = "<!-- catalogue:end -->\n"
)

// catalogueTable renders cat as the Markdown table of docs/conformance.md.
func catalogueTable(cat []Check) string {
	cell := func(s string) string {
		return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
	}
	var b strings.Builder
	b.WriteString("| ID | level | applies to | what it observes | quote | source |\n|---|---|---|---|---|---|\n")
	for _, c := range cat {
		applies := "all dialects"
		if len(c.Dialects) > 0 {
			applies = strings.Join(c.Dialects, ", ")
		}
		if c.Always {
			applies += "; every case"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | “%s” | %s |\n", c.ID, c.Level, applies, cell(c.Title), cell(c.Spec), cell(c.Source))
	}
	return b.String()
}

// docPath is docs/conformance.md of the repository.
func docPath() string { return filepath.Join(testutil.RepoRoot(), "docs", "conformance.md") }

// splitDoc returns docs/conformance.md around its generated table.
func splitDoc(t *testing.T) (head, table, tail string) {
	t.Helper()
	b, err := os.ReadFile(docPath())
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, docBegin), strings.Index(s, docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no generated catalogue block (%q ... %q)", docPath(), strings.TrimSpace(docBegin), strings.TrimSpace(docEnd))
	}
	return s[:i+len(docBegin)], s[i+len(docBegin) : j], s[j:]
}

// The catalogue table of docs/conformance.md is the catalogue.
func TestConformanceDocListsTheCatalogue(t *testing.T) {
	head, table, tail := splitDoc(t)
	want := catalogueTable(Catalogue())
	if table == want {
		return
	}
	if testutil.Updating() {
		if err := os.WriteFile(docPath(), []byte(head+want+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the catalogue table of %s: review the diff", docPath())
		return
	}
	t.Errorf("the catalogue table of %s is not the catalogue: run `GOLDIE_UPDATE=1 go test ./conformance/ -run TestConformanceDocListsTheCatalogue` and review the diff.\nwant:\n%s\ngot:\n%s", docPath(), want, table)
}

func TestCatalogueTableNamesEveryCheck(t *testing.T) {
	tab := catalogueTable(Catalogue())
	for _, c := range Catalogue() {
		if !strings.Contains(tab, "| `"+c.ID+"` | "+string(c.Level)+" |") {
			t.Errorf("%s is not in the table", c.ID)
		}
	}
	if n := strings.Count(tab, "\n"); n != len(Catalogue())+2 {
		t.Errorf("%d table lines for %d checks", n, len(Catalogue()))
	}
}

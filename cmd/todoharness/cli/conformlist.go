package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/internal/buildinfo"
	"github.com/todoharness/todoharness/internal/termtext"
)

// listedCheck is a check as `conform --list --json` prints it: the check
// and the IDs of the listed cases that feed it.
type listedCheck struct {
	conformance.Check
	FedBy []string `json:"fedBy"`
}

// catalogueListing is `conform --list --json`: the catalogue (as narrowed)
// and the cases, with the versions that identify them.
type catalogueListing struct {
	ToolVersion      string              `json:"toolVersion"`
	CatalogueVersion int                 `json:"catalogueVersion"`
	Checks           []listedCheck       `json:"checks"`
	Cases            []*conformance.Case `json:"cases"`
}

// listCatalogue is `conform --list`: the checks and the cases, as a table
// or (--json FILE, - for stdout) as JSON. The cases are those --case and
// --check select; the checks those --check names (only, nil: all) that the
// listed cases feed — all of them when neither flag narrows the list.
func listCatalogue(ctx context.Context, out io.Writer, o *conformOptions, cat []conformance.Check, cases []*conformance.Case, only []string) error {
	var checks []listedCheck
	for _, c := range cat {
		if only != nil && !slices.Contains(only, c.ID) {
			continue
		}
		lc := listedCheck{Check: c, FedBy: []string{}}
		for _, cs := range cases {
			if c.Always || cs.Feeds(c.ID) {
				lc.FedBy = append(lc.FedBy, cs.ID)
			}
		}
		if len(o.only) > 0 && len(lc.FedBy) == 0 {
			continue // --case: the checks the selected cases feed
		}
		checks = append(checks, lc)
	}
	if o.jsonOut == "" {
		return printCatalogue(out, checks, cases)
	}
	l := catalogueListing{ToolVersion: buildinfo.Version(), CatalogueVersion: conformance.CatalogueVersion, Checks: checks, Cases: cases}
	write := func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("conform: --list --json: %w", err)
		}
		return nil
	}
	if o.jsonOut == "-" {
		return write(termtext.Unwrap(out))
	}
	return writeReportFile(ctx, o.jsonOut, write)
}

func printCatalogue(w io.Writer, checks []listedCheck, cases []*conformance.Case) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLEVEL\tDIALECTS\tCHECKS THAT")
	for _, c := range checks {
		d := "all"
		if len(c.Dialects) > 0 {
			d = strings.Join(c.Dialects, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, c.Level, d, c.Title)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "CASE\tFEEDS\tSOURCE\tTITLE")
	for _, c := range cases {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, strings.Join(c.Checks, ","), c.Source, c.Title)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("conform: %w", err)
	}
	fmt.Fprintln(w, "\nSPEC SENTENCES")
	for _, c := range checks {
		fmt.Fprintf(w, "%s (%s):\n    %s\n", c.ID, c.Source, c.Spec)
	}
	fmt.Fprintf(w, "\ncatalogue version %d (todoharness %s)\n", conformance.CatalogueVersion, buildinfo.Version())
	return nil
}

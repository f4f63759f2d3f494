package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/driver"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
)

// flagValues are the values a shell completes for a flag of that name,
// wherever it appears (`todoharness completion bash|zsh|fish|powershell`
// prints the script).
func flagValues() map[string]func() []string {
	return map[string]func() []string{
		"preset": driver.PresetNames,
		"format": report.Formats,
		"policy": func() []string {
			return []string{conformance.PolicySingle, conformance.PolicyParallel, conformance.PolicyAuto}
		},
		"dialect": func() []string {
			var out []string
			for _, d := range driver.Dialects() {
				out = append(out, d.Name)
			}
			return out
		},
		"check": func() []string { return conformance.CheckIDs(conformance.Catalogue()) },
		"case": func() []string {
			cs, err := conformance.LoadCases(conformancefixtures.FS, ".")
			if err != nil {
				return nil
			}
			return caseIDs(cs)
		},
	}
}

// registerCompletions gives every command under root that has one of the
// flags of flagValues its values' completion.
func registerCompletions(root *cobra.Command) {
	values := flagValues()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, vals := range values {
			if c.Flags().Lookup(name) == nil {
				continue
			}
			_ = c.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
				var out []cobra.Completion
				for _, v := range vals() {
					if strings.HasPrefix(v, prefix) {
						out = append(out, v)
					}
				}
				return out, cobra.ShellCompDirectiveNoFileComp
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

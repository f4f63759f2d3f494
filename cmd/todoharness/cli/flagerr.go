package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/todoharness/todoharness/driver"
)

// flagError adds to pflag's "unknown flag: --agnet" the flag most likely
// meant ("did you mean --agent?") and where to see them all.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	hint := ""
	if s := driver.Suggest(name, names, "flags"); strings.HasPrefix(s, ": did you mean ") {
		// Only the suggestion: the list of every flag is --help's.
		best := strings.TrimSuffix(strings.TrimPrefix(s[:strings.Index(s, "?")+1], ": did you mean "), "?")
		hint = fmt.Sprintf(": did you mean --%s?", best)
	}
	return fmt.Errorf("%s: unknown flag --%s%s (%s --help lists them)", cmd.CommandPath(), name, hint, cmd.CommandPath())
}

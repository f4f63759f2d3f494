package cli

import "github.com/spf13/cobra"

// subcommand is a top-level command by name, built only when asked for.
type subcommand struct {
	name  string
	build func() *cobra.Command
}

// subcommandList lists the top-level commands, in the order help shows
// them.
func subcommandList() []subcommand {
	return []subcommand{
		{"log", newLogCmd},
		{"mock", newMockCmd},
		{"agent", newAgentCmd},
		{"chat", newChatCmd},
		{"conform", newConformCmd},
		{"peers", newPeersCmd},
		{"record", newRecordCmd},
		{"replay", newReplayCmd},
		{"cassette", newCassetteCmd},
		{"snapshot", newSnapshotCmd},
	}
}

// subcommands builds the top-level commands.
func subcommands() []*cobra.Command {
	var out []*cobra.Command
	for _, s := range subcommandList() {
		out = append(out, s.build())
	}
	return out
}

// rootFor is the command that runs args: when they begin with a
// top-level command's name, the root with that command alone (it runs,
// parses and prints as in the whole tree, and the others' flags, help and
// completions are not built: the in-process reference agent is a
// `todoharness agent` started for each case, and the whole tree was about
// 40% of its start's CPU), else the whole tree (help, completion,
// --version, a typo).
func rootFor(args []string) *cobra.Command {
	if len(args) > 0 {
		for _, s := range subcommandList() {
			if s.name == args[0] {
				return newRoot([]*cobra.Command{s.build()})
			}
		}
	}
	return NewRootCmd()
}

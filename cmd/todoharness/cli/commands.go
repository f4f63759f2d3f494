package cli

import "github.com/spf13/cobra"

// subcommands lists the top-level commands.
func subcommands() []*cobra.Command {
	return []*cobra.Command{
		newLogCmd(),
		newMockCmd(),
		newAgentCmd(),
		newChatCmd(),
		newConformCmd(),
		newPeersCmd(),
		newRecordCmd(),
		newReplayCmd(),
		newCassetteCmd(),
		newSnapshotCmd(),
	}
}

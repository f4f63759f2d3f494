//go:build !linux

package cli

// isTerminal is false off Linux: the summary is printed without colour.
func isTerminal(uintptr) bool { return false }

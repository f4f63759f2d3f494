//go:build race

package selfexec

const raceEnabled = true

package cassette

// Mode is what a cassette transport does with requests: a recording
// Recorder (package record) or a replaying Player (package replay).
type Mode int

// Modes.
const (
	// ModeReplay answers from the cassette only; nothing leaves the process.
	ModeReplay Mode = iota
	// ModeRecord sends every request to the real transport and saves the
	// exchanges on Stop.
	ModeRecord
)

func (m Mode) String() string {
	if m == ModeRecord {
		return "record"
	}
	return "replay"
}

package driver

// Step operations, as in the interop input.json files.
const (
	OpInitialize  = "initialize"
	OpNewSession  = "newSession"
	OpPrompt      = "prompt"
	OpRestart     = "restart"
	OpLoadSession = "loadSession"
)

// Step is one ACP action a driver sends: a conformance case's, a snapshot
// or e2e scenario's (input.json).
type Step struct {
	Op   string `yaml:"op" json:"op"`
	Text string `yaml:"text,omitempty" json:"text,omitempty"`
	// Cancel (prompt steps): once the agent has shown that it took the
	// turn's first model turn that calls tools (the write) — a plan, a
	// final tool_call_update (completed or failed) for each of its calls,
	// or the model receiving one of their results — the runner sends
	// session/cancel, then waits for the prompt's answer (the turn's later
	// script turns may never be asked for). When the answer comes first,
	// no cancel is sent (StepResult.CancelSeq -1).
	Cancel bool `yaml:"cancel,omitempty" json:"cancel,omitempty"`
}

// stepRequest is the ACP request of a step: the initialize of offer, the
// others in the protocol version the process negotiated (version): on
// ACPv2 a load is session/resume replaying from the start.
func stepRequest(st Step, sessionID, cwd string, offer Offer, version int) (string, any) {
	switch st.Op {
	case OpInitialize:
		return "initialize", offer.initializeParams()
	case OpNewSession:
		return "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}
	case OpLoadSession:
		if version == ACPv2 {
			return "session/resume", map[string]any{"sessionId": sessionID, "cwd": cwd, "mcpServers": []any{}, "replayFrom": map[string]any{"type": "start"}}
		}
		return "session/load", map[string]any{"sessionId": sessionID, "cwd": cwd, "mcpServers": []any{}}
	default: // prompt
		return "session/prompt", map[string]any{
			"sessionId": sessionID,
			"prompt":    []any{map[string]any{"type": "text", "text": st.Text}},
		}
	}
}

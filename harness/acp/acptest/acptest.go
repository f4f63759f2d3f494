package acptest

import (
	"context"
	"github.com/todoharness/todoharness/harness/acp/transcript"
	"io"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/acp/acpclient"
)

// Conn is acpclient.Conn: a client connection with its recorder and wire tee.
type Conn = acpclient.Conn

// Served is acpclient.Served: an in-process bridge serving a Conn.
type Served = acpclient.Served

// Serve runs b on pipes and connects a recording client to it.
func Serve(ctx context.Context, b *acp.Bridge) *Served { return acpclient.Serve(ctx, b) }

// Connect starts a recording client that writes to toAgent (the agent's
// stdin) and reads from fromAgent (the agent's stdout).
func Connect(toAgent io.WriteCloser, fromAgent io.Reader) *Conn {
	return acpclient.Connect(toAgent, fromAgent)
}

// UpdateKinds returns the sessionUpdate discriminator of every session/update
// line of a raw transcript, in order (the raw wire is the truth: the SDK's
// decoder misfiles unknown kinds).
func UpdateKinds(lines [][]byte) []string {
	var out []string
	for _, l := range lines {
		if kind, isUpdate, err := transcript.UpdateKind(l); err == nil && isUpdate {
			out = append(out, kind)
		}
	}
	return out
}

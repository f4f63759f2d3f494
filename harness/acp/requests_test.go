package acp_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	sdk "github.com/coder/acp-go-sdk"
)

// session/new with a cwd that is a regular file is refused with -32602
// naming the field; a folder is accepted.
func TestNewSessionRefusesACwdThatIsNotADirectory(t *testing.T) {
	r := start(t, "", newFake())
	file := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(file, []byte("root:x:0:0::/root:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := r.conn.NewSessionIn(r.ctx, file)
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "cwd must be a directory") {
		t.Fatalf("session/new with a file as cwd: %v, want -32602 saying cwd must be a directory", err)
	}
	if _, err := r.conn.NewSessionIn(r.ctx, t.TempDir()); err != nil {
		t.Fatalf("session/new with a folder: %v", err)
	}
}

// A request with "id": null is answered with an Invalid Request error
// (id null), as JSON-RPC 2.0 says, and the agent keeps serving.
func TestARequestWithANullIDIsAnsweredInvalidRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := start(t, "", newFake())
		if err := r.conn.WriteRaw(`{"jsonrpc":"2.0","id":null,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[]}}` + "\n"); err != nil {
			t.Fatal(err)
		}
		_, e := answerTo(t, r, "null")
		if e == nil || e.Code != -32600 || !strings.Contains(e.Message, "Invalid request") {
			t.Fatalf("answer to id null: %+v, want -32600 Invalid request", e)
		}
		r.newSession()
	})
}

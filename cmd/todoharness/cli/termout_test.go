package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// hostileAgent writes an agent that answers initialize with an agentInfo
// holding escape sequences and forged workflow commands, then refuses
// session/new with an error message of the same kind.
func hostileAgent(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.sh")
	script := `id() { printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }
read l; printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentInfo":{"name":"evil","version":"1.0\\n::error title=forged::pwned \\u001b]52;c;ZXZpbA==\\u0007 \\u001b[2J \\u202e\\r##[error]x"}}}\n' "$(id "$l")"
read l; printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"no\\n::stop-commands::x \\u001b]0;title\\u0007 \\u009b31m"}}\n' "$(id "$l")"
read l
`
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// ourCommand is a workflow command conform writes itself: an annotation
// titled by a check ID, by the run's verdict, or by a case whose step was
// never reached (its ID escaped, so no agent text can end the title).
var ourCommand = regexp.MustCompile(`^::(error|warning|notice) title=([A-Z]+-[A-Z0-9-]+|conform [A-Z]+|case [a-z0-9._-]+%3A step never reached)::`)

// What an agent says (its agentInfo, its error messages) reaches stdout
// and stderr as text: no escape sequence, no carriage return, and in a
// GitHub Actions log no line that reads as a workflow command but the
// annotations conform writes.
func TestConformShowsAgentTextNeverActsOnIt(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test starts agent processes")
	}
	agent := hostileAgent(t)
	for _, format := range []string{"text", "github"} {
		t.Run(format, func(t *testing.T) {
			var out, errw bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			code := Run(ctx, []string{"conform", "--agent", "sh " + agent, "--case", "tool-offered", "--dialect", "todo_write", "--format", format, "--timeout", "20s"},
				strings.NewReader(""), &out, &errw)
			if code != 1 {
				t.Errorf("exit %d, want 1 (the agent refuses session/new)", code)
			}
			all := out.String() + errw.String()
			for _, bad := range []string{"\x1b", "\r", "\u202e", "\u009b", "\a"} {
				if strings.Contains(all, bad) {
					t.Errorf("the output holds %q raw:\n%s", bad, all)
				}
			}
			for _, l := range strings.Split(all, "\n") {
				s := strings.TrimLeft(l, " \t\u00a0")
				if (strings.HasPrefix(s, "::") || strings.HasPrefix(s, "##[")) && !ourCommand.MatchString(l) {
					t.Errorf("a line reads as a workflow command conform did not write: %q\n%s", l, all)
				}
			}
			if want := `agent info: evil 1.0\n::error title=forged::pwned \x1b]52;c;ZXZpbA==\x07 \x1b[2J \u202e\r##[error]x (its initialize answer)`; !strings.Contains(out.String(), want) {
				t.Errorf("stdout does not show the agentInfo as text, want %q:\n%s", want, out.String())
			}
			if !strings.Contains(all, `no ::stop-commands::x \x1b]0;title\x07 \u009b31m`) {
				t.Errorf("the error message is not shown as text:\n%s", all)
			}
		})
	}
}

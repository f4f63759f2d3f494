package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/acp/acptest"
	"github.com/todoharness/todoharness/harness/acp/transcript"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	"github.com/todoharness/todoharness/mockmodel"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// projectCwd is the cwd the in-process specs send; goldens show {{cwd}}.
const projectCwd = "/work/project"

func fixture(name string) string {
	return filepath.Join(testutil.RepoRoot(), "fixtures", "replay", name)
}

// specCtx is a context bounded by the spec's own time budget.
func specCtx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	DeferCleanup(cancel)
	return ctx
}

// serveBridge serves a fresh bridge over the sessions directory dir with the
// scripted model of fixtures/replay/<script> ("" for a script with no turns:
// a bridge that only loads). The bridge is closed at the end of the spec
// unless the spec closed it first.
func serveBridge(ctx context.Context, dir, script string, faults string) *acptest.Served {
	GinkgoHelper()
	srv := acptest.Serve(ctx, newBridge(dir, script, faults))
	DeferCleanup(func() { closeBridge(srv) })
	_, err := srv.Init(ctx)
	Expect(err).NotTo(HaveOccurred(), "initialize")
	return srv
}

// newBridge is a bridge over the sessions directory dir with the scripted
// model of fixtures/replay/<script> ("": no turns) and faults.
func newBridge(dir, script string, faults string) *acp.Bridge {
	GinkgoHelper()
	s := &mockmodel.Script{Name: "empty"}
	if script != "" {
		var err error
		s, err = mockmodel.LoadScript(fixture(script))
		Expect(err).NotTo(HaveOccurred())
	}
	reg, err := builtin.Compose("")
	Expect(err).NotTo(HaveOccurred())
	fs, err := acp.ParseFaults(faults)
	Expect(err).NotTo(HaveOccurred())
	b, err := acp.New(acp.Config{
		Sessions: session.Dir{Path: dir},
		Model:    mockmodel.NewModel(s),
		Tools:    reg,
		Faults:   fs,
	})
	Expect(err).NotTo(HaveOccurred())
	return b
}

// closeBridge drops a bridge as an editor does: its input closes, and it
// must flush its sessions and return.
func closeBridge(s *acptest.Served) {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	Expect(s.Close(ctx)).To(Succeed())
}

// indexOf returns the index of the first wire line containing sub, or -1.
func indexOf(lines [][]byte, sub string) int {
	for i, l := range lines {
		if bytes.Contains(l, []byte(sub)) {
			return i
		}
	}
	return -1
}

// lastIndexOf returns the index of the last wire line containing sub, or -1.
func lastIndexOf(lines [][]byte, sub string) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if bytes.Contains(lines[i], []byte(sub)) {
			return i
		}
	}
	return -1
}

// planEntries is what a plan update carries, as a comparable value.
type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

// wirePlans returns the entries of every plan update on a raw wire.
func wirePlans(lines [][]byte) [][]planEntry {
	var out [][]planEntry
	for _, u := range wireUpdates(lines) {
		if u.Kind != "plan" {
			continue
		}
		var p struct {
			Entries []planEntry `json:"entries"`
		}
		Expect(json.Unmarshal(u.Raw, &p)).To(Succeed())
		out = append(out, p.Entries)
	}
	return out
}

type wireUpdate struct {
	Kind string
	Raw  json.RawMessage
}

// wireUpdates returns the session/update payloads of a raw wire, in order.
func wireUpdates(lines [][]byte) []wireUpdate {
	var out []wireUpdate
	for _, l := range lines {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update json.RawMessage `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(l, &m) != nil || m.Method != sdk.ClientMethodSessionUpdate {
			continue
		}
		var k struct {
			Kind string `json:"sessionUpdate"`
		}
		Expect(json.Unmarshal(m.Params.Update, &k)).To(Succeed())
		out = append(out, wireUpdate{Kind: k.Kind, Raw: m.Params.Update})
	}
	return out
}

// sdkEntries converts the SDK's plan entries.
func sdkEntries(p *sdk.SessionUpdatePlan) []planEntry {
	out := []planEntry{}
	for _, e := range p.Entries {
		out = append(out, planEntry{Content: e.Content, Priority: string(e.Priority), Status: string(e.Status)})
	}
	return out
}

func entriesOf(todos []session.TodoItem) []planEntry {
	out := []planEntry{}
	for _, t := range todos {
		out = append(out, planEntry{Content: t.Content, Priority: "medium", Status: t.Status})
	}
	return out
}

// assertTranscript compares the normalised transcript with
// golden/replay/<name>.golden.
func assertTranscript(name string, cwds []string, segments ...[][]byte) {
	GinkgoHelper()
	got, err := transcript.Normalizer{Cwds: cwds}.Normalize(segments...)
	Expect(err).NotTo(HaveOccurred())
	// The agent's version is the build's (`todoharness --version`: a
	// release, or "(devel)" and the revision): not part of the claim.
	got = agentVersion.ReplaceAll(got, []byte(`"agentInfo":{"name":"todoharness","version":"{{version}}"}`))
	testutil.AssertGolden(GinkgoTB(), "replay", name, got)
}

// agentVersion is the agentInfo of the reference agent, whatever its version.
var agentVersion = regexp.MustCompile(`"agentInfo":\{"name":"todoharness","version":"[^"]*"\}`)

// --- the agent binary ---

// agentProc is a `todoharness agent` process driven over its stdio.
type agentProc struct {
	*acptest.Conn
	cmd    *exec.Cmd
	stderr *testutil.SyncBuffer
	done   chan struct{}
	err    error // Wait's result, set before done closes
}

// startAgent runs `todoharness agent` (this test binary, see TestMain) in cwd with args and extra env, and connects a
// recording ACP client to its stdio. Its stderr (the agent's logs) is kept
// and shown in the spec's output.
func startAgent(cwd string, env []string, args ...string) *agentProc {
	GinkgoHelper()
	p, stdin, stdout := launchAgent(cwd, env, args...)
	p.Conn = acptest.Connect(stdin, stdout)
	return p
}

// launchAgent starts `todoharness agent` as startAgent does and returns
// its stdin and stdout for the caller's client.
func launchAgent(cwd string, env []string, args ...string) (*agentProc, io.WriteCloser, io.Reader) {
	GinkgoHelper()
	cmd := exec.Command(selfexec.Path(), append([]string{"agent"}, args...)...)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "DEEPSEEK_API_KEY=", "TODOHARNESS_FAULT=")
	cmd.Env = append(cmd.Env, selfexec.Environ("todoharness")...)
	cmd.Env = append(cmd.Env, env...)
	stdin, err := cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	outR, outW, err := os.Pipe()
	Expect(err).NotTo(HaveOccurred())
	cmd.Stdout = outW
	p := &agentProc{cmd: cmd, stderr: &testutil.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	Expect(cmd.Start()).To(Succeed())
	Expect(outW.Close()).To(Succeed()) // the child holds the write end
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	DeferCleanup(func() {
		p.kill()
		_ = outR.Close()
		AddReportEntry("agent stderr", p.stderr.String(), ReportEntryVisibilityFailureOrVerbose)
	})
	return p, stdin, outR
}

// stop closes the agent's stdin and waits up to grace for it to exit, as an
// editor shuts an agent down; it reports the exit code, or -1 when the agent
// had to be killed.
func (p *agentProc) stop(grace time.Duration) int {
	_ = p.CloseInput()
	select {
	case <-p.done:
		return exitCode(p.err)
	case <-time.After(grace):
		p.kill()
		return -1
	}
}

// kill SIGKILLs the agent (if still running) and waits for it.
func (p *agentProc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -2
}

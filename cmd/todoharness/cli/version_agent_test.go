package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/internal/buildinfo"
)

// The reference agent's agentInfo gives the version --version prints.
func TestAgentInfoIsTheVersion(t *testing.T) {
	b := inProcessReport(t, "ACP-INIT-1")
	var r struct {
		ToolVersion string `json:"toolVersion"`
		AgentInfo   struct{ Name, Version string }
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.AgentInfo.Name != "todoharness" || r.AgentInfo.Version != buildinfo.Version() || r.ToolVersion != r.AgentInfo.Version {
		t.Errorf("agentInfo %s %q, toolVersion %q: want the version --version prints, %q", r.AgentInfo.Name, r.AgentInfo.Version, r.ToolVersion, buildinfo.Version())
	}
}

// The reference agent conform runs keeps its sessions, thrown away with the
// case's directory, without fsync (its ready line says so), and a load
// still replays them.
func TestConformRunsTheReferenceAgentWithoutFsync(t *testing.T) {
	b := inProcessReport(t, "TW-LOAD-1")
	var r struct {
		Cases []struct {
			ID         string
			StderrTail []string
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Cases) == 0 {
		t.Fatal("no case in the report")
	}
	for _, c := range r.Cases {
		ready := ""
		for _, l := range c.StderrTail {
			if strings.Contains(l, "todoharness agent ready") {
				ready = l
			}
		}
		if !strings.Contains(ready, "fsync=false") {
			t.Errorf("case %s: the agent's ready line %q does not say fsync=false", c.ID, ready)
		}
	}
}

// inProcessReport is the JSON report of a passing in-process conform run of
// the cases that feed check.
func inProcessReport(t *testing.T, check string) []byte {
	t.Helper()
	report := filepath.Join(t.TempDir(), "r.json")
	var out strings.Builder
	if code := Run(context.Background(), []string{"conform", "-q", "--in-process", "--check", check, "--json", report}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

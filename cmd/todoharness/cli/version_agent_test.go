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
	report := filepath.Join(t.TempDir(), "r.json")
	var out strings.Builder
	if code := Run(context.Background(), []string{"conform", "-q", "--in-process", "--check", "ACP-INIT-1", "--json", report}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
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

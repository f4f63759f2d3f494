package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// auditCassette is a minimal valid cassette; prov is its provenance block.
func auditCassette(prov string) string {
	return "---\n" + prov + "version: 2\ninteractions:\n" +
		"    - id: 0\n      request:\n        method: POST\n        url: https://api.example.com/v1/chat/completions\n" +
		"      response:\n        code: 200\n        body: '{}'\n"
}

const auditProvenance = "provenance:\n    source: real-model\n    realModelOutput: true\n    description: d\n" +
	"    apiHost: api.example.com\n    baseURL: https://api.example.com/v1\n    model: m\n" +
	"    recordedAt: \"2026-01-01\"\n    toolVersion: t\n"

// auditTree writes files (path -> content) under a temporary folder and
// returns its scenarios and goldens folders.
func auditTree(t *testing.T, files map[string]string) (scenarios, goldens string) {
	t.Helper()
	root := t.TempDir()
	scenarios, goldens = filepath.Join(root, "fixtures"), filepath.Join(root, "golden")
	for _, d := range []string{scenarios, goldens} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return scenarios, goldens
}

func TestAudit(t *testing.T) {
	whole := func() map[string]string {
		m := map[string]string{
			"fixtures/README.md":           "# scenarios",
			"fixtures/plan/input.json":     `{"steps":[{"op":"initialize"}]}`,
			"fixtures/plan/cassette.yaml":  auditCassette(auditProvenance),
			"fixtures/.record-1/stray.txt": "a recording's temporary folder",
		}
		for _, v := range GoldenViews() {
			m["golden/plan."+v+".golden"] = "x\n"
		}
		return m
	}
	cases := []struct {
		name string
		edit func(m map[string]string)
		want []string // substrings of the error, with the tree's root as {root}
	}{
		{"a whole tree", func(map[string]string) {}, nil},
		{"a scenario folder without input.json", func(m map[string]string) {
			m["fixtures/half/cassette.yaml"] = auditCassette(auditProvenance)
		}, []string{"scenario folder {root}/fixtures/half has no input.json (a scenario is a folder holding input.json and cassette.yaml"}},
		{"a scenario folder without cassette.yaml", func(m map[string]string) {
			m["fixtures/half/input.json"] = `{"steps":[{"op":"initialize"}]}`
		}, []string{"scenario folder {root}/fixtures/half has no cassette.yaml"}},
		{"an empty scenario folder", func(m map[string]string) {
			m["fixtures/empty/.keep"] = ""
		}, []string{"{root}/fixtures/empty has no input.json", "{root}/fixtures/empty has no cassette.yaml"}},
		{"a golden without a scenario", func(m map[string]string) {
			m["golden/gone.acp.golden"] = "x\n"
		}, []string{"golden {root}/golden/gone.acp.golden without a scenario: there is no folder {root}/fixtures/gone"}},
		{"a golden of an unknown view", func(m map[string]string) {
			m["golden/plan.notes.golden"] = "x\n"
		}, []string{"golden {root}/golden/plan.notes.golden: not named <scenario>.<view>.golden with a view of acp, log, tools, system"}},
		{"a cassette without its provenance", func(m map[string]string) {
			m["fixtures/plan/cassette.yaml"] = auditCassette("")
		}, []string{"scenario {root}/fixtures/plan: cassette {root}/fixtures/plan/cassette.yaml is corrupt: no provenance block"}},
		{"a real-model claim recorded against a loopback address", func(m map[string]string) {
			m["fixtures/plan/cassette.yaml"] = auditCassette(strings.ReplaceAll(auditProvenance, "https://api.example.com/v1", "http://127.0.0.1:8080/v1"))
		}, []string{"fixtures/plan/cassette.yaml is corrupt: bad provenance block: provenance: claims realModelOutput: true but was recorded against a loopback address"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := whole()
			tc.edit(files)
			scenarios, goldens := auditTree(t, files)
			root := filepath.Dir(scenarios)
			err := Audit(scenarios, goldens)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("a whole tree: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			for _, w := range tc.want {
				if w = strings.ReplaceAll(w, "{root}", root); !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != len(tc.want) {
				t.Errorf("%d errors, want %d: %v", n, len(tc.want), err)
			}
		})
	}
	if err := Audit(filepath.Join(t.TempDir(), "absent"), t.TempDir()); err == nil || !strings.Contains(err.Error(), "audit e2e scenarios") {
		t.Errorf("a missing scenarios folder: %v", err)
	}
}

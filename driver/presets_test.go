package driver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/mockmodel"
)

// presetVars are the values every preset is rendered with in these tests.
func presetVars(t *testing.T) Vars {
	return Vars{BaseURL: "http://127.0.0.1:4242/v1", URL: "http://127.0.0.1:4242", Host: "127.0.0.1", Port: "4242",
		Cwd: t.TempDir(), Home: t.TempDir(), Case: "plan-basic", Model: "mock"}
}

func renderPreset(t *testing.T, name string) (Preset, Rendering, Vars) {
	t.Helper()
	p, err := PresetByName(name)
	if err != nil {
		t.Fatal(err)
	}
	v := presetVars(t)
	r, err := p.Render(v)
	if err != nil {
		t.Fatalf("%s: render: %v", name, err)
	}
	return p, r, v
}

func envOf(r Rendering) map[string]string {
	m := map[string]string{}
	for _, kv := range r.Env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func fileOf(t *testing.T, r Rendering, dest string) string {
	t.Helper()
	for _, f := range r.Files {
		if f.Dest == dest {
			return f.Content
		}
	}
	t.Fatalf("no file %s in %+v", dest, r.Files)
	return ""
}

func wantEnv(t *testing.T, r Rendering, want map[string]string) {
	t.Helper()
	env := envOf(r)
	for k, v := range want {
		if env[k] != v {
			t.Errorf("env %s = %q, want %q", k, env[k], v)
		}
	}
}

func TestPresetTable(t *testing.T) {
	seen := map[string]bool{}
	wires := map[string]bool{mockmodel.WireOpenAIChat: true, mockmodel.WireOpenAIResponses: true, mockmodel.WireAnthropic: true, mockmodel.WireGemini: true}
	for _, p := range Presets() {
		if seen[p.Name] {
			t.Errorf("duplicate preset %s", p.Name)
		}
		seen[p.Name] = true
		if !wires[p.Wire] {
			t.Errorf("%s: unknown wire %q", p.Name, p.Wire)
		}
		if _, err := DialectByName(p.Dialect); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if len(p.Command) == 0 || p.Agent == "" {
			t.Errorf("%s: no command or agent name", p.Name)
		}
		if p.Name != "reference" && (len(p.Install) == 0 || !p.Home || p.Timeout == 0) {
			t.Errorf("%s: a real agent's preset needs npm packages, a throw-away home and a timeout", p.Name)
		}
	}
	for _, n := range []string{"reference", "opencode", "codex", "gemini", "claude"} {
		if !seen[n] {
			t.Errorf("no preset %s", n)
		}
	}
	if _, err := PresetByName("nope"); err == nil || !strings.Contains(err.Error(), "opencode") {
		t.Errorf("unknown preset: %v", err)
	}
}

func TestPresetReference(t *testing.T) {
	p, r, v := renderPreset(t, "reference")
	if !p.Self || p.Home || len(r.Files) != 0 {
		t.Errorf("reference: self=%v home=%v files=%v", p.Self, p.Home, r.Files)
	}
	want := []string{"todoharness", "agent", "--model-url", "http://127.0.0.1:4242/v1", "--sessions", v.Cwd + "/.sessions", "--fsync=false"}
	if strings.Join(r.Argv, " ") != strings.Join(want, " ") {
		t.Errorf("argv %q", r.Argv)
	}
	wantEnv(t, r, map[string]string{ModelURLEnv: "http://127.0.0.1:4242/v1"})
	if _, ok := envOf(r)["HOME"]; ok {
		t.Error("reference preset sets HOME")
	}
}

func TestPresetOpencode(t *testing.T) {
	p, r, v := renderPreset(t, "opencode")
	if p.Wire != mockmodel.WireOpenAIChat || p.Dialect != DialectOpencode {
		t.Errorf("wire %s dialect %s", p.Wire, p.Dialect)
	}
	if strings.Join(r.Argv, " ") != "opencode acp" {
		t.Errorf("argv %q", r.Argv)
	}
	var cfg struct {
		Model    string `json:"model"`
		Provider map[string]struct {
			NPM     string `json:"npm"`
			Options struct {
				BaseURL string `json:"baseURL"`
				APIKey  string `json:"apiKey"`
			} `json:"options"`
			Models map[string]map[string]any `json:"models"`
		} `json:"provider"`
		Autoupdate *bool `json:"autoupdate"`
	}
	if err := json.Unmarshal([]byte(fileOf(t, r, "opencode.json")), &cfg); err != nil {
		t.Fatalf("opencode.json: %v", err)
	}
	prov, ok := cfg.Provider["todoharness"]
	if !ok || prov.Options.BaseURL != "http://127.0.0.1:4242/v1" || prov.NPM != "@ai-sdk/openai-compatible" || prov.Options.APIKey == "" {
		t.Errorf("provider %+v", cfg.Provider)
	}
	if cfg.Model != "todoharness/mock" || prov.Models["mock"] == nil || prov.Models["mock"]["tool_call"] != true {
		t.Errorf("model %q, models %v", cfg.Model, prov.Models)
	}
	if cfg.Autoupdate == nil || *cfg.Autoupdate {
		t.Error("autoupdate not off")
	}
	wantEnv(t, r, map[string]string{"HOME": v.Home, "XDG_CONFIG_HOME": v.Home + "/.config", "OPENCODE_DISABLE_AUTOUPDATE": "1"})
}

// TestPresetOpencodeInstallsNothing: opencode 1.18's Npm.install (read in its
// binary) skips a config folder that has a node_modules and a
// package-lock.json whose packages[""] lists every dependency of its
// package.json and @opencode-ai/plugin (the package it adds); anything less
// and every case downloads the plugin SDK from the npm registry.
func TestPresetOpencodeInstallsNothing(t *testing.T) {
	_, r, _ := renderPreset(t, "opencode")
	deps := func(dest string, lock bool) map[string]bool {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(fileOf(t, r, dest)), &doc); err != nil {
			t.Fatalf("%s: %v", dest, err)
		}
		raw := doc["dependencies"]
		if lock {
			var pkgs map[string]map[string]json.RawMessage
			if err := json.Unmarshal(doc["packages"], &pkgs); err != nil {
				t.Fatalf("%s: packages: %v", dest, err)
			}
			raw = pkgs[""]["dependencies"]
		}
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: dependencies: %v", dest, err)
		}
		names := map[string]bool{}
		for k := range m {
			names[k] = true
		}
		return names
	}
	want := deps("~/.config/opencode/package.json", false)
	want["@opencode-ai/plugin"] = true
	locked := deps("~/.config/opencode/package-lock.json", true)
	for name := range want {
		if !locked[name] {
			t.Errorf("package-lock.json's packages[\"\"] lacks %s: opencode would npm-install it in every case", name)
		}
	}
	if !strings.HasPrefix(fileOf(t, r, "~/.config/opencode/node_modules/README"), "written by todoharness") {
		t.Error("no file makes ~/.config/opencode/node_modules exist")
	}
}

// TestPresetOpencodeEmptyModelsCatalogue: opencode 1.18 reads its
// models.dev catalogue from OPENCODE_MODELS_PATH and, without one, builds
// the one compiled into it for every working directory it opens (about
// 0.8 s of CPU a session, docs/performance.md). The preset names an empty
// catalogue the target writes into the home, so the mock's provider must
// be defined whole in opencode.json: its SDK, its model and the model's
// tool calls.
func TestPresetOpencodeEmptyModelsCatalogue(t *testing.T) {
	p, _, v := renderPreset(t, "opencode")
	got, err := p.Target().resolve(v)
	if err != nil {
		t.Fatal(err)
	}
	var path string
	for _, kv := range got.env {
		if rest, ok := strings.CutPrefix(kv, "OPENCODE_MODELS_PATH="); ok {
			path = rest
		}
	}
	if path == "" || !strings.HasPrefix(path, v.Home+"/") {
		t.Fatalf("OPENCODE_MODELS_PATH = %q, want a file in the case's home %s", path, v.Home)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the catalogue OPENCODE_MODELS_PATH names was not written: %v", err)
	}
	var providers map[string]json.RawMessage
	if err := json.Unmarshal(b, &providers); err != nil || providers == nil || len(providers) != 0 {
		t.Errorf("%s = %q (%v), want an empty JSON object: no provider but opencode.json's", path, b, err)
	}
	cfg, err := os.ReadFile(filepath.Join(v.Cwd, "opencode.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		EnabledProviders []string `json:"enabled_providers"`
		Provider         map[string]struct {
			NPM    string `json:"npm"`
			Models map[string]struct {
				Name     string `json:"name"`
				ToolCall bool   `json:"tool_call"`
			} `json:"models"`
		} `json:"provider"`
	}
	if err := json.Unmarshal(cfg, &c); err != nil {
		t.Fatalf("opencode.json: %v", err)
	}
	m := c.Provider["todoharness"].Models[v.Model]
	if !slices.Equal(c.EnabledProviders, []string{"todoharness"}) || c.Provider["todoharness"].NPM == "" || m.Name == "" || !m.ToolCall {
		t.Errorf("opencode.json does not define the mock's provider whole: %s", cfg)
	}
}

// TestPresetOpencodeWithoutOptimisingJIT: opencode's Bun starts without
// JavaScriptCore's DFG and FTL tiers, which cost a short-lived process
// more CPU in compiling than they save (docs/performance.md).
func TestPresetOpencodeWithoutOptimisingJIT(t *testing.T) {
	_, r, _ := renderPreset(t, "opencode")
	wantEnv(t, r, map[string]string{"BUN_JSC_useDFGJIT": "0"})
}

func TestPresetCodex(t *testing.T) {
	p, r, v := renderPreset(t, "codex")
	if p.Wire != mockmodel.WireOpenAIResponses || p.Dialect != DialectCodex {
		t.Errorf("wire %s dialect %s", p.Wire, p.Dialect)
	}
	if strings.Join(r.Argv, " ") != "codex-acp" {
		t.Errorf("argv %q", r.Argv)
	}
	toml := fileOf(t, r, "~/.codex/config.toml")
	for _, line := range []string{
		`model = "mock"`,
		`model_provider = "todoharness"`,
		`[model_providers.todoharness]`,
		`base_url = "http://127.0.0.1:4242/v1"`,
		`env_key = "TODOHARNESS_MOCK_API_KEY"`,
		`wire_api = "responses"`,
		`[projects."` + v.Cwd + `"]`,
	} {
		if !strings.Contains(toml, "\n"+line+"\n") {
			t.Errorf("config.toml lacks the line %s:\n%s", line, toml)
		}
	}
	wantEnv(t, r, map[string]string{"CODEX_HOME": v.Home + "/.codex", "TODOHARNESS_MOCK_API_KEY": "mock", "HOME": v.Home})
}

func TestPresetGemini(t *testing.T) {
	p, r, v := renderPreset(t, "gemini")
	if p.Wire != mockmodel.WireGemini || p.Dialect != DialectGemini {
		t.Errorf("wire %s dialect %s", p.Wire, p.Dialect)
	}
	if strings.Join(r.Argv, " ") != "gemini --acp" {
		t.Errorf("argv %q", r.Argv)
	}
	var settings struct {
		Security struct {
			Auth struct {
				SelectedType string `json:"selectedType"`
			} `json:"auth"`
		} `json:"security"`
		Model struct {
			Name string `json:"name"`
		} `json:"model"`
	}
	if err := json.Unmarshal([]byte(fileOf(t, r, "~/.gemini/settings.json")), &settings); err != nil {
		t.Fatalf("settings.json: %v", err)
	}
	if settings.Security.Auth.SelectedType != "gemini-api-key" || settings.Model.Name == "" {
		t.Errorf("settings %+v", settings)
	}
	// The Gemini SDK appends /v1beta/models/...: the base URL has no /v1.
	wantEnv(t, r, map[string]string{"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:4242", "GEMINI_API_KEY": "mock", "HOME": v.Home})
}

func TestPresetClaude(t *testing.T) {
	p, r, v := renderPreset(t, "claude")
	if p.Wire != mockmodel.WireAnthropic || p.Dialect != DialectClaude {
		t.Errorf("wire %s dialect %s", p.Wire, p.Dialect)
	}
	if strings.Join(r.Argv, " ") != "claude-code-acp" || len(r.Files) != 0 {
		t.Errorf("argv %q files %v", r.Argv, r.Files)
	}
	// The Anthropic SDK appends /v1/messages: the base URL has no /v1.
	wantEnv(t, r, map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:4242", "ANTHROPIC_API_KEY": "mock",
		"CLAUDE_CONFIG_DIR": v.Home + "/.claude", "IS_SANDBOX": "1", "HOME": v.Home})
}

// The presets of the agents no test here runs (issue 41.5): claude-agent-acp
// wired as claude-code-acp is; Qwen Code with its todo_write turned on in
// its settings, its own OpenAI-compatible provider, and the qwen dialect.
func TestPresetClaudeAgentAndQwen(t *testing.T) {
	p, r, v := renderPreset(t, "claude-agent")
	old, _, _ := renderPreset(t, "claude")
	if p.Wire != old.Wire || p.Dialect != DialectClaude || strings.Join(r.Argv, " ") != "claude-agent-acp" || !slices.Equal(p.Env, old.Env) {
		t.Errorf("claude-agent: wire %s dialect %s argv %q env %v; want claude's wiring", p.Wire, p.Dialect, r.Argv, p.Env)
	}
	p, r, v = renderPreset(t, "qwen")
	if p.Wire != mockmodel.WireOpenAIChat || p.Dialect != DialectQwen || strings.Join(r.Argv, " ") != "qwen --acp" {
		t.Errorf("qwen: wire %s dialect %s argv %q", p.Wire, p.Dialect, r.Argv)
	}
	wantEnv(t, r, map[string]string{"OPENAI_BASE_URL": v.BaseURL, "OPENAI_API_KEY": "mock", "HOME": v.Home})
	if len(r.Files) != 1 || r.Files[0].Dest != "~/.qwen/settings.json" {
		t.Fatalf("qwen files %v", r.Files)
	}
	var set struct {
		Tools struct {
			TodoWrite struct {
				Enabled bool `json:"enabled"`
			} `json:"todoWrite"`
		} `json:"tools"`
		Memory map[string]bool `json:"memory"`
	}
	if err := json.Unmarshal([]byte(r.Files[0].Content), &set); err != nil || !set.Tools.TodoWrite.Enabled || set.Memory["enableManagedAutoMemory"] {
		t.Errorf("qwen settings (%v): %s", err, r.Files[0].Content)
	}
}

// The presets' targets really write their files where Render says: the
// cwd, or the throw-away home for ~/ destinations, and never the other.
func TestPresetTargetsWriteFiles(t *testing.T) {
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			v := presetVars(t)
			want, err := p.Render(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Target().resolve(v)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range want.Files {
				path := filepath.Join(v.Cwd, f.Dest)
				if rest, ok := strings.CutPrefix(f.Dest, "~/"); ok {
					path = filepath.Join(v.Home, rest)
				}
				b, err := os.ReadFile(path)
				if err != nil || string(b) != f.Content {
					t.Errorf("%s: %v\n%s", path, err, b)
				}
			}
			env := strings.Join(got.env, "\n")
			for _, kv := range want.Env {
				if !strings.Contains(env, kv) {
					t.Errorf("resolved env lacks %s", kv)
				}
			}
			if strings.Join(got.argv, " ") != strings.Join(want.Argv, " ") {
				t.Errorf("argv %q, rendered %q", got.argv, want.Argv)
			}
		})
	}
}

func TestPresetExplain(t *testing.T) {
	for _, p := range Presets() {
		var b bytes.Buffer
		if err := p.WriteExplain(&b, ExplainVars("")); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, s := range []string{"preset " + p.Name, "wire API:  " + p.Wire, "dialect:   " + p.Dialect, "http://127.0.0.1:PORT"} {
			if !strings.Contains(out, s) {
				t.Errorf("%s: explain lacks %q:\n%s", p.Name, s, out)
			}
		}
		for _, f := range p.Files {
			if !strings.Contains(out, "file "+f.Dest) {
				t.Errorf("%s: explain does not show file %s", p.Name, f.Dest)
			}
		}
		for _, kv := range p.Env {
			k, _, _ := strings.Cut(kv, "=")
			if !strings.Contains(out, "    "+k+"=") {
				t.Errorf("%s: explain does not show env %s", p.Name, k)
			}
		}
	}
	var b bytes.Buffer
	if err := WritePresetTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, p := range Presets() {
		if !strings.Contains(b.String(), p.Name) || !strings.Contains(b.String(), p.Wire) {
			t.Errorf("table lacks %s/%s:\n%s", p.Name, p.Wire, b.String())
		}
	}
}

package driver

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/todoharness/todoharness/mockmodel"
)

// Preset is the wiring that points one known agent at the mock model: its
// command line, the environment and the configuration files that make it
// talk to {{.BaseURL}} / {{.URL}} instead of its vendor, in a throw-away
// home so that the user's own configuration is neither read nor touched.
// Presets are data (the table in Presets); `todoharness conform --preset
// NAME` runs one, `--preset NAME --explain` prints what it does, and
// `make peers` runs them against the public agents it can install.
//
// The runner answers every session/request_permission with an allow option
// (allow_once first, then allow_always), so no preset has to turn its
// agent's approvals off.
type Preset struct {
	// Name is the --preset value.
	Name string `json:"name"`
	// Agent names the agent the preset drives; Package is where it comes
	// from (informative).
	Agent   string `json:"agent"`
	Package string `json:"package,omitempty"`
	// Command is the default argv (templated); --agent replaces it.
	// Self marks a Command whose first word is replaced by the running
	// todoharness executable (the reference agent).
	Command []string `json:"command"`
	Self    bool     `json:"self,omitempty"`
	// Wire is the model API the agent speaks to the mock
	// (mockmodel.WireOpenAIChat, ...); Dialect the todo tool it offers.
	Wire    string `json:"wire"`
	Dialect string `json:"dialect"`
	// Env is added to the agent's environment (templated, K=V); --env
	// flags come after it and so override it.
	Env []string `json:"env,omitempty"`
	// Files are written before the agent starts: into the case's cwd, or
	// into the throw-away home when Dest starts with "~/".
	Files []File `json:"files,omitempty"`
	// Home gives the agent a throw-away HOME (and XDG_* folders) per case.
	Home bool `json:"home,omitempty"`
	// PrepareHome starts every case's home as a copy of one the agent
	// initialised once per run (Target.PrepareHome).
	PrepareHome bool `json:"prepareHome,omitempty"`
	// PoolSessions is how many cases a pooled process serves at once
	// (Target.PoolSessions; 0: one): set for an agent known to answer
	// concurrent prompts of different sessions.
	PoolSessions int `json:"poolSessions,omitempty"`
	// NodeCompileCache: the agent is a Node program (Target.NodeCompileCache).
	NodeCompileCache bool `json:"nodeCompileCache,omitempty"`
	// Timeout is the per-case timeout the preset suggests (real agents
	// take seconds to start); 0 keeps DefaultTimeout.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Install lists the npm packages that provide the command (for `make
	// peers`; the version reported is the first package's).
	Install []string `json:"install,omitempty"`
	// Notes are what the preset is unsure of, and the agent's known quirks
	// against a scripted model.
	Notes []string `json:"notes,omitempty"`
}

// Target is the preset as the agent under test.
func (p Preset) Target() Target {
	t := Target{Name: p.Name + " (" + p.Agent + ")", Command: append([]string(nil), p.Command...),
		Env: append([]string(nil), p.Env...), Home: p.Home, PrepareHome: p.PrepareHome, PoolSessions: p.PoolSessions,
		NodeCompileCache: p.NodeCompileCache}
	for _, f := range p.Files {
		t.Files = append(t.Files, f)
	}
	return t
}

// The presets' model: every preset asks for {{.Model}} ("mock" unless
// --model says otherwise); the mock answers whatever model is asked for.

const opencodeJSON = `{
  "$schema": "https://opencode.ai/config.json",
  "model": "todoharness/{{.Model}}",
  "small_model": "todoharness/{{.Model}}",
  "enabled_providers": ["todoharness"],
  "autoupdate": false,
  "share": "disabled",
  "provider": {
    "todoharness": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "todoharness mock model",
      "options": {
        "baseURL": "{{.BaseURL}}",
        "apiKey": "mock"
      },
      "models": {
        "{{.Model}}": {
          "name": "todoharness mock ({{.Model}})",
          "tool_call": true,
          "reasoning": false
        }
      }
    }
  }
}
`

// opencode (1.18) runs an npm install of @opencode-ai/plugin into every
// config folder it reads (its Npm.install, forked in the background when
// the config loads) unless the folder already has a node_modules and a
// package-lock.json that lists every package.json dependency. In a
// throw-away home that is a download from the npm registry (about 95 MB)
// in every case and some 4 s of CPU in a short one (more the longer it
// runs), and no part of the todo contract: these three files
// make opencode find its config folder installed. The plugin SDK is only
// imported by plugins in that folder, and a case has none.
const (
	opencodeConfigPackage = `{"dependencies": {"@opencode-ai/plugin": "*"}}
`
	opencodeConfigLock = `{"lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}
`
	opencodeConfigModules = `written by todoharness: opencode installs nothing into this folder when it exists (preset opencode)
`
)

// opencodeModels is opencode's models.dev catalogue, empty: opencode (1.18)
// reads it from OPENCODE_MODELS_PATH (else ~/.cache/opencode/models.json),
// and without one it builds the snapshot compiled into its binary (every
// provider and model models.dev lists) and turns all of it into provider
// state again for each working directory it opens, although
// enabled_providers leaves only the mock's provider, which opencode.json
// defines whole. Measured 2026-12-07 (one opencode acp, sessions in new
// working directories, each a todowrite and an answer, CPU from /proc):
// a session in a warm process 1,300-1,570 ms of CPU with the snapshot,
// 570-580 ms with this file; a start (initialize, the first session)
// 4.3-4.8 s, 2.7-2.8 s.
const opencodeModels = `{}
`

const codexTOML = `# todoharness conform: codex against the scripted mock model.
model = "{{.Model}}"
model_provider = "todoharness"
check_for_update_on_startup = false

[model_providers.todoharness]
name = "todoharness mock model"
base_url = "{{.BaseURL}}"
env_key = "TODOHARNESS_MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[projects."{{.Cwd}}"]
trust_level = "trusted"
`

const geminiSettings = `{
  "security": {
    "auth": { "selectedType": "gemini-api-key" },
    "folderTrust": { "enabled": false }
  },
  "model": { "name": "gemini-2.5-pro", "skipNextSpeakerCheck": true },
  "general": { "disableAutoUpdate": true, "disableUpdateNag": true },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false }
}
`

// qwenSettings is Qwen Code's user settings: the OpenAI-compatible
// provider (its base URL, key and model come from the environment), the
// todo_write tool turned on (it is off unless tools.todoWrite.enabled), and
// its managed memory and follow-up suggestions off (each asks the model on
// its own after a turn, offering tools: a request outside the script).
const qwenSettings = `{
  "security": { "auth": { "selectedType": "openai" } },
  "model": { "name": "{{.Model}}" },
  "tools": { "todoWrite": { "enabled": true } },
  "memory": { "enableManagedAutoMemory": false, "enableManagedAutoDream": false },
  "ui": { "enableFollowupSuggestions": false },
  "general": { "disableAutoUpdate": true, "disableUpdateNag": true },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false }
}
`

// claudeEnv is the environment of both Claude Code presets.
func claudeEnv() []string {
	return []string{
		"ANTHROPIC_BASE_URL={{.URL}}",
		"ANTHROPIC_API_KEY=mock",
		"ANTHROPIC_MODEL={{.Model}}",
		"ANTHROPIC_SMALL_FAST_MODEL={{.Model}}",
		"CLAUDE_CONFIG_DIR={{.Home}}/.claude",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_NON_ESSENTIAL_MODEL_CALLS=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"IS_SANDBOX=1",
	}
}

// ReferencePoolSessions is how many cases a pooled process of the
// reference agent serves at once: it answers concurrent prompts of
// different sessions (each session's turn runs on its own).
const ReferencePoolSessions = 4

// Presets returns the known presets, reference first.
func Presets() []Preset {
	return []Preset{
		{
			Name:         "reference",
			Agent:        "todoharness agent (the built-in reference agent)",
			Package:      "this executable",
			Command:      []string{"todoharness", "agent", "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions", "--fsync=false"},
			Self:         true,
			Wire:         mockmodel.WireOpenAIChat,
			Dialect:      DialectTodoWrite,
			PoolSessions: ReferencePoolSessions,
			Notes:        []string{"the default when neither --agent nor --preset is given"},
		},
		{
			Name:    "opencode",
			Agent:   "opencode",
			Package: "npm opencode-ai",
			Command: []string{"opencode", "acp"},
			Wire:    mockmodel.WireOpenAIChat,
			Dialect: DialectOpencode,
			Home:    true,
			Env: []string{
				"OPENCODE_DISABLE_AUTOUPDATE=1",
				"OPENCODE_DISABLE_MODELS_FETCH=1",
				"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
				"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
				"OPENCODE_DISABLE_CLAUDE_CODE=1",
				"OPENCODE_MODELS_PATH={{.Home}}/.cache/opencode/models.json",
				// opencode is a Bun binary: Bun hands BUN_JSC_* to its
				// JavaScriptCore. Without the DFG (and so the FTL)
				// optimising tiers a short-lived process spends less on
				// compiling code it runs only a few times: the built-in
				// catalogue 149.6 and 151.3 s of CPU with them, 120.5 and
				// 123.8 s without (run alternately, the same checks and
				// reasons), a start 3.1-3.5 s against 2.6-3.0 s, a warm
				// session no dearer (docs/performance.md).
				"BUN_JSC_useDFGJIT=0",
			},
			Files: []File{
				{Dest: "opencode.json", Src: "preset opencode", Content: opencodeJSON},
				{Dest: "~/.cache/opencode/models.json", Src: "preset opencode (no models.dev catalogue)", Content: opencodeModels},
				{Dest: "~/.config/opencode/package.json", Src: "preset opencode (no npm install)", Content: opencodeConfigPackage},
				{Dest: "~/.config/opencode/package-lock.json", Src: "preset opencode (no npm install)", Content: opencodeConfigLock},
				{Dest: "~/.config/opencode/node_modules/README", Src: "preset opencode (no npm install)", Content: opencodeConfigModules},
			},
			Timeout: 120 * time.Second,
			Install: []string{"opencode-ai"},
			Notes: []string{
				"opencode.json in the case cwd is opencode's project config; the provider is an @ai-sdk/openai-compatible one (bundled with opencode) whose baseURL is the mock",
				"the OPENCODE_DISABLE_* variables exist in opencode 1.18 (checked in its binary); what each one skips at start-up is from its documentation, not tested one by one",
				"~/.config/opencode holds a package.json, a package-lock.json and a node_modules that list @opencode-ai/plugin: without them opencode npm-installs it (from the registry) in every case, some 4 s of CPU in a short case, that is no part of the todo contract",
				"opencode asks its small_model for a session title on the first prompt: a request without tools, answered as a side request (no script turn)",
				"OPENCODE_MODELS_PATH names an empty models.dev catalogue in the home: without it opencode builds the one compiled into it (every provider models.dev lists) for each working directory, about 0.8 s of CPU a session and 1.7 s a start; the mock's provider and model are defined whole in opencode.json",
				"BUN_JSC_useDFGJIT=0 turns off JavaScriptCore's optimising tiers in opencode's Bun (Bun reads BUN_JSC_* options): about a fifth less CPU a start and a run, the same verdicts; remove it with --env BUN_JSC_useDFGJIT=1",
			},
		},
		{
			Name:    "codex",
			Agent:   "Codex through codex-acp",
			Package: "npm @zed-industries/codex-acp",
			Command: []string{"codex-acp"},
			Wire:    mockmodel.WireOpenAIResponses,
			Dialect: DialectCodex,
			Home:    true,
			Env: []string{
				"CODEX_HOME={{.Home}}/.codex",
				"TODOHARNESS_MOCK_API_KEY=mock",
				"RUST_LOG=warn",
			},
			Files:   []File{{Dest: "~/.codex/config.toml", Src: "preset codex", Content: codexTOML}},
			Timeout: 120 * time.Second,
			Install: []string{"@zed-industries/codex-acp", "@openai/codex"},
			Notes: []string{
				"wire_api = \"responses\": codex 0.17x refuses wire_api = \"chat\" (\"no longer supported\", in its binary), so Codex is tested over OpenAI Responses only",
				"a custom model_provider with env_key needs no login (no auth.json); whether codex-acp's own authentication check accepts that is version-dependent",
				"the [analytics] and check_for_update_on_startup keys are from codex's config schema (in its binary); request_max_retries/stream_max_retries = 0 keep a refused request from taking more script turns",
			},
		},
		{
			Name:             "gemini",
			Agent:            "Gemini CLI",
			Package:          "npm @google/gemini-cli",
			Command:          []string{"gemini", "--acp"},
			NodeCompileCache: true,
			Wire:             mockmodel.WireGemini,
			Dialect:          DialectGemini,
			Home:             true,
			Env: []string{
				"GEMINI_API_KEY=mock",
				"GOOGLE_GEMINI_BASE_URL={{.URL}}",
				"GEMINI_CLI_NO_RELAUNCH=true",
				"GEMINI_CLI_TRUST_WORKSPACE=true",
			},
			Files:   []File{{Dest: "~/.gemini/settings.json", Src: "preset gemini", Content: geminiSettings}},
			Timeout: 120 * time.Second,
			Install: []string{"@google/gemini-cli"},
			Notes: []string{
				"older releases take --experimental-acp instead of --acp: override with --agent 'gemini --experimental-acp'",
				"GOOGLE_GEMINI_BASE_URL is read by @google/genai, the SDK gemini-cli uses; the model is pinned (model.name) so that no router request takes a script turn",
				"settings.json keys follow gemini-cli's nested settings schema (0.3+); older releases used flat keys (selectedAuthType) and ignore these",
			},
		},
		{
			Name:             "claude",
			Agent:            "Claude Code through claude-code-acp",
			Package:          "npm @zed-industries/claude-code-acp",
			Command:          []string{"claude-code-acp"},
			NodeCompileCache: true,
			Wire:             mockmodel.WireAnthropic,
			Dialect:          DialectClaude,
			Home:             true,
			Env:              claudeEnv(),
			Timeout:          120 * time.Second,
			Install:          []string{"@zed-industries/claude-code-acp"},
			Notes: []string{
				"ANTHROPIC_BASE_URL is the mock without /v1 (the SDK appends /v1/messages); Claude Code asks /v1/messages/count_tokens first, which the mock answers outside the script",
				"IS_SANDBOX=1: claude-code-acp starts Claude Code with permissions bypassed, which Claude Code refuses as root (as in a CI container) unless IS_SANDBOX is set; harmless otherwise",
				"the DISABLE_* variables are Claude Code's documented ones, set to keep it off the network and off side calls; a side request it still makes offers no tools and is answered outside the script",
			},
		},
		{
			Name:             "claude-agent",
			Agent:            "Claude Code through claude-agent-acp (the successor of claude-code-acp)",
			Package:          "npm @zed-industries/claude-agent-acp",
			Command:          []string{"claude-agent-acp"},
			NodeCompileCache: true,
			Wire:             mockmodel.WireAnthropic,
			Dialect:          DialectClaude,
			Home:             true,
			Env:              claudeEnv(),
			Timeout:          120 * time.Second,
			Install:          []string{"@zed-industries/claude-agent-acp"},
			Notes: []string{
				"the wiring of the claude preset (claude-code-acp), for its successor built on the Claude Agent SDK (0.23.1 checked)",
				"before its first model request it checks the API is reachable with HEAD on ANTHROPIC_BASE_URL: the mock answers 200, as the API does, outside the script",
			},
		},
		{
			Name:             "qwen",
			Agent:            "Qwen Code",
			Package:          "npm @qwen-code/qwen-code",
			Command:          []string{"qwen", "--acp"},
			NodeCompileCache: true,
			Wire:             mockmodel.WireOpenAIChat,
			Dialect:          DialectQwen,
			Home:             true,
			Env: []string{
				"OPENAI_BASE_URL={{.BaseURL}}",
				"OPENAI_API_KEY=mock",
				"OPENAI_MODEL={{.Model}}",
			},
			Files:   []File{{Dest: "~/.qwen/settings.json", Src: "preset qwen", Content: qwenSettings}},
			Timeout: 120 * time.Second,
			Install: []string{"@qwen-code/qwen-code"},
			Notes: []string{
				"todo_write is off in Qwen Code unless its settings enable it (tools.todoWrite.enabled, in ~/.qwen/settings.json here); 0.24.4 checked",
				"its todo_write requires an id on every item, which the contract's list has not: the qwen dialect (detected from the schema's required id) numbers the items 1, 2, ...",
				"its managed memory (memory.enableManagedAutoMemory, enableManagedAutoDream) and follow-up suggestions (ui.enableFollowupSuggestions, a \"SUGGESTION MODE\" request after each turn) are off: each asks the model on its own, offering tools, which leaves the script (RUN-1)",
			},
		},
	}
}

// PresetNames lists the presets' names.
func PresetNames() []string {
	var out []string
	for _, p := range Presets() {
		out = append(out, p.Name)
	}
	return out
}

// PresetByName returns a preset.
func PresetByName(name string) (Preset, error) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, nil
		}
	}
	return Preset{}, fmt.Errorf("conformance: unknown preset %q (known: %s)", name, strings.Join(PresetNames(), ", "))
}

// RenderedFile is one file a preset writes, as written for some Vars.
type RenderedFile struct {
	// Dest is relative to the case cwd, or starts with "~/" (the
	// throw-away home).
	Dest    string `json:"dest"`
	Content string `json:"content"`
}

// Rendering is what a preset does for one case: argv, the variables it
// adds (not the runner's inherited environment) and the files it writes.
type Rendering struct {
	Argv  []string       `json:"argv"`
	Env   []string       `json:"env"`
	Files []RenderedFile `json:"files"`
}

// Render expands the preset's templates for v without writing anything.
// The env lists what the runner adds for this target: the throw-away home's
// variables, TODOHARNESS_MODEL_URL, then the preset's Env.
func (p Preset) Render(v Vars) (Rendering, error) {
	var r Rendering
	if len(p.Command) == 0 {
		return r, errors.New("conformance: preset has no command")
	}
	for i, a := range p.Command {
		s, err := expand(fmt.Sprintf("arg %d", i), a, v)
		if err != nil {
			return r, err
		}
		r.Argv = append(r.Argv, s)
	}
	if p.Home {
		for _, kv := range HomeEnv {
			r.Env = append(r.Env, kv[0]+"="+strings.TrimSuffix(v.Home+"/"+kv[1], "/"))
		}
	}
	r.Env = append(r.Env, ModelURLEnv+"="+v.BaseURL)
	for _, kv := range p.Env {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return r, fmt.Errorf("conformance: preset %s: env %q: want K=V", p.Name, kv)
		}
		s, err := expand("env "+k, val, v)
		if err != nil {
			return r, err
		}
		r.Env = append(r.Env, k+"="+s)
	}
	for _, f := range p.Files {
		dest, err := expand("file dest "+f.Dest, f.Dest, v)
		if err != nil {
			return r, err
		}
		body, err := expand("file "+f.Dest, f.Content, v)
		if err != nil {
			return r, err
		}
		r.Files = append(r.Files, RenderedFile{Dest: dest, Content: body})
	}
	return r, nil
}

// ExplainVars are placeholder values for printing a preset.
func ExplainVars(model string) Vars {
	if model == "" {
		model = "mock"
	}
	return Vars{BaseURL: "http://127.0.0.1:PORT/v1", URL: "http://127.0.0.1:PORT", Host: "127.0.0.1", Port: "PORT",
		Cwd: "/tmp/conform-CASE-XXXX", Home: "/tmp/conform-CASE-home-XXXX", Case: "CASE", Model: model}
}

// WriteExplain prints what the preset does, rendered with v.
func (p Preset) WriteExplain(w io.Writer, v Vars) error {
	r, err := p.Render(v)
	if err != nil {
		return err
	}
	d, _ := DialectByName(p.Dialect)
	fmt.Fprintf(w, "preset %s: %s", p.Name, p.Agent)
	if p.Package != "" {
		fmt.Fprintf(w, " (%s)", p.Package)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  wire API:  %s\n", wireDescription(p.Wire))
	if p.Dialect == "" {
		fmt.Fprintln(w, "  dialect:   detected from the tools the agent offers the model (--dialect forces one)")
	} else {
		fmt.Fprintf(w, "  dialect:   %s (todo tool %s; detected from the tools offered, --dialect forces)\n", p.Dialect, d.Tool)
	}
	cmd := strings.Join(r.Argv, " ")
	if p.Self {
		cmd += "   (first word: this executable)"
	}
	fmt.Fprintf(w, "  command:   %s   (--agent replaces it)\n", cmd)
	if p.Timeout > 0 {
		fmt.Fprintf(w, "  timeout:   %s per case unless --timeout is given\n", p.Timeout)
	}
	if p.Home {
		fmt.Fprintf(w, "  home:      a throw-away HOME per case, beside the case cwd (%s), kept across a restart\n", v.Home)
		if p.PrepareHome {
			fmt.Fprintln(w, "             starting as a copy of a home the agent initialised once per run (started, initialize, stopped)")
		}
	} else {
		fmt.Fprintln(w, "  home:      the runner's own HOME")
	}
	fmt.Fprintln(w, "  permission requests: answered by the runner with an allow option (allow_once, else allow_always, else another allow kind; cancelled when there is none)")
	fmt.Fprintln(w, "  env (added to the runner's environment; --env overrides):")
	for _, kv := range r.Env {
		fmt.Fprintf(w, "    %s\n", kv)
	}
	if len(r.Files) == 0 {
		fmt.Fprintln(w, "  files: none")
	}
	for _, f := range r.Files {
		where := "the case cwd"
		if strings.HasPrefix(f.Dest, "~/") {
			where = "the throw-away home"
		}
		fmt.Fprintf(w, "  file %s (in %s):\n", f.Dest, where)
		for _, line := range strings.Split(strings.TrimRight(f.Content, "\n"), "\n") {
			fmt.Fprintf(w, "    | %s\n", line)
		}
	}
	if len(p.Install) > 0 {
		fmt.Fprintf(w, "  installed by make peers from npm: %s\n", strings.Join(p.Install, " "))
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	return nil
}

// wireDescription names a mockmodel wire with the endpoint the agent uses.
func wireDescription(wire string) string {
	if w, ok := mockmodel.WireNamed(wire); ok {
		return wire + " (" + w.Endpoint + ")"
	}
	return wire
}

// WritePresetTable prints one line per preset: what it runs, the wire API
// and dialect, and what it writes (files, env variables).
func WritePresetTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PRESET\tCOMMAND\tWIRE\tDIALECT\tHOME\tFILES\tENV")
	for _, p := range Presets() {
		var files, env []string
		for _, f := range p.Files {
			files = append(files, f.Dest)
		}
		for _, kv := range p.Env {
			k, _, _ := strings.Cut(kv, "=")
			env = append(env, k)
		}
		home := "no"
		if p.Home {
			home = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, strings.Join(p.Command, " "), p.Wire, p.Dialect, home,
			orDash(strings.Join(files, " ")), orDash(strings.Join(env, " ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\ntodoharness conform --preset NAME --explain prints exactly what a preset writes.")
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

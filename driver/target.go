package driver

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"text/template"
	"unicode"
)

// Target is the agent under test: a command line started fresh for every
// case (and again after a restart step) in the case's temporary working
// directory. Args, Env values, File contents and File destinations are Go
// templates over Vars ({{.BaseURL}}, {{.Port}}, {{.Cwd}}, ...).
type Target struct {
	// Name labels the agent in reports (default: the command line).
	Name string `json:"name"`
	// Command is argv: Command[0] is looked up in PATH.
	Command []string `json:"command"`
	// Env is added to the runner's environment (K=V, V templated). The
	// runner also sets TODOHARNESS_MODEL_URL (the mock's base URL, …/v1).
	Env []string `json:"env,omitempty"`
	// Files are written into the case's working directory before the agent
	// starts (for agents configured by a file).
	Files []File `json:"files,omitempty"`
	// CleanEnv starts the agent with only Env (plus PATH and HOME) instead
	// of the runner's whole environment.
	CleanEnv bool `json:"cleanEnv,omitempty"`
	// Home gives the agent a throw-away home folder (Vars.Home, one per
	// case, kept across a restart step): HOME and XDG_CONFIG_HOME,
	// XDG_DATA_HOME, XDG_CACHE_HOME, XDG_STATE_HOME point into it, so the
	// agent reads no configuration of the user running the catalogue and
	// leaves nothing behind. Files whose Dest starts with "~/" are written
	// there (Vars.Home is made for every case, so {{.Home}} and "~/" work
	// without it too, but HOME is then the runner's).
	Home bool `json:"home,omitempty"`
	// PrepareHome says the agent initialises its home at its first start
	// (opencode migrates a database into every fresh HOME): a run starts
	// it once in a home of its own (initialize, then an editor's
	// shutdown) and every case's home starts as a copy of that one
	// (HomeFrom) instead of empty. Only with Home.
	PrepareHome bool `json:"prepareHome,omitempty"`
	// HomeFrom, when set, is a folder copied into every case's home
	// before the target's files are written there (the run's prepared
	// home; see PrepareHome).
	HomeFrom string `json:"-"`
	// InProcess, when set, is the agent as a function the runner calls in
	// its own process, on pipes, instead of starting Command: it gets the
	// templated Command as its arguments, the environment the process
	// would get, the case's directory, and stdio (see ProcIO). The checks
	// judge it exactly as a process; only what needs a process differs:
	// the runner's SIGTERM is a cancelled context, and a function that
	// does not return once its context ended and its pipes closed is
	// abandoned (a goroutine cannot be killed). Use it for fast suites
	// over agents written in Go; keep the subprocess target for what is
	// about processes (exit, kill, orphans, restart across processes).
	InProcess InProcessFunc `json:"-"`
	// IdleReport says the agent (a process) reports when it is idle: the
	// runner opens a pipe as the agent's file descriptor 3 and names it in
	// IdleFDEnv; the agent writes a line with the number of bytes it has
	// written to its stdout each time it has nothing more to send until
	// its next request. The settle after an answer then ends once the
	// last count reported is every byte read from its stdout, as with an
	// in-process agent's ProcIO.IdleReport. Only for an agent that means
	// it: the reference agent (`todoharness agent`) does.
	IdleReport bool `json:"idleReport,omitempty"`
	// PoolSessions is how many cases a pooled process of the agent
	// serves at once (Pool): more than one only for an agent that answers
	// concurrent prompts of different sessions (the reference agent
	// does); 0 or 1: one case at a time a process.
	PoolSessions int `json:"poolSessions,omitempty"`
	// NodeCompileCache says the agent is a Node program: a run gives
	// every start of it one folder for Node's compile cache
	// (NODE_COMPILE_CACHE, read by Node 22.1 and later, ignored before),
	// so that only its first start compiles its modules
	// (conformance.NodeCompileCache).
	NodeCompileCache bool `json:"nodeCompileCache,omitempty"`
}

// IdleFDEnv names the file descriptor an agent with Target.IdleReport
// writes its idle reports to.
const IdleFDEnv = "TODOHARNESS_IDLE_FD"

// InProcessFunc is an in-process agent (Target.InProcess): it serves ACP
// on p.Stdin and p.Stdout until its stdin ends or ctx is cancelled (the
// runner's SIGTERM), and returns its exit status.
type InProcessFunc func(ctx context.Context, p ProcIO) int

// ProcIO is what an in-process agent gets in place of a process.
type ProcIO struct {
	// Args is the templated Command (Args[0] the program; just the
	// target's Name when it has no Command).
	Args []string
	// Env is the environment the process would get, K=V; a later entry
	// wins over an earlier one of the same K (Getenv).
	Env []string
	// Dir is the working directory the process would start in.
	Dir    string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// IdleReport is the in-process form of a process's idle pipe
	// (Target.IdleReport): the agent may write to it a line with the
	// number of bytes it has written to Stdout each time it has nothing
	// more to send until its next request (every update of the requests
	// it answered written; no work of theirs still running). The settle
	// after an answer then ends as soon as the last count is every byte
	// read from Stdout and no model request is in flight, instead of
	// after a stretch of quiet. An agent that writes it must mean it: a
	// report made too early hides late updates from ACP-TURN-1.
	IdleReport io.Writer
}

// LookupEnv returns the value of k in Env (the last entry for k).
func (p ProcIO) LookupEnv(k string) (string, bool) {
	for i := len(p.Env) - 1; i >= 0; i-- {
		if key, val, ok := strings.Cut(p.Env[i], "="); ok && key == k {
			return val, true
		}
	}
	return "", false
}

// Getenv returns the value of k in Env, "" when unset.
func (p ProcIO) Getenv(k string) string {
	v, _ := p.LookupEnv(k)
	return v
}

// HomeEnv lists the variables a Target with Home points into Vars.Home, as
// K and the folder under Home ("" for Home itself).
var HomeEnv = [][2]string{
	{"HOME", ""},
	{"XDG_CONFIG_HOME", ".config"},
	{"XDG_DATA_HOME", ".local/share"},
	{"XDG_CACHE_HOME", ".cache"},
	{"XDG_STATE_HOME", ".local/state"},
}

// File is a template written into the agent's working directory (or, with
// a Dest starting with "~/", into the case's throw-away home).
type File struct {
	// Dest is relative to the working directory, or to Vars.Home when it
	// starts with "~/" (templated).
	Dest string `json:"dest"`
	// Content is the template text.
	Content string `json:"-"`
	// Src names where Content came from (for reports).
	Src string `json:"src,omitempty"`
}

// Vars are the values templates see.
type Vars struct {
	// BaseURL is the mock model's OpenAI base URL (http://127.0.0.1:PORT/v1);
	// URL is the same without /v1.
	BaseURL string
	URL     string
	Host    string
	Port    string
	// Cwd is the case's temporary working directory (the agent's cwd).
	Cwd string
	// Home is the case's throw-away home folder (see Target.Home); it is
	// not inside Cwd.
	Home string
	// Case is the case ID; Model the model name to ask for.
	Case  string
	Model string
}

// ModelURLEnv is always set in the agent's environment to Vars.BaseURL.
const ModelURLEnv = "TODOHARNESS_MODEL_URL"

// ParseFileFlag reads a --file SRC:DEST flag: SRC is read now, DEST is
// relative to the case's working directory (or to the throw-away home when
// it starts with "~/").
func ParseFileFlag(s string) (File, error) {
	i := strings.LastIndex(s, ":")
	if i <= 0 || i == len(s)-1 {
		return File{}, fmt.Errorf("conformance: --file %q: want SRC:DEST", s)
	}
	src, dest := s[:i], s[i+1:]
	data, err := os.ReadFile(src)
	if err != nil {
		return File{}, fmt.Errorf("conformance: --file: %w", err)
	}
	return File{Src: src, Dest: dest, Content: string(data)}, nil
}

// SplitCommand splits a command line into argv: words separated by spaces,
// with '…' and "…" quoting and \ escapes (no other shell syntax; wrap the
// command in `sh -c '…'` for that).
func SplitCommand(s string) ([]string, error) {
	var (
		args  []string
		cur   strings.Builder
		in    rune
		have  bool
		runes = []rune(s)
	)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case in == '\'':
			if r == '\'' {
				in = 0
			} else {
				cur.WriteRune(r)
			}
		case in == '"':
			switch r {
			case '"':
				in = 0
			case '\\':
				if i+1 < len(runes) && strings.ContainsRune(`"\$`+"`", runes[i+1]) {
					i++
					cur.WriteRune(runes[i])
				} else {
					cur.WriteRune(r)
				}
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			in = r
			have = true
		case r == '\\':
			if i+1 < len(runes) {
				i++
				cur.WriteRune(runes[i])
				have = true
			}
		case unicode.IsSpace(r):
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if in != 0 {
		return nil, fmt.Errorf("conformance: unterminated %c quote in %q", in, s)
	}
	if have {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("conformance: empty command")
	}
	return args, nil
}

// expand renders one template string.
func expand(name, text string, v Vars) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	return b.String(), nil
}

// resolved is a Target with every template expanded for one case.
type resolved struct {
	argv       []string
	env        []string
	inproc     InProcessFunc
	idleReport bool
}

// resolve expands the target's templates and writes its files into v.Cwd.
func (t Target) resolve(v Vars) (resolved, error) {
	if len(t.Command) == 0 && t.InProcess == nil {
		return resolved{}, errors.New("conformance: target has no command")
	}
	r := resolved{inproc: t.InProcess, idleReport: t.IdleReport && extraFilesWork}
	if len(t.Command) == 0 {
		r.argv = []string{cmp.Or(t.Name, "in-process agent")}
	}
	for i, a := range t.Command {
		s, err := expand(fmt.Sprintf("arg %d", i), a, v)
		if err != nil {
			return r, err
		}
		r.argv = append(r.argv, s)
	}
	if t.CleanEnv {
		for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
			if val, ok := os.LookupEnv(k); ok {
				r.env = append(r.env, k+"="+val)
			}
		}
	} else {
		r.env = os.Environ()
	}
	if t.Home {
		if v.Home == "" {
			return r, errors.New("conformance: the target asks for a throw-away home, but the case has none")
		}
		for _, kv := range HomeEnv {
			r.env = append(r.env, kv[0]+"="+filepath.Join(v.Home, filepath.FromSlash(kv[1])))
		}
	}
	r.env = append(r.env, ModelURLEnv+"="+v.BaseURL)
	for _, kv := range t.Env {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return r, fmt.Errorf("conformance: --env %q: want K=V", kv)
		}
		s, err := expand("env "+k, val, v)
		if err != nil {
			return r, err
		}
		r.env = append(r.env, k+"="+s)
	}
	for _, f := range t.Files {
		dest, err := expand("file dest "+f.Dest, f.Dest, v)
		if err != nil {
			return r, err
		}
		root, where := v.Cwd, "the working directory"
		if rest, ok := strings.CutPrefix(dest, "~/"); ok {
			root, where, dest = v.Home, "the throw-away home (~/)", rest
			if root == "" {
				return r, fmt.Errorf("conformance: file %s: destination ~/%s: the case has no throw-away home", f.Src, dest)
			}
		}
		if filepath.IsAbs(dest) || !filepath.IsLocal(dest) {
			return r, fmt.Errorf("conformance: file %s: destination %q must be inside %s", f.Src, dest, where)
		}
		body, err := expand("file "+f.Src, f.Content, v)
		if err != nil {
			return r, err
		}
		p := filepath.Join(root, dest)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return r, fmt.Errorf("conformance: write file: %w", err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return r, fmt.Errorf("conformance: write file: %w", err)
		}
	}
	return r, nil
}

// String is the command line, for reports.
func (t Target) String() string {
	if t.Name != "" {
		return t.Name
	}
	return strings.Join(t.Command, " ")
}

// commandPath looks a bare command name up in the PATH the agent gets (the
// last PATH= of env), so that a PATH given with --env or by a preset finds
// the command too; it falls back to the name (exec then uses the runner's
// PATH).
func commandPath(name string, env []string) string {
	if name == "" || strings.ContainsRune(name, filepath.Separator) {
		return name
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return name
}

// varNames are the template variables a target may use.
func varNames() []string {
	t := reflect.TypeOf(Vars{})
	var out []string
	for i := 0; i < t.NumField(); i++ {
		out = append(out, "{{."+t.Field(i).Name+"}}")
	}
	return out
}

var reUnknownVar = regexp.MustCompile(`can't evaluate field (\w+)`)

// CheckTemplates expands every template of the target (command, env
// values, file destinations and contents) with placeholder values, writing
// nothing: a mistyped variable is found before any agent starts. The error
// names the template, lists the variables and suggests the nearest one.
func (t Target) CheckTemplates() error {
	v := ExplainVars("mock")
	check := func(what, text string) error {
		_, err := expand(what, text, v)
		if err == nil {
			return nil
		}
		if m := reUnknownVar.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("conformance: agent %s: unknown template variable {{.%s}}%s", what, m[1], Suggest("{{."+m[1]+"}}", varNames(), "variables"))
		}
		return fmt.Errorf("conformance: agent %s: %w (variables: %s)", what, err, strings.Join(varNames(), ", "))
	}
	for i, a := range t.Command {
		if err := check(fmt.Sprintf("command argument %d (%q)", i, a), a); err != nil {
			return err
		}
	}
	for _, kv := range t.Env {
		k, val, _ := strings.Cut(kv, "=")
		if err := check("--env "+k, val); err != nil {
			return err
		}
	}
	for _, f := range t.Files {
		if err := check("--file "+f.Src+" destination", f.Dest); err != nil {
			return err
		}
		if err := check("--file "+f.Src, f.Content); err != nil {
			return err
		}
	}
	return nil
}

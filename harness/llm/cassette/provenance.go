package cassette

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Source says where the model output in a cassette came from.
type Source string

// Sources.
const (
	// SourceRealModel is a recording against a real model API.
	SourceRealModel Source = "real-model"
	// SourceMockServer is a recording against the local scripted mock model
	// server: the answers are a script, not model output.
	SourceMockServer Source = "mock-server"
	// SourceSessionLog is a cassette rebuilt from a session log's
	// assistant/chunk events (see package fromlog).
	SourceSessionLog Source = "session-log"
)

// Valid reports whether s is one of the known sources.
func (s Source) Valid() bool {
	switch s {
	case SourceRealModel, SourceMockServer, SourceSessionLog:
		return true
	}
	return false
}

// Provenance is the block every cassette starts with: where its model output
// came from. RealModelOutput is true only for output a real model produced
// (a live recording, or a session log recorded against a real model); a
// mock-server cassette always has it false.
type Provenance struct {
	Source          Source `yaml:"source"`
	RealModelOutput bool   `yaml:"realModelOutput"`
	Description     string `yaml:"description"`
	APIHost         string `yaml:"apiHost"`
	BaseURL         string `yaml:"baseURL"`
	Model           string `yaml:"model"`
	RecordedAt      string `yaml:"recordedAt"`
	ToolVersion     string `yaml:"toolVersion"`
	Scenario        string `yaml:"scenario,omitempty"`
	SessionLog      string `yaml:"sessionLog,omitempty"`
	// Wire is the model API the agent spoke (openai-chat,
	// openai-responses, anthropic, gemini); empty in older cassettes.
	Wire string `yaml:"wire,omitempty"`
	// Agent is the command line of the agent recorded (credentials
	// scrubbed), AgentVersion the name and version it gave in its ACP
	// initialize answer; empty for the reference agent run in-process.
	Agent        string `yaml:"agent,omitempty"`
	AgentVersion string `yaml:"agentVersion,omitempty"`
}

// Validate checks that the block says where the cassette came from.
func (p Provenance) Validate() error {
	var missing []string
	if !p.Source.Valid() {
		return fmt.Errorf("provenance: source %q is not one of %s, %s, %s", p.Source, SourceRealModel, SourceMockServer, SourceSessionLog)
	}
	if p.Source == SourceMockServer && p.RealModelOutput {
		return errors.New("provenance: a mock-server cassette cannot claim realModelOutput: true")
	}
	if p.RealModelOutput && (IsLoopback(p.BaseURL) || IsLoopback("http://"+p.APIHost)) {
		return fmt.Errorf("provenance: claims realModelOutput: true but was recorded against a loopback address (baseURL %s, apiHost %s): that is the local mock server, not a model", p.BaseURL, p.APIHost)
	}
	for _, f := range []struct{ name, v string }{
		{"apiHost", p.APIHost}, {"baseURL", p.BaseURL}, {"model", p.Model},
		{"recordedAt", p.RecordedAt}, {"toolVersion", p.ToolVersion}, {"description", p.Description},
	} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("provenance: missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// IsLoopback reports whether baseURL points at this machine (127.0.0.0/8,
// ::1 or localhost). Anything recorded there is not real-model output.
func IsLoopback(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

// WithoutUserinfo returns baseURL without the user:password part (the
// provenance never keeps credentials) and without the ephemeral port of a
// loopback address.
func WithoutUserinfo(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return baseURL
	}
	if u.User != nil {
		u.User = nil
	}
	u.Host = StripLoopbackPort(u.Host)
	return u.String()
}

// HostOf returns the host (with port, if any) of baseURL, or baseURL itself
// when it does not parse.
func HostOf(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return baseURL
	}
	return u.Host
}

// ToolVersion names the build of todoharness that wrote a cassette:
// "todoharness <module version>", plus the VCS revision when the binary
// was built from a checkout.
func ToolVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "todoharness (unknown build)"
	}
	v := "todoharness " + bi.Main.Version
	if bi.Main.Version == "" {
		v = "todoharness (devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (rev " + rev + dirty + ")"
	}
	return v
}

// ProvenanceHeader is the comment written above the provenance block.
const ProvenanceHeader = "# todoharness cassette: go-vcr v2 format; the provenance block says where\n" +
	"# the model output below came from (see harness/llm/cassette).\n"

// WithProvenance returns a go-vcr cassette file's bytes with the provenance
// block put first.
func WithProvenance(vcr []byte, p Provenance) ([]byte, error) {
	block, err := yaml.Marshal(struct {
		Provenance Provenance `yaml:"provenance"`
	}{p})
	if err != nil {
		return nil, fmt.Errorf("encode provenance: %w", err)
	}
	body := bytes.TrimPrefix(vcr, []byte("---\n"))
	var out bytes.Buffer
	out.WriteString("---\n")
	out.WriteString(ProvenanceHeader)
	out.Write(block)
	out.Write(body)
	return out.Bytes(), nil
}

// WriteFile writes data to path through a temporary file in the same
// folder, so a reader never sees half a cassette.
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write cassette %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, ".cassette-*.yaml")
	if err != nil {
		return fmt.Errorf("write cassette %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	merr := f.Chmod(0o644)
	cerr := f.Close()
	if err := errors.Join(werr, merr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write cassette %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write cassette %s: %w", path, err)
	}
	return nil
}

// LoadProvenance reads the provenance block of the cassette at path. The
// cassette is validated as Load validates it (a corrupt cassette is an
// error).
func LoadProvenance(path string) (Provenance, error) {
	f, err := Load(path)
	if err != nil {
		return Provenance{}, err
	}
	return *f.Provenance, nil
}

// StripLoopbackPort removes the port of a loopback host:port: a recording
// against the local mock server must not change with its port.
func StripLoopbackPort(host string) string {
	h, p, err := net.SplitHostPort(host)
	if err != nil || p == "" {
		return host
	}
	if _, err := strconv.Atoi(p); err != nil || !isLoopbackHost(h) {
		return host
	}
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

func isLoopbackHost(h string) bool {
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.")
}

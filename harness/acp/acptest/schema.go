package acptest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is an ACP JSON schema whose $defs judge messages.
type Schema struct {
	c    *jsonschema.Compiler
	url  string
	mu   sync.Mutex
	defs map[string]*jsonschema.Schema
}

// LoadSchema reads an ACP schema file (schema.json of a protocol version).
func LoadSchema(path string) (*Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("acp schema: %w", err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("acp schema %s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	url := "https://agentclientprotocol.com/" + filepath.Base(path)
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("acp schema %s: %w", path, err)
	}
	return &Schema{c: c, url: url, defs: map[string]*jsonschema.Schema{}}, nil
}

// Validate checks the JSON text raw against the schema's $defs/def.
func (s *Schema) Validate(def string, raw []byte) error {
	s.mu.Lock()
	sch, ok := s.defs[def]
	if !ok {
		var err error
		if sch, err = s.c.Compile(s.url + "#/$defs/" + def); err != nil {
			s.mu.Unlock()
			return fmt.Errorf("compile %s: %w", def, err)
		}
		s.defs[def] = sch
	}
	s.mu.Unlock()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s: %w", def, err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("%s: %w", def, err)
	}
	return nil
}

// v2ResultDef names the v2 schema's definition of a method's result.
func v2ResultDef(method string) (string, bool) {
	switch method {
	case "initialize":
		return "InitializeResponse", true
	case "session/new":
		return "NewSessionResponse", true
	case "session/prompt":
		return "PromptResponse", true
	case "session/resume":
		return "ResumeSessionResponse", true
	case "session/list":
		return "ListSessionsResponse", true
	case "session/close":
		return "CloseSessionResponse", true
	}
	return "", false
}

// CheckV2 judges a line an agent sent on a v2 connection against s (the
// v2 schema): a session/update's params, an error, or a result by the
// method it answers. Any other request or notification is an error (the
// reference agent sends none).
func (s *Schema) CheckV2(m Msg) error {
	var err error
	switch {
	case m.Method == "session/update":
		err = s.Validate("UpdateSessionNotification", m.Params)
	case m.Method != "":
		err = fmt.Errorf("unexpected request or notification %s", m.Method)
	case m.Error != nil:
		err = s.Validate("Error", m.Error)
	default:
		def, ok := v2ResultDef(m.Answers)
		if !ok {
			err = fmt.Errorf("a response to no request the client sent (id %s)", m.ID)
			break
		}
		err = s.Validate(def, m.Result)
	}
	if err != nil {
		return fmt.Errorf("v2 schema: %w\nline: %s", err, m.Raw)
	}
	return nil
}

package loader

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/todoharness/todoharness/internal/yamlx"
)

// ApplyFunc installs a plugin. ctx exposes only the services the plugin
// declared in Inject; config is the plugin's config node from the
// composition file (decode it with config.Decode).
type ApplyFunc func(ctx *Context, config Config) error

// Module is what a plugin package exports: its name, the services it needs
// injected, and its apply function. Default models a default export: the
// original TypeScript loader's unwrapExports replaced a module with its
// default export, silently dropping the named inject (postmortem 0001). This
// loader refuses a module that has both, instead of choosing one.
type Module struct {
	Name    string
	Inject  []string
	Apply   ApplyFunc
	Default *Module
}

// Plugin is an unwrapped, ready-to-apply module.
type Plugin struct {
	Name   string
	Inject []string
	Apply  ApplyFunc
}

// Unwrap turns an exported module into a plugin. A module with a default
// export and named exports (inject/apply) is an error: taking the default
// would drop the declared inject.
func Unwrap(m Module) (Plugin, error) {
	if m.Default != nil {
		if m.Inject != nil || m.Apply != nil {
			return Plugin{}, fmt.Errorf("plugin module %q exports both a default and named exports (inject %v): unwrapping the default would drop the declared inject (postmortem 0001); export name/inject/apply only", m.Name, m.Inject)
		}
		return Unwrap(*m.Default)
	}
	if m.Name == "" {
		return Plugin{}, errors.New("plugin module without a name")
	}
	if m.Apply == nil {
		return Plugin{}, fmt.Errorf("plugin %q exports no apply function", m.Name)
	}
	return Plugin{Name: m.Name, Inject: append([]string(nil), m.Inject...), Apply: m.Apply}, nil
}

// Catalog maps plugin names to their modules.
type Catalog map[string]Module

// Config is a plugin's config node from the composition file.
type Config struct {
	node *yaml.Node
	src  string
}

// Decode decodes the config into v, rejecting unknown fields. An absent
// config leaves v unchanged. Errors name the composition file and the line of
// the offending field ("composition.yaml:4: config: field x not found in
// type todo.Config").
func (c Config) Decode(v any) error {
	if c.node == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("%s:%d: config: decode into %T: want a non-nil pointer", c.src, c.node.Line, v)
	}
	// Type errors, with the node's own (absolute) lines.
	if err := c.node.Decode(reflect.New(rv.Elem().Type()).Interface()); err != nil {
		return c.yamlErr(err, false)
	}
	// Unknown fields: yaml.v3 checks them only when decoding a document, so
	// strict-decode a re-encoding and map the lines back to the file.
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(c.node); err != nil {
		return fmt.Errorf("%s:%d: config: %w", c.src, c.node.Line, err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("%s:%d: config: %w", c.src, c.node.Line, err)
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(reflect.New(rv.Elem().Type()).Interface()); err != nil {
		return c.yamlErr(err, true)
	}
	if err := c.node.Decode(v); err != nil {
		return c.yamlErr(err, false)
	}
	return nil
}

var (
	yamlLineMsg    = regexp.MustCompile(`^line (\d+): (.*)$`)
	yamlSyntaxMsg  = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	yamlUnknownMsg = regexp.MustCompile(`^field (\S+) not found in type (.+)$`)
)

// yamlErr formats a decode error of the config as "src:line: config: msg",
// one message per problem. relative is set when the lines in err refer to a
// re-encoding of the node rather than to the file.
func (c Config) yamlErr(err error, relative bool) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s:%d: config: %w", c.src, c.node.Line, err)
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, m := range te.Errors {
		line, text := c.node.Line, m
		if sm := yamlLineMsg.FindStringSubmatch(m); sm != nil {
			text = sm[2]
			if !relative {
				line, _ = strconv.Atoi(sm[1])
			}
		}
		if um := yamlUnknownMsg.FindStringSubmatch(text); um != nil {
			if k := findKey(c.node, um[1]); k != nil {
				line = k.Line
			}
		}
		msgs = append(msgs, fmt.Sprintf("%s:%d: config: %s", c.src, line, text))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// findKey returns the first mapping key named name in n, depth first.
func findKey(n *yaml.Node, name string) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == name {
				return n.Content[i]
			}
		}
	}
	for _, ch := range n.Content {
		if k := findKey(ch, name); k != nil {
			return k
		}
	}
	return nil
}

// Context is what a plugin's apply sees: only its declared services, and
// only while apply runs.
type Context struct {
	plugin     string
	declared   map[string]bool
	services   map[string]any
	mu         sync.Mutex
	undeclared []string
	sealed     bool
}

// Service returns the injected service name. Asking for a service the
// plugin did not declare in Inject is an error naming both, and fails the
// load even if apply ignores the error. Services are resolved in apply: after
// apply returns, Service always fails, so a plugin cannot defer a lookup (and
// its failure) to first use.
func (c *Context) Service(name string) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed {
		return nil, fmt.Errorf("plugin %q asks for service %q after load: resolve services in apply", c.plugin, name)
	}
	if !c.declared[name] {
		c.undeclared = append(c.undeclared, name)
		return nil, undeclaredErr(c.plugin, name, c.declared)
	}
	return c.services[name], nil
}

func undeclaredErr(plugin, service string, declared map[string]bool) error {
	return fmt.Errorf("plugin %q uses service %q but does not declare it in inject (declared: %s)", plugin, service, list(declared))
}

// seal ends apply: it reports the first undeclared service asked for.
func (c *Context) seal() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sealed = true
	if len(c.undeclared) > 0 {
		return undeclaredErr(c.plugin, c.undeclared[0], c.declared)
	}
	return nil
}

func list(m map[string]bool) string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Composition is a parsed composition file.
type Composition struct {
	Source  string
	Plugins []Entry
}

// Entry is one plugin of a composition.
type Entry struct {
	Name   string
	Line   int
	Config Config
}

type compositionFile struct {
	Plugins []pluginEntry `yaml:"plugins"`
}

type pluginEntry struct {
	Name   string    `yaml:"name"`
	Config yaml.Node `yaml:"config"`
}

// fileErr formats a YAML error of a composition file as "src:line: msg",
// one message per problem.
func fileErr(src string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, 0, len(te.Errors))
		for _, m := range te.Errors {
			sm := yamlLineMsg.FindStringSubmatch(m)
			if sm == nil {
				msgs = append(msgs, fmt.Sprintf("%s: %s", src, m))
				continue
			}
			text := sm[2]
			if um := yamlUnknownMsg.FindStringSubmatch(text); um != nil {
				switch um[2] {
				case "loader.compositionFile":
					text = fmt.Sprintf("unknown field %q (want: plugins)", um[1])
				case "loader.pluginEntry":
					text = fmt.Sprintf("unknown field %q in a plugin entry (want: name, config)", um[1])
				}
			}
			msgs = append(msgs, fmt.Sprintf("%s:%s: %s", src, sm[1], text))
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	if sm := yamlSyntaxMsg.FindStringSubmatch(err.Error()); sm != nil {
		return fmt.Errorf("%s:%s: %s", src, sm[1], sm[2])
	}
	return fmt.Errorf("%s: %w", src, err)
}

// ParseComposition parses composition YAML; src names it in errors.
func ParseComposition(data []byte, src string) (*Composition, error) {
	root, err := yamlx.Parse(data)
	if err != nil {
		return nil, fileErr(src, err)
	}
	if root.Kind == 0 {
		return nil, fmt.Errorf("%s: empty composition: want a \"plugins:\" list", src)
	}
	var f compositionFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fileErr(src, err)
	}
	c := &Composition{Source: src}
	seq := pluginNodes(root)
	for i, p := range f.Plugins {
		line := 0
		if i < len(seq) {
			line = seq[i].Line
		}
		if p.Name == "" {
			return nil, fmt.Errorf("%s:%d: plugins[%d]: missing field \"name\"", src, line, i)
		}
		e := Entry{Name: p.Name, Line: line, Config: Config{src: src}}
		if p.Config.Kind != 0 {
			n := p.Config
			e.Config.node = &n
		}
		c.Plugins = append(c.Plugins, e)
	}
	return c, nil
}

func pluginNodes(root *yaml.Node) []*yaml.Node {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "plugins" {
			return m.Content[i+1].Content
		}
	}
	return nil
}

// ReadComposition reads and parses a composition file.
func ReadComposition(path string) (*Composition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read composition: %w", err)
	}
	return ParseComposition(data, path)
}

// Load resolves and applies every plugin of the composition, in order, with
// the host's services. It fails on the first plugin that is unknown, whose
// module does not unwrap, that declares a service the host does not provide,
// or whose apply fails; the error names the file, line and plugin.
func Load(c *Composition, catalog Catalog, services map[string]any) ([]Plugin, error) {
	var loaded []Plugin
	for _, e := range c.Plugins {
		where := fmt.Sprintf("%s:%d: plugin %q", c.Source, e.Line, e.Name)
		m, ok := catalog[e.Name]
		if !ok {
			return nil, fmt.Errorf("%s: unknown plugin (known: %s)", where, catalogNames(catalog))
		}
		p, err := Unwrap(m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		ctx := &Context{plugin: p.Name, declared: map[string]bool{}, services: map[string]any{}}
		for _, s := range p.Inject {
			svc, ok := services[s]
			if !ok || isNil(svc) {
				return nil, fmt.Errorf("%s: injected service %q is not provided by the host (provided: %s)", where, s, serviceNames(services))
			}
			ctx.declared[s] = true
			ctx.services[s] = svc
		}
		err = p.Apply(ctx, e.Config)
		if serr := ctx.seal(); err == nil && serr != nil {
			err = serr
		}
		if err != nil {
			return nil, fmt.Errorf("%s: apply: %w", where, err)
		}
		loaded = append(loaded, p)
	}
	return loaded, nil
}

// isNil reports a nil service, including a typed nil (a nil *Registry in an
// interface), which would otherwise pass for provided and fail at first use.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

func catalogNames(c Catalog) string {
	m := map[string]bool{}
	for n := range c {
		m[n] = true
	}
	return list(m)
}

func serviceNames(s map[string]any) string {
	m := map[string]bool{}
	for n, v := range s {
		if !isNil(v) {
			m[n] = true
		}
	}
	return list(m)
}

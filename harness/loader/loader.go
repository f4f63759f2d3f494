package loader

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
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
// config leaves v unchanged.
func (c Config) Decode(v any) error {
	if c.node == nil {
		return nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(c.node); err != nil {
		return fmt.Errorf("%s: config: %w", c.src, err)
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s:%d: config: %w", c.src, c.node.Line, err)
	}
	return nil
}

// Context is what a plugin's apply sees: only its declared services.
type Context struct {
	plugin   string
	declared map[string]bool
	services map[string]any
}

// Service returns the injected service name. Asking for a service the
// plugin did not declare in Inject is an error naming both.
func (c *Context) Service(name string) (any, error) {
	if !c.declared[name] {
		return nil, fmt.Errorf("plugin %q uses service %q but does not declare it in inject (declared: %s)", c.plugin, name, list(c.declared))
	}
	return c.services[name], nil
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
	Plugins []struct {
		Name   string    `yaml:"name"`
		Config yaml.Node `yaml:"config"`
	} `yaml:"plugins"`
}

// ParseComposition parses composition YAML; src names it in errors.
func ParseComposition(data []byte, src string) (*Composition, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	var f compositionFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	c := &Composition{Source: src}
	seq := pluginNodes(&root)
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
			if !ok || svc == nil {
				return nil, fmt.Errorf("%s: injected service %q is not provided by the host (provided: %s)", where, s, serviceNames(services))
			}
			ctx.declared[s] = true
			ctx.services[s] = svc
		}
		if err := p.Apply(ctx, e.Config); err != nil {
			return nil, fmt.Errorf("%s: apply: %w", where, err)
		}
		loaded = append(loaded, p)
	}
	return loaded, nil
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
		if v != nil {
			m[n] = true
		}
	}
	return list(m)
}

package builtin

import (
	_ "embed"

	"github.com/todoharness/todoharness/harness/loader"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/tools"
)

//go:embed composition.yaml
var shippedComposition []byte

// ShippedComposition returns the shipped composition file's bytes.
func ShippedComposition() []byte { return append([]byte(nil), shippedComposition...) }

// ShippedCompositionName names the shipped composition in error messages.
const ShippedCompositionName = "harness/builtin/composition.yaml"

// Catalog returns the plugins the reference harness knows.
func Catalog() loader.Catalog {
	return loader.Catalog{todo.PluginName: todo.Module()}
}

// Services returns the host services plugins may ask for, by name.
func Services(reg *tools.Registry) map[string]any {
	return map[string]any{"tools": reg}
}

// Compose loads a composition into a fresh tool registry. An empty path
// means the shipped composition.
func Compose(path string) (*tools.Registry, error) {
	var (
		c   *loader.Composition
		err error
	)
	if path == "" {
		c, err = loader.ParseComposition(shippedComposition, ShippedCompositionName)
	} else {
		c, err = loader.ReadComposition(path)
	}
	if err != nil {
		return nil, err
	}
	reg := tools.NewRegistry()
	if _, err := loader.Load(c, Catalog(), Services(reg)); err != nil {
		return nil, err
	}
	return reg, nil
}

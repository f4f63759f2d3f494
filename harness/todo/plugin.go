package todo

import (
	"fmt"

	"github.com/todoharness/todoharness/harness/loader"
	"github.com/todoharness/todoharness/harness/tools"
)

// PluginName is the plugin's name in composition files.
const PluginName = "todo"

// Module is the plugin as the loader sees it: name, inject [tools], apply.
// It has no default export (see loader.Module and postmortem 0001).
func Module() loader.Module {
	return loader.Module{
		Name:   PluginName,
		Inject: []string{"tools"},
		Apply:  apply,
	}
}

func apply(ctx *loader.Context, config loader.Config) error {
	var cfg Config
	if err := config.Decode(&cfg); err != nil {
		return err
	}
	svc, err := ctx.Service("tools")
	if err != nil {
		return err
	}
	reg, ok := svc.(*tools.Registry)
	if !ok {
		return fmt.Errorf("service \"tools\" is a %T, want *tools.Registry", svc)
	}
	if _, err := reg.Register(NewTool(cfg)); err != nil {
		return err
	}
	return nil
}

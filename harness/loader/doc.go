// Package loader composes the harness from plugins. A plugin module declares
// a name, the services it wants injected and an apply function; a
// composition file (YAML) names the plugins to load and their config. The
// loader unwraps each module, resolves every declared injection against the
// services the host provides, and applies the plugins at load time, so a
// missing or lost injection fails loudly at load, naming plugin and service,
// never silently at first use.
package loader

// Command npmpack lays out the npm packages of a todoharness release from
// the binaries GoReleaser built (its dist folder: artifacts.json and
// metadata.json), the esbuild/biome way: one package per platform holding
// its binary, limited to that platform by its os and cpu fields
// (@todoharness/cli-linux-x64, ...), and the launcher package todoharness
// (npm/todoharness: bin/todoharness.js) that lists them all as optional
// dependencies, so npm installs the one that fits and `npx todoharness`
// runs it. No package has an install script: nothing is downloaded.
//
//	go run ./scripts/npmpack [-dist dist] [-out dist/npm]
//
// It writes one folder per package under -out, ready for `npm pack` or
// `npm publish` (scripts/release-check.sh packs and installs them;
// docs/releasing.md says how a release publishes them).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
)

func main() {
	dist := flag.String("dist", "dist", "GoReleaser's dist folder (artifacts.json, metadata.json)")
	out := flag.String("out", filepath.Join("dist", "npm"), "folder to write the packages into (emptied first)")
	launcher := flag.String("launcher", filepath.Join("npm", "todoharness"), "the launcher package's files (bin/todoharness.js, README.md)")
	flag.Parse()
	pkgs, err := Pack(*dist, *launcher, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "npmpack:", err)
		os.Exit(1)
	}
	for _, p := range pkgs {
		fmt.Println(p)
	}
}

// artifact is an entry of GoReleaser's dist/artifacts.json.
type artifact struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Goos   string `json:"goos"`
	Goarch string `json:"goarch"`
	Type   string `json:"type"`
}

// metadata is GoReleaser's dist/metadata.json.
type metadata struct {
	ProjectName string `json:"project_name"`
	Version     string `json:"version"`
	Tag         string `json:"tag"`
}

// npmPlatform maps GOOS and GOARCH to npm's os and cpu (process.platform,
// process.arch).
var (
	npmOS  = map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}
	npmCPU = map[string]string{"amd64": "x64", "arm64": "arm64"}
)

// semver is what npm takes as a version (semver 2.0, no leading v).
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// Scope is the npm scope of the platform packages.
const Scope = "@todoharness"

// Launcher is the name of the launcher package (npx todoharness).
const Launcher = "todoharness"

// Pack writes the packages of the release in dist under out (emptied
// first) and returns their folders, the launcher's last.
func Pack(dist, launcherDir, out string) ([]string, error) {
	var meta metadata
	if err := readJSON(filepath.Join(dist, "metadata.json"), &meta); err != nil {
		return nil, err
	}
	if !semver.MatchString(meta.Version) {
		return nil, fmt.Errorf("%s: version %q is not a semver version npm takes", filepath.Join(dist, "metadata.json"), meta.Version)
	}
	var arts []artifact
	if err := readJSON(filepath.Join(dist, "artifacts.json"), &arts); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(out); err != nil {
		return nil, fmt.Errorf("empty %s: %w", out, err)
	}
	optional := map[string]string{}
	var dirs []string
	for i, a := range arts {
		if a.Type != "Binary" {
			continue
		}
		osName, cpu := npmOS[a.Goos], npmCPU[a.Goarch]
		if osName == "" || cpu == "" {
			return nil, fmt.Errorf("%s: artifact %d (%s): no npm platform for %s/%s", filepath.Join(dist, "artifacts.json"), i, a.Name, a.Goos, a.Goarch)
		}
		name := fmt.Sprintf("%s/cli-%s-%s", Scope, osName, cpu)
		if _, dup := optional[name]; dup {
			return nil, fmt.Errorf("%s: two binaries for %s/%s", filepath.Join(dist, "artifacts.json"), a.Goos, a.Goarch)
		}
		dir := filepath.Join(out, "cli-"+osName+"-"+cpu)
		exe := "todoharness"
		if a.Goos == "windows" {
			exe += ".exe"
		}
		if err := copyFile(a.Path, filepath.Join(dir, "bin", exe), 0o755); err != nil {
			return nil, fmt.Errorf("artifact %s: %w", a.Name, err)
		}
		readme := fmt.Sprintf("# %s\n\nThe %s/%s binary of todoharness %s, for the npm package `%s` (`npx todoharness`), which installs it as an optional dependency on that platform.\n", name, osName, cpu, meta.Version, Launcher)
		if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
			return nil, err
		}
		pkg := map[string]any{
			"name":            name,
			"version":         meta.Version,
			"description":     fmt.Sprintf("The %s %s binary of todoharness, the todo_write conformance harness for ACP agents.", osName, cpu),
			"repository":      repository,
			"os":              []string{osName},
			"cpu":             []string{cpu},
			"files":           []string{"bin", "README.md"},
			"preferUnplugged": true,
		}
		if err := writeJSON(filepath.Join(dir, "package.json"), pkg); err != nil {
			return nil, err
		}
		optional[name] = meta.Version
		dirs = append(dirs, dir)
	}
	if len(optional) == 0 {
		return nil, fmt.Errorf("%s: no binaries", filepath.Join(dist, "artifacts.json"))
	}
	sort.Strings(dirs)
	dir := filepath.Join(out, Launcher)
	for f, perm := range map[string]os.FileMode{filepath.Join("bin", "todoharness.js"): 0o755, "README.md": 0o644} {
		if err := copyFile(filepath.Join(launcherDir, f), filepath.Join(dir, f), perm); err != nil {
			return nil, fmt.Errorf("launcher: %w", err)
		}
	}
	pkg := map[string]any{
		"name":                 Launcher,
		"version":              meta.Version,
		"description":          "The test and conformance harness for the todo_write contract of ACP coding agents (npx todoharness conform --agent '...').",
		"repository":           repository,
		"bin":                  map[string]string{"todoharness": "bin/todoharness.js"},
		"files":                []string{"bin", "README.md"},
		"engines":              map[string]string{"node": ">=18"},
		"optionalDependencies": optional,
	}
	if err := writeJSON(filepath.Join(dir, "package.json"), pkg); err != nil {
		return nil, err
	}
	return append(dirs, dir), nil
}

var repository = map[string]string{"type": "git", "url": "git+https://github.com/todoharness/todoharness.git"}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// copyFile copies src to dst (its folder made), dst with mode perm.
func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	o, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(o, in)
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return os.Chmod(dst, perm)
}

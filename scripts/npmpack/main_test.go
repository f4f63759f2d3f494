package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeDist writes a GoReleaser dist folder: metadata.json with version, and
// artifacts.json listing a binary per GOOS/GOARCH pair (and an archive,
// which npmpack leaves alone).
func fakeDist(t *testing.T, version string, pairs ...string) string {
	t.Helper()
	dist := t.TempDir()
	var arts []map[string]string
	for _, p := range pairs {
		goos, goarch, _ := strings.Cut(p, "/")
		bin := filepath.Join(dist, "todoharness_"+goos+"_"+goarch, "todoharness")
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, []byte("binary for "+p), 0o755); err != nil {
			t.Fatal(err)
		}
		arts = append(arts, map[string]string{"name": "todoharness", "path": bin, "goos": goos, "goarch": goarch, "type": "Binary"},
			map[string]string{"name": "todoharness.tar.gz", "path": bin + ".tar.gz", "goos": goos, "goarch": goarch, "type": "Archive"})
	}
	write := func(name string, v any) {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dist, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("artifacts.json", arts)
	write("metadata.json", map[string]string{"project_name": "todoharness", "version": version, "tag": "v" + version})
	return dist
}

func readPkg(t *testing.T, dir string) map[string]any {
	t.Helper()
	var pkg map[string]any
	if err := readJSON(filepath.Join(dir, "package.json"), &pkg); err != nil {
		t.Fatal(err)
	}
	return pkg
}

// The six platforms of a release become six packages limited by os and
// cpu, each holding its binary, and a launcher that lists them all as
// optional dependencies of its own version; no package has a script.
func TestPackLaysOutThePlatformPackages(t *testing.T) {
	dist := fakeDist(t, "1.2.0", "linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64")
	out := filepath.Join(t.TempDir(), "npm")
	dirs, err := Pack(dist, filepath.Join("..", "..", "npm", "todoharness"), out)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 7 || filepath.Base(dirs[6]) != "todoharness" {
		t.Fatalf("packages %v, want six platforms and the launcher last", dirs)
	}
	want := map[string][2]string{
		"cli-linux-x64": {"linux", "x64"}, "cli-linux-arm64": {"linux", "arm64"},
		"cli-darwin-x64": {"darwin", "x64"}, "cli-darwin-arm64": {"darwin", "arm64"},
		"cli-win32-x64": {"win32", "x64"}, "cli-win32-arm64": {"win32", "arm64"},
	}
	for _, d := range dirs[:6] {
		w, ok := want[filepath.Base(d)]
		if !ok {
			t.Errorf("unexpected package %s", d)
			continue
		}
		pkg := readPkg(t, d)
		if pkg["name"] != Scope+"/"+filepath.Base(d) || pkg["version"] != "1.2.0" || fmt.Sprint(pkg["os"]) != "["+w[0]+"]" || fmt.Sprint(pkg["cpu"]) != "["+w[1]+"]" {
			t.Errorf("%s: package.json %v", d, pkg)
		}
		if _, ok := pkg["scripts"]; ok {
			t.Errorf("%s has scripts", d)
		}
		exe := "todoharness"
		if w[0] == "win32" {
			exe += ".exe"
		}
		fi, err := os.Stat(filepath.Join(d, "bin", exe))
		if err != nil || fi.Mode().Perm()&0o111 == 0 {
			t.Errorf("%s: binary %s: %v (mode %v)", d, exe, err, fi)
		}
	}
	launcher := readPkg(t, dirs[6])
	if _, ok := launcher["scripts"]; ok {
		t.Error("the launcher has scripts")
	}
	opt, _ := launcher["optionalDependencies"].(map[string]any)
	if len(opt) != 6 {
		t.Errorf("optionalDependencies %v, want the six platforms", opt)
	}
	for name, v := range opt {
		if v != "1.2.0" || !strings.HasPrefix(name, Scope+"/cli-") {
			t.Errorf("optional dependency %s@%v", name, v)
		}
	}
	if bin, _ := launcher["bin"].(map[string]any); bin["todoharness"] != "bin/todoharness.js" {
		t.Errorf("bin %v", launcher["bin"])
	}
	js, err := os.ReadFile(filepath.Join(dirs[6], "bin", "todoharness.js"))
	if err != nil {
		t.Fatal(err)
	}
	// The launcher knows every platform package the release ships.
	for name := range opt {
		if !strings.Contains(string(js), `"`+name+`"`) {
			t.Errorf("the launcher does not know %s", name)
		}
	}
}

// What npm would refuse, or a release that is not one, is an error naming
// the file and what is wrong.
func TestPackRefuses(t *testing.T) {
	launcher := filepath.Join("..", "..", "npm", "todoharness")
	for _, tc := range []struct {
		name, version string
		pairs         []string
		want          string
	}{
		{"a version npm refuses", "v1.2.0", []string{"linux/amd64"}, `version "v1.2.0" is not a semver version`},
		{"a platform npm has no name for", "1.2.0", []string{"plan9/amd64"}, "no npm platform for plan9/amd64"},
		{"no binaries", "1.2.0", nil, "no binaries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dist := fakeDist(t, tc.version, tc.pairs...)
			_, err := Pack(dist, launcher, filepath.Join(t.TempDir(), "npm"))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dist) {
				t.Errorf("Pack: %v, want an error naming %s and %q", err, dist, tc.want)
			}
		})
	}
}

package snapshot

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestFoldersExpandsAFolderOfScenarios(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"b", "a"} {
		if err := os.MkdirAll(filepath.Join(root, "set", n), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "set", n, "input.json"), []byte(`{"steps":[{"op":"initialize"}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(root, "README.md")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(root, "set", "b")
	got := Folders([]string{filepath.Join(root, "set"), one, file})
	want := []string{filepath.Join(root, "set", "a"), filepath.Join(root, "set", "b"), one, file}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Folders = %q, want %q", got, want)
	}
	if _, err := Load(file); err == nil || !strings.Contains(err.Error(), "not a folder (a scenario is a folder holding input.json)") {
		t.Fatalf("Load(file) = %v", err)
	}
}

package snapshot_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/session"
	. "github.com/todoharness/todoharness/snapshot"
)

// FuzzScenarioFolder is the scenario folder reader of `snapshot run`: a
// folder holding any input.json and session.jsonl is refused with an error
// naming the file, or read into the steps and the model's answers the run
// would serve, without panicking.
func FuzzScenarioFolder(f *testing.F) {
	for _, name := range []string{"todo-plan", "head-todo-write", "head-packed-chunks"} {
		in, err1 := os.ReadFile(filepath.Join(fixture(name), "input.json"))
		log, err2 := os.ReadFile(filepath.Join(fixture(name), SessionFile))
		if err1 == nil && err2 == nil {
			f.Add(in, log)
		}
	}
	f.Add([]byte(`{"steps":[{"op":"initialize"}]}`), []byte(`{"type":"session","version":0,"id":"s","createdAt":0}`+"\n"+
		`{"type":"reasoning-chunks","data":{"turn":1,"step":1,"index":0,"texts":["a","b"],"dt":[-5]}}`+"\n"))
	// One folder, rewritten by each input (a folder per input would cost
	// more than the reading).
	dir := filepath.Join(f.TempDir(), "sc")
	if err := os.Mkdir(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, input, log []byte) {
		if err := os.WriteFile(filepath.Join(dir, "input.json"), input, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, SessionFile), log, 0o644); err != nil {
			t.Fatal(err)
		}
		sc, err := Load(dir)
		if err != nil {
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("the error does not name the folder: %v", err)
			}
			return
		}
		var logs []Log
		for _, p := range sc.Logs {
			ld, err := session.LoadFileContext(context.Background(), p)
			if err != nil {
				if !strings.Contains(err.Error(), p) {
					t.Fatalf("the error does not name the log: %v", err)
				}
				return
			}
			logs = append(logs, Log{Name: filepath.Base(p), Log: ld})
		}
		_, _, _ = ScriptFromLogs(sc.Name, logs)
	})
}

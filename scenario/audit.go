package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/todoharness/todoharness/harness/llm/cassette"
)

// The views the e2e tier keeps of a scenario, each in a golden file
// <scenario>.<view>.golden of its golden folder: ACPGolden, LogGolden, and
// the request pins (the tool definitions and the system prompt of the
// replayed requests, recording.Pins).
const (
	ViewACP    = "acp"
	ViewLog    = "log"
	ViewTools  = "tools"
	ViewSystem = "system"
)

// GoldenSuffix ends every golden file name.
const GoldenSuffix = ".golden"

// GoldenViews lists the views, in the order above.
func GoldenViews() []string { return []string{ViewACP, ViewLog, ViewTools, ViewSystem} }

// Audit checks an e2e tree, the scenario folders in scenarios and the
// golden files in goldens, for what would otherwise be passed over in
// silence or fail far from its cause:
//
//   - a folder of scenarios without its files (input.json, cassette.yaml):
//     List would skip it, or its replay would fail without saying why;
//   - a cassette whose provenance block is missing or wrong (including a
//     claim of real-model output recorded against a loopback address), as
//     cassette.LoadProvenance reads it;
//   - a file in goldens that is not <scenario>.<view>.golden (view one of
//     GoldenViews), or whose scenario folder does not exist: a golden left
//     behind by a scenario that was renamed or removed.
//
// Folders and files whose name starts with "." (a recording's temporary
// folder) and loose files of scenarios (its README) are not scenarios. A
// scenario without its goldens is not reported here: comparing with them
// fails saying which file to create, and GOLDIE_UPDATE=1 creates it.
//
// The result joins one error per defect, each naming its file; nil when the
// tree is whole.
func Audit(scenarios, goldens string) error {
	entries, err := os.ReadDir(scenarios)
	if err != nil {
		return fmt.Errorf("audit e2e scenarios: %w", err)
	}
	var errs []error
	names := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		names[e.Name()] = true
		dir := filepath.Join(scenarios, e.Name())
		whole := true
		for _, f := range []string{InputFile, CassetteFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				whole = false
				errs = append(errs, fmt.Errorf("scenario folder %s has no %s (a scenario is a folder holding %s and %s; add it, or remove the folder): %w",
					dir, f, InputFile, CassetteFile, err))
			}
		}
		if whole {
			if _, err := cassette.LoadProvenance(filepath.Join(dir, CassetteFile)); err != nil {
				errs = append(errs, fmt.Errorf("scenario %s: %w", dir, err))
			}
		}
	}
	gs, err := os.ReadDir(goldens)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("audit e2e goldens: %w", err))...)
	}
	for _, g := range gs {
		if g.IsDir() || strings.HasPrefix(g.Name(), ".") {
			continue
		}
		path := filepath.Join(goldens, g.Name())
		name, ok := scenarioOfGolden(g.Name())
		if !ok {
			errs = append(errs, fmt.Errorf("golden %s: not named <scenario>.<view>%s with a view of %s", path, GoldenSuffix, strings.Join(GoldenViews(), ", ")))
			continue
		}
		if !names[name] {
			errs = append(errs, fmt.Errorf("golden %s without a scenario: there is no folder %s (remove the golden, or restore the scenario)",
				path, filepath.Join(scenarios, name)))
		}
	}
	return errors.Join(errs...)
}

// scenarioOfGolden returns the scenario of a golden file name
// <scenario>.<view>.golden.
func scenarioOfGolden(file string) (string, bool) {
	base, ok := strings.CutSuffix(file, GoldenSuffix)
	if !ok {
		return "", false
	}
	for _, v := range GoldenViews() {
		if name, ok := strings.CutSuffix(base, "."+v); ok && name != "" {
			return name, true
		}
	}
	return "", false
}

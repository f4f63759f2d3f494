package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/internal/testutil"
)

// layer is a package's place in the repository's layering (README, "What
// is in the box"): a package imports only packages of its own layer or a
// lower one. Peers of one layer may not import each other where the
// layer says so. Test files are not held to it (a test may drive its
// package from above), nor are suites/ and scripts/.
type layer struct {
	rank int
	// peers: the packages of this layer import none of the others' (by
	// top folder).
	peers bool
}

// layerOf is the layer of a package, by its path inside the module ("" for
// the root); ok is false for a package no layer holds (suites, scripts).
func layerOf(rel string) (name string, l layer, ok bool) {
	top, _, _ := strings.Cut(rel, "/")
	switch top {
	case "internal", "fixtures":
		return top, layer{rank: 0}, true
	case "harness", "mockmodel":
		return top, layer{rank: 1}, true
	case "driver":
		return top, layer{rank: 2}, true
	case "scenario":
		return top, layer{rank: 3}, true
	case "conformance", "snapshot", "recording":
		return top, layer{rank: 4, peers: true}, true
	case "cmd":
		return top, layer{rank: 5}, true
	}
	return top, layer{}, false
}

// The folders show the layers: no package imports one of a higher layer,
// and conformance, snapshot and recording import none of each other.
func TestPackagesImportOnlyLowerLayers(t *testing.T) {
	out := goList(t, "-json=ImportPath,Imports", "./...")
	const module = testutil.ModulePath + "/"
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		from, fl, ok := layerOf(strings.TrimPrefix(p.ImportPath, module))
		if !ok {
			continue
		}
		checked++
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			to, tl, ok := layerOf(strings.TrimPrefix(imp, module))
			switch {
			case !ok:
				t.Errorf("%s imports %s, which no layer holds", p.ImportPath, imp)
			case tl.rank > fl.rank:
				t.Errorf("%s (layer %d, %s/) imports %s (layer %d, %s/): a lower layer may not import a higher one", p.ImportPath, fl.rank, from, imp, tl.rank, to)
			case tl.rank == fl.rank && fl.peers && to != from:
				t.Errorf("%s imports %s: %s/ and %s/ are peers on the driver, and peers import none of each other", p.ImportPath, imp, from, to)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d packages held to the layers: is go list reading the module?", checked)
	}
}

// The rule can fail: a harness package importing the driver, or a peer
// importing a peer, is caught.
func TestLayerOfOrdersTheFolders(t *testing.T) {
	rank := func(rel string) int {
		_, l, ok := layerOf(rel)
		if !ok {
			t.Fatalf("%s: no layer", rel)
		}
		return l.rank
	}
	order := []string{"internal/jsonx", "harness/acp", "driver", "scenario", "conformance/report", "cmd/todoharness/cli"}
	for i := 1; i < len(order); i++ {
		if rank(order[i-1]) >= rank(order[i]) {
			t.Errorf("%s is not below %s", order[i-1], order[i])
		}
	}
	if rank("mockmodel") != rank("harness/session") || rank("snapshot") != rank("recording") {
		t.Error("mockmodel and harness, snapshot and recording: one layer each")
	}
	if _, _, ok := layerOf("suites/e2e"); ok {
		t.Error("suites/ is tests only: no layer")
	}
}

package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
	"github.com/todoharness/todoharness/internal/testutil"
)

// committedCassettes returns every cassette under fixtures/.
func committedCassettes() []string {
	GinkgoHelper()
	var out []string
	root := filepath.Join(testutil.RepoRoot(), "fixtures")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), "\ninteractions:") {
			out = append(out, path)
		}
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
	return out
}

var _ = Describe("committed cassettes", func() {
	It("the credential scan catches keys, bearer tokens and auth headers", func() {
		planted := "    headers:\n        Authorization:\n            - Bearer abcdefghijklmnopqrstuvwxyz\n" +
			"        body: '{\"api\":\"sk-0123456789abcdef0123456789abcdef\"}'\n        X-Api-Key:\n            - x\n"
		kinds := map[string]bool{}
		for _, f := range scrub.ScanCredentials([]byte(planted)) {
			kinds[f.Kind] = true
		}
		Expect(kinds).To(HaveKey("authorization header"))
		Expect(kinds).To(HaveKey("bearer token"))
		Expect(kinds).To(HaveKey("api key (sk-…)"))
		Expect(kinds).To(HaveKey("api key header"))
		Expect(scrub.ScanCredentials([]byte("the task-list of a risk-free bearer of news"))).To(BeEmpty())
	})

	It("hold no credentials", func() {
		paths := committedCassettes()
		Expect(len(paths)).To(BeNumerically(">=", len(scenarioNames())))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			Expect(err).NotTo(HaveOccurred())
			Expect(scrub.ScanCredentials(data)).To(BeEmpty(), "credential-like text in %s", p)
		}
	})

	It("no fixture, golden or testdata file holds a credential-shaped value that is not an obvious fake", func() {
		root := testutil.RepoRoot()
		files := 0
		Expect(filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == ".git" || d.Name() == "node_modules" {
					return filepath.SkipDir
				}
				return nil
			}
			rel := filepath.ToSlash(strings.TrimPrefix(path, root))
			if !strings.HasPrefix(rel, "/fixtures/") && !strings.HasPrefix(rel, "/golden/") && !strings.Contains(rel, "/testdata/") {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil || len(data) > 4<<20 {
				return err
			}
			files++
			for _, f := range scrub.ScanCredentials(data) {
				if f.Kind == "compressed body" || strings.HasSuffix(f.Kind, "header") {
					continue // no value: the cassette guards judge those
				}
				Expect(obviouslyFake(f.Match)).To(BeTrue(), "%s: %s looks like a real credential (a fake one says FAKE, test, example or dummy, or repeats a few characters)", rel, f)
			}
			return nil
		})).To(Succeed())
		Expect(files).To(BeNumerically(">", 100), "the walk read the fixtures")
		Expect(obviouslyFake("sk-abcdefabcdefabcdefabcdef")).To(BeTrue())
		Expect(obviouslyFake("sk-proj-FAKEtest0123456789abcdefXYZ")).To(BeTrue())
		sum := sha256.Sum256([]byte("a key-shaped value, made at run time"))
		Expect(obviouslyFake("sk-proj-" + base64.RawURLEncoding.EncodeToString(sum[:]))).To(BeFalse())
	})

	It("each say where they came from, and only real-model output claims to be", func() {
		for _, p := range committedCassettes() {
			prov, err := cassette.LoadProvenance(p)
			Expect(err).NotTo(HaveOccurred())
			if cassette.IsLoopback(prov.BaseURL) {
				Expect(prov.Source).To(Equal(cassette.SourceMockServer), p)
				Expect(prov.RealModelOutput).To(BeFalse(), p)
			}
		}
	})

	It("recorded against the mock server are labelled so, in the provenance and in the README", func() {
		readme, err := os.ReadFile(filepath.Join(scenariosDir(), "README.md"))
		Expect(err).NotTo(HaveOccurred())
		for _, name := range mockRecorded() {
			sc := loadScenario(name)
			p, err := cassette.LoadProvenance(sc.CassettePath())
			Expect(err).NotTo(HaveOccurred())
			if p.Source != cassette.SourceMockServer {
				continue // re-recorded against a real model since
			}
			Expect(p.RealModelOutput).To(BeFalse())
			Expect(p.Description).To(ContainSubstring("NOT real-model output"))
			Expect(string(readme)).To(MatchRegexp("(?m)^\\|\\s*`" + name + "`.*mock-recorded"))
		}
	})
})

// obviouslyFake reports whether a credential-shaped value is one no
// provider issued: it says FAKE, test, example or dummy, or it is made of
// fewer than 12 distinct characters (sk-abcdefabcdef…), its scheme
// (Bearer) aside. A real key's random part has 20 or more.
func obviouslyFake(v string) bool {
	l := strings.ToLower(v)
	for _, w := range []string{"fake", "test", "example", "dummy", "redacted"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	if f := strings.Fields(v); len(f) > 0 {
		v = f[len(f)-1] // without a scheme (Bearer, Basic)
	}
	distinct := map[rune]bool{}
	for _, r := range v {
		distinct[r] = true
	}
	return len(distinct) < 12
}

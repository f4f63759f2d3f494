package e2e

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/scenario"
)

// copyTree copies the regular files under src into dst.
func copyTree(src, dst string) {
	GinkgoHelper()
	Expect(filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		copyFile(path, filepath.Join(dst, rel))
		return nil
	})).To(Succeed())
}

var _ = Describe("the e2e tree's guards", func() {
	It("find the committed scenarios and goldens whole: every folder with its files, every cassette with its provenance, every golden with its scenario", func() {
		Expect(scenario.Audit(scenariosDir(), testutil.GoldenDir(suiteName))).To(Succeed())
	})

	DescribeTable("fail on a copy of the committed tree with one defect, naming the file",
		func(defect func(scenarios, goldens string), want string) {
			root := GinkgoT().TempDir()
			scenarios, goldens := filepath.Join(root, "fixtures", "e2e"), filepath.Join(root, "golden", "e2e")
			copyTree(scenariosDir(), scenarios)
			copyTree(testutil.GoldenDir(suiteName), goldens)
			Expect(scenario.Audit(scenarios, goldens)).To(Succeed(), "the copy is whole before the defect")
			defect(scenarios, goldens)
			err := scenario.Audit(scenarios, goldens)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(strings.ReplaceAll(want, "{root}", root)))
		},
		Entry("a scenario folder without its input.json", func(scenarios, _ string) {
			Expect(os.Remove(filepath.Join(scenarios, "replace", scenario.InputFile))).To(Succeed())
		}, "scenario folder {root}/fixtures/e2e/replace has no input.json"),
		Entry("a scenario folder without its cassette.yaml", func(scenarios, _ string) {
			Expect(os.Remove(filepath.Join(scenarios, "replace", scenario.CassetteFile))).To(Succeed())
		}, "scenario folder {root}/fixtures/e2e/replace has no cassette.yaml"),
		Entry("a golden without a scenario", func(scenarios, _ string) {
			Expect(os.RemoveAll(filepath.Join(scenarios, "reject-recover"))).To(Succeed())
		}, "golden {root}/golden/e2e/reject-recover.acp.golden without a scenario: there is no folder {root}/fixtures/e2e/reject-recover"),
		Entry("a cassette whose provenance is missing", func(scenarios, _ string) {
			path := filepath.Join(scenarios, "replace", scenario.CassetteFile)
			data, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			s := string(data)
			Expect(os.WriteFile(path, []byte(s[strings.Index(s, "version: 2"):]), 0o644)).To(Succeed())
		}, "cassette {root}/fixtures/e2e/replace/cassette.yaml is corrupt: no provenance block (every cassette must say where it came from)"),
		Entry("a cassette claiming real-model output, recorded against a loopback address", func(scenarios, _ string) {
			path := filepath.Join(scenarios, "todo-plan", scenario.CassetteFile)
			data, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			s := strings.Replace(string(data), "baseURL: https://api.deepseek.com", "baseURL: http://127.0.0.1:8080", 1)
			Expect(s).NotTo(Equal(string(data)), "the todo-plan cassette is addressed to DeepSeek")
			Expect(os.WriteFile(path, []byte(s), 0o644)).To(Succeed())
		}, "cassette {root}/fixtures/e2e/todo-plan/cassette.yaml is corrupt: bad provenance block: provenance: claims realModelOutput: true but was recorded against a loopback address"),
	)
})

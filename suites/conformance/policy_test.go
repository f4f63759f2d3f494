package conformance

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/conformance"
)

// parallelReference is the reference agent with allowParallelInProgress
// set: it accepts two in_progress tasks and says so in its tool description.
func parallelReference() conformance.Target {
	dir := GinkgoT().TempDir()
	comp := filepath.Join(dir, "composition.yaml")
	Expect(os.WriteFile(comp, []byte("plugins:\n  - name: todo\n    config:\n      allowParallelInProgress: true\n"), 0o644)).To(Succeed())
	t := reference()
	t.Name, t.Command = "reference (parallel)", referenceArgs("--composition", comp)
	return t
}

// twoActiveOnly runs the one case that feeds TW-VALID-TWOACTIVE.
func twoActiveOnly(policy string) func(*conformance.Config) {
	return func(cfg *conformance.Config) {
		var kept []*conformance.Case
		for _, c := range cfg.Cases {
			if c.Feeds("TW-VALID-TWOACTIVE") {
				kept = append(kept, c)
			}
		}
		Expect(kept).NotTo(BeEmpty())
		cfg.Cases, cfg.Policy = kept, policy
	}
}

func twoActive(rep *conformance.Report) conformance.CheckResult {
	c, ok := rep.Check("TW-VALID-TWOACTIVE")
	Expect(ok).To(BeTrue())
	return c
}

var _ = Describe("the in_progress policy (--policy)", func() {
	It("single: the reference agent rejects two in_progress tasks and passes; the report says single", func() {
		rep := run(reference(), twoActiveOnly(conformance.PolicySingle))
		c := twoActive(rep)
		Expect(c.Outcome).To(Equal(conformance.Pass), explain(rep))
		Expect(rep.Policy).To(Equal(conformance.PolicySingle))
		Expect(explain(rep)).To(ContainSubstring("policy: single (--policy single, the default)"))
	})

	It("single: an agent that allows parallel work fails TW-VALID-TWOACTIVE, naming the policy", func() {
		rep := run(parallelReference(), twoActiveOnly(conformance.PolicySingle))
		c := twoActive(rep)
		Expect(c.Outcome).To(Equal(conformance.Fail), explain(rep))
		Expect(c.Reason).To(ContainSubstring("was accepted"))
		Expect(c.Reason).To(ContainSubstring("policy single"))
	})

	It("parallel: the check is judged the other way, accepted and shown in the plan, and says so", func() {
		rep := run(parallelReference(), twoActiveOnly(conformance.PolicyParallel))
		c := twoActive(rep)
		Expect(c.Outcome).To(Equal(conformance.Pass), explain(rep))
		Expect(c.Cases[0].Reason).To(ContainSubstring("judged the other way: two tasks in_progress were accepted and shown in the plan"))
		Expect(rep.Policy).To(Equal(conformance.PolicyParallel))
		Expect(explain(rep)).To(ContainSubstring("policy: parallel (--policy parallel)"))
		for _, id := range []string{"TW-PLAN-1", "TW-HISTORY-1"} {
			cr, ok := rep.Check(id)
			Expect(ok).To(BeTrue())
			Expect(cr.Outcome).To(Equal(conformance.Pass), id+"\n"+explain(rep))
		}
	})

	It("parallel: an agent that still rejects two in_progress tasks fails", func() {
		rep := run(reference(), twoActiveOnly(conformance.PolicyParallel))
		c := twoActive(rep)
		Expect(c.Outcome).To(Equal(conformance.Fail), explain(rep))
		Expect(c.Reason).To(ContainSubstring("was rejected"))
	})

	It("auto: reads parallel from the parallel agent's tool description and states it in the report", func() {
		rep := run(parallelReference(), twoActiveOnly(conformance.PolicyAuto))
		Expect(twoActive(rep).Outcome).To(Equal(conformance.Pass), explain(rep))
		Expect(rep.Policy).To(Equal(conformance.PolicyParallel))
		Expect(rep.PolicySource).To(ContainSubstring(`--policy auto: the tool description says "several tasks may be in_progress"`))
		Expect(explain(rep)).To(ContainSubstring("policy: parallel (--policy auto: the tool description says"))
	})

	It("auto: reads single from the shipped reference agent's tool description", func() {
		rep := run(reference(), twoActiveOnly(conformance.PolicyAuto))
		Expect(twoActive(rep).Outcome).To(Equal(conformance.Pass), explain(rep))
		Expect(rep.Policy).To(Equal(conformance.PolicySingle))
		Expect(rep.PolicySource).To(ContainSubstring(`--policy auto: the tool description says "exactly one task in_progress"`))
	})

	It("refuses an unknown policy before starting any agent", func() {
		cfg := conformance.Config{Agent: reference(), Cases: cases(), Policy: "sometimes"}
		_, err := conformance.Run(GinkgoT().Context(), cfg)
		Expect(err).To(MatchError(ContainSubstring(`unknown policy "sometimes"`)))
	})
})

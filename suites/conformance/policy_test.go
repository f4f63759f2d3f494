package conformance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
)

// parallelReferenceE is the reference agent with allowParallelInProgress
// set: it accepts two in_progress tasks and says so in its tool
// description (no Expect: once calls it).
func parallelReferenceE() (driver.Target, error) {
	dir, err := workDir()
	if err != nil {
		return driver.Target{}, err
	}
	comp := filepath.Join(dir, "composition.yaml")
	if err := os.WriteFile(comp, []byte("plugins:\n  - name: todo\n    config:\n      allowParallelInProgress: true\n"), 0o644); err != nil {
		return driver.Target{}, fmt.Errorf("write the composition: %w", err)
	}
	t := reference()
	t.Name, t.Command = "reference (parallel)", referenceArgs("--composition", comp)
	return t, nil
}

// twoActiveRun is the run, made once, of the one case that
// feeds TW-VALID-TWOACTIVE against the agent target builds, with policy.
func twoActiveRun(name string, target func() (driver.Target, error), policy string) func() *conformance.Report {
	return once(func() (*conformance.Report, error) {
		cs, err := casesE()
		if err != nil {
			return nil, err
		}
		var kept []*conformance.Case
		for _, c := range cs {
			if c.Feeds("TW-VALID-TWOACTIVE") {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			return nil, errors.New("no case feeds TW-VALID-TWOACTIVE")
		}
		t, err := target()
		if err != nil {
			return nil, err
		}
		return runE(t, func(cfg *conformance.Config) { cfg.Cases, cfg.Policy = kept, policy })
	})
}

// referenceE is the reference agent, as a target builder that cannot fail.
func referenceE() (driver.Target, error) { return reference(), nil }

func twoActive(rep *conformance.Report) conformance.CheckResult {
	c, ok := rep.Check("TW-VALID-TWOACTIVE")
	Expect(ok).To(BeTrue())
	return c
}

// Each run is made by the first spec that judges it (twoActiveRun).
var _ = Describe("the in_progress policy (--policy)", func() {
	singleRef := twoActiveRun("single, the reference agent", referenceE, conformance.PolicySingle)
	It("single: the reference agent rejects two in_progress tasks and passes; the report says single", func() {
		rep := singleRef()
		c := twoActive(rep)
		Expect(c.Outcome).To(Equal(conformance.Pass), explained(rep, ""))
		Expect(rep.Policy).To(Equal(conformance.PolicySingle))
		Expect(explain(rep)).To(ContainSubstring("policy: single (--policy single, the default)"))
	})

	singleParallel := twoActiveRun("single, the parallel agent", parallelReferenceE, conformance.PolicySingle)
	It("single: an agent that allows parallel work fails TW-VALID-TWOACTIVE, naming the policy", func() {
		rep := singleParallel()
		c := twoActive(rep)
		Expect(c.Outcome).To(Equal(conformance.Fail), explained(rep, ""))
		Expect(c.Reason).To(ContainSubstring("was accepted"))
		Expect(c.Reason).To(ContainSubstring("policy single"))
	})

	parallelParallel := twoActiveRun("parallel, the parallel agent", parallelReferenceE, conformance.PolicyParallel)
	It("parallel: the check is judged the other way, accepted and shown in the plan, and says so", func() {
		rep := parallelParallel()
		c := twoActive(rep)
		Expect(c.Outcome).To(Equal(conformance.Pass), explained(rep, ""))
		Expect(c.Cases[0].Reason).To(ContainSubstring("judged the other way: two tasks in_progress were accepted and shown in the plan"))
		Expect(rep.Policy).To(Equal(conformance.PolicyParallel))
		Expect(explain(rep)).To(ContainSubstring("policy: parallel (--policy parallel)"))
		for _, id := range []string{"TW-PLAN-1", "TW-HISTORY-1"} {
			cr, ok := rep.Check(id)
			Expect(ok).To(BeTrue())
			Expect(cr.Outcome).To(Equal(conformance.Pass), explained(rep, "%s", id))
		}
	})

	parallelRef := twoActiveRun("parallel, the reference agent", referenceE, conformance.PolicyParallel)
	It("parallel: an agent that still rejects two in_progress tasks fails", func() {
		rep := parallelRef()
		c := twoActive(rep)
		Expect(c.Outcome).To(Equal(conformance.Fail), explained(rep, ""))
		Expect(c.Reason).To(ContainSubstring("was rejected"))
	})

	autoParallel := twoActiveRun("auto, the parallel agent", parallelReferenceE, conformance.PolicyAuto)
	It("auto: reads parallel from the parallel agent's tool description and states it in the report", func() {
		rep := autoParallel()
		Expect(twoActive(rep).Outcome).To(Equal(conformance.Pass), explained(rep, ""))
		Expect(rep.Policy).To(Equal(conformance.PolicyParallel))
		Expect(rep.PolicySource).To(ContainSubstring(`--policy auto: the tool description says "several tasks may be in_progress"`))
		Expect(explain(rep)).To(ContainSubstring("policy: parallel (--policy auto: the tool description says"))
	})

	autoRef := twoActiveRun("auto, the reference agent", referenceE, conformance.PolicyAuto)
	It("auto: reads single from the shipped reference agent's tool description", func() {
		rep := autoRef()
		Expect(twoActive(rep).Outcome).To(Equal(conformance.Pass), explained(rep, ""))
		Expect(rep.Policy).To(Equal(conformance.PolicySingle))
		Expect(rep.PolicySource).To(ContainSubstring(`--policy auto: the tool description says "exactly one task in_progress"`))
	})

	It("refuses an unknown policy before starting any agent", func() {
		cfg := conformance.Config{Agent: reference(), Cases: cases(), Policy: "sometimes"}
		_, err := conformance.Run(GinkgoT().Context(), cfg)
		Expect(err).To(MatchError(ContainSubstring(`unknown policy "sometimes"`)))
	})
})

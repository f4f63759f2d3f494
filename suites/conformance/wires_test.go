package conformance

import (
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/mockmodel"
)

// overWire is the mutant speaking the model API wire (openai, responses,
// anthropic, gemini) with mutation m.
func overWire(wire, m string) driver.Target {
	t := mutant(m)
	t.Name = "mutant " + m + " over " + wire
	t.Command = append(t.Command, "--wire", wire)
	return t
}

// Each run is made by the first spec that judges it.
var _ = Describe("the checks work whatever model API the agent speaks", func() {
	wireOf := map[string]string{
		"openai":    mockmodel.WireOpenAIChat,
		"responses": mockmodel.WireOpenAIResponses,
		"anthropic": mockmodel.WireAnthropic,
		"gemini":    mockmodel.WireGemini,
	}
	// The runs the specs below judge, by "MUTATION over WIRE".
	breakages := [][2]string{{"anthropic", "accept-empty"}, {"gemini", "accept-empty"}, {"responses", "accept-empty"}, {"gemini", "rename-tool"}}
	plan := map[string]plannedRun{}
	over := func(wire, m string) plannedRun {
		return plannedRun{target: func() driver.Target { return overWire(wire, m) }}
	}
	for w := range wireOf {
		plan["none over "+w] = over(w, "none")
	}
	for _, b := range breakages {
		plan[b[1]+" over "+b[0]] = over(b[0], b[1])
	}
	plan["as-claude over anthropic"] = over("anthropic", "as-claude")
	// A side request before every prompt, as opencode's title request: the
	// mutant's first model request of a case offers no tools when
	// TODOHARNESS_SIDE_REQUEST is set.
	plan["side requests over anthropic"] = plannedRun{target: func() driver.Target {
		side := overWire("anthropic", "none")
		side.Env = append(side.Env, "TODOHARNESS_SIDE_REQUEST=1")
		return side
	}}
	report := plannedRuns(plan)

	DescribeTable("the reference behaviour passes every check over each wire",
		func(wire string) {
			rep := report("none over " + wire)
			Expect(rep.Wires).To(Equal([]string{wireOf[wire]}), "the agent must have used the %s wire only", wire)
			Expect(rep.Dialect).To(Equal(driver.DialectTodoWrite))
			for _, c := range rep.Checks {
				Expect(c.Outcome).To(Equal(cleanOutcome(rep, c.Check)), explained(rep, "%s: %s", c.ID, c.Reason))
			}
			Expect(rep.OK).To(BeTrue())
		},
		Entry("OpenAI chat completions", "openai"),
		Entry("OpenAI Responses", "responses"),
		Entry("Anthropic Messages", "anthropic"),
		Entry("Gemini", "gemini"),
	)

	// The tool results' error flags travel differently on each wire
	// (is_error, a functionResponse "error" field, an "Error:" prefix): the
	// validation checks read the canonical IsError, so a breakage fails the
	// same checks on every wire.
	DescribeTable("a breakage fails the same checks over each wire",
		func(wire, m string, want ...string) {
			Expect(breakages).To(ContainElement([2]string{wire, m}))
			rep := report(m + " over " + wire)
			Expect(rep.Wires).To(Equal([]string{wireOf[wire]}))
			sort.Strings(want)
			Expect(rep.FailedIDs()).To(Equal(want), explained(rep, ""))
		},
		Entry("accept-empty over Anthropic Messages", "anthropic", "accept-empty", "TW-VALID-EMPTY", "TW-VALID-WS"),
		Entry("accept-empty over Gemini", "gemini", "accept-empty", "TW-VALID-EMPTY", "TW-VALID-WS"),
		Entry("accept-empty over OpenAI Responses", "responses", "accept-empty", "TW-VALID-EMPTY", "TW-VALID-WS"),
		Entry("rename-tool over Gemini", "gemini", "rename-tool", "TW-TOOL-1"),
	)

	It("detects a dialect from the tools offered on a non-OpenAI wire (claude TodoWrite over Anthropic Messages)", func() {
		rep := report("as-claude over anthropic")
		Expect(rep.Dialect).To(Equal(driver.DialectClaude))
		Expect(rep.DialectSource).To(Equal("detected"))
		Expect(rep.ToolsOffered).To(ContainElement("TodoWrite"))
		Expect(rep.OK).To(BeTrue(), explained(rep, ""))
		for _, c := range rep.Checks {
			if !c.AppliesTo(driver.DialectClaude) {
				Expect(c.Outcome).To(Equal(conformance.NA))
			}
		}
	})

	It("keeps side requests (no tools offered) out of the script and out of the checks", func() {
		rep := report("side requests over anthropic")
		Expect(rep.OK).To(BeTrue(), explained(rep, ""))
		sides := 0
		for _, c := range rep.Cases {
			ev := c.Evidence()
			sides += len(ev.SideRequests)
			for _, e := range ev.Journal {
				Expect(e.Side).To(BeFalse())
				Expect(e.Tools).NotTo(BeEmpty())
			}
			for _, e := range ev.SideRequests {
				Expect(strings.Join(messageTexts(e), " ")).To(ContainSubstring("title"))
			}
		}
		Expect(sides).To(BeNumerically(">=", len(rep.Cases)))
	})
})

func messageTexts(e mockmodel.JournalEntry) []string {
	var out []string
	for _, m := range e.Messages {
		out = append(out, m.Text())
	}
	return out
}

package report

import (
	"bytes"
	"encoding/json"
	"html"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/conformance"
)

// Every report says which ACP protocol version was negotiated, and that
// an agent offered 2 that answered 1 ran the v1 catalogue.
func TestReportsSayTheProtocolVersion(t *testing.T) {
	rep := judgeSaved(t, "reference", false, nil, "plan-basic")
	for _, tc := range []struct {
		p    conformance.Protocol
		want string
	}{
		{conformance.Protocol{Offered: 1, Negotiated: 1}, "1"},
		{conformance.Protocol{Offered: 2, Negotiated: 1}, "1 (offered 2; the agent answered 1, so the v1 catalogue ran: an agent that speaks only v1 does not fail for it)"},
		{conformance.Protocol{Offered: 2, Negotiated: 2}, "2 (offered 2: the ACP v2 draft, agentclientprotocol/agent-client-protocol@b7f00054 schema/v2/schema.json (schema 2.0.0-alpha.3, Apache-2.0))"},
		{conformance.Protocol{Offered: 1, PlanOps: true, Negotiated: 1}, "1 with clientCapabilities.plan (plan_update, plan_removed)"},
	} {
		r := *rep
		r.Protocol = tc.p
		var text, md, page bytes.Buffer
		if err := WriteSummary(&text, &r, false); err != nil {
			t.Fatal(err)
		}
		if err := WriteMarkdown(&md, &r); err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(&page, &r); err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "\nACP protocol version: "+tc.want+"\n") {
			t.Errorf("%+v: the summary does not say %q:\n%s", tc.p, tc.want, text.String())
		}
		if !strings.Contains(md.String(), "ACP protocol version "+mdText(tc.want)) {
			t.Errorf("%+v: the Markdown summary does not say %q", tc.p, tc.want)
		}
		if !strings.Contains(page.String(), html.EscapeString(tc.want)) {
			t.Errorf("%+v: the HTML report does not say %q", tc.p, tc.want)
		}
		var back struct {
			Protocol conformance.Protocol `json:"protocol"`
		}
		if err := json.Unmarshal(js, &back); err != nil || back.Protocol.Negotiated != tc.p.Negotiated || back.Protocol.Offered != tc.p.Offered {
			t.Errorf("%+v: the JSON report's protocol is %+v (%v)", tc.p, back.Protocol, err)
		}
	}
}

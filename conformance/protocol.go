package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/todoharness/todoharness/driver"
)

// Protocol is the ACP protocol version a run spoke: what its initialize
// offered and what the agent's processes negotiated.
type Protocol struct {
	// Offered is the protocol version offered (Config.Offer); PlanOps
	// that version 1 was offered with clientCapabilities.plan.
	Offered int  `json:"offered"`
	PlanOps bool `json:"planOps,omitempty"`
	// Negotiated is the version the agent's processes speak (0: none
	// answered initialize); Versions lists each version negotiated when
	// the processes differ (each case is judged on its own).
	Negotiated int   `json:"negotiated"`
	Versions   []int `json:"versions,omitempty"`
}

// runProtocol reads the protocol of a run from its cases: the offer of
// the first, the versions each process negotiated.
func runProtocol(evs []*Evidence) Protocol {
	var p Protocol
	for _, ev := range evs {
		if p.Offered == 0 {
			p.Offered, p.PlanOps = ev.Offer.Version(), ev.Offer.PlanOps
		}
		for _, pr := range ev.Procs {
			if v := procVersion(pr); v != 0 && !slices.Contains(p.Versions, v) {
				p.Versions = append(p.Versions, v)
			}
		}
	}
	slices.Sort(p.Versions)
	if len(p.Versions) > 0 {
		p.Negotiated = p.Versions[len(p.Versions)-1]
	}
	if len(p.Versions) < 2 {
		p.Versions = nil
	}
	return p
}

// procVersion is the version process pr negotiated: its ACPVersion, or 1
// when it answered initialize in evidence saved before there was a choice
// (0: it answered none).
func procVersion(pr driver.ProcResult) int {
	switch {
	case pr.ACPVersion != 0:
		return pr.ACPVersion
	case len(pr.Init) > 0:
		return driver.ACPv1
	}
	return 0
}

// String says which version the run spoke, and why when it is not the
// one offered: the header of every report.
func (p Protocol) String() string {
	offered := max(p.Offered, driver.ACPv1)
	caps := ""
	if p.PlanOps && offered == driver.ACPv1 {
		caps = " with clientCapabilities.plan (plan_update, plan_removed)"
	}
	switch {
	case len(p.Versions) > 1:
		vs := make([]string, len(p.Versions))
		for i, v := range p.Versions {
			vs[i] = fmt.Sprint(v)
		}
		return fmt.Sprintf("offered %d; the agent's processes negotiated versions %s (each case judged on the version its processes speak)", offered, strings.Join(vs, " and "))
	case p.Negotiated == 0:
		return fmt.Sprintf("%d offered%s; no initialize was answered", offered, caps)
	case p.Negotiated == driver.ACPv2:
		return fmt.Sprintf("2 (offered 2: the ACP v2 draft, %s)", driver.ACPSchemaV2Source)
	case offered == driver.ACPv2 && p.Negotiated == driver.ACPv1:
		return "1 (offered 2; the agent answered 1, so the v1 catalogue ran: an agent that speaks only v1 does not fail for it)"
	case p.Negotiated == offered:
		return fmt.Sprintf("%d%s", p.Negotiated, caps)
	}
	return fmt.Sprintf("%d (offered %d%s; ACP-INIT-1 judges the answer)", p.Negotiated, offered, caps)
}

// version is the protocol version process proc of the case negotiated
// (1 when it answered no initialize).
func (ev *Evidence) version(proc int) int {
	if proc >= 0 && proc < len(ev.Procs) {
		if v := procVersion(ev.Procs[proc]); v != 0 {
			return v
		}
	}
	return driver.ACPv1
}

// v2 reports whether the case spoke protocol version 2: its first
// process negotiated it (a case's processes are offered the same).
func (ev *Evidence) v2() bool { return ev.version(0) == driver.ACPv2 }

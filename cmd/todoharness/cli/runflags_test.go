package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
)

// conform and peers read --timeout, --grace, --parallel and -q the same way.
func TestRunFlagsShared(t *testing.T) {
	preset := &driver.Preset{Name: "p", Timeout: 2 * time.Minute}
	for _, tc := range []struct {
		args   []string
		preset *driver.Preset
		want   time.Duration
	}{
		{nil, nil, driver.DefaultTimeout},
		{nil, preset, 2 * time.Minute},
		{[]string{"--timeout", "5s"}, preset, 5 * time.Second},
		{[]string{"--timeout", "5s"}, nil, 5 * time.Second},
	} {
		var r runFlags
		f := pflag.NewFlagSet("t", pflag.ContinueOnError)
		r.register(f, "")
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := r.caseTimeout(tc.preset); got != tc.want {
			t.Errorf("%v with preset %v: timeout %s, want %s", tc.args, tc.preset != nil, got, tc.want)
		}
	}
	var r runFlags
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	r.register(f, "")
	if err := f.Parse([]string{"-q", "--parallel", "3", "--grace", "1s"}); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	cfg := r.config(driver.Target{Name: "x"}, nil, nil, &progress)
	if cfg.Progress != nil || cfg.Parallel != 3 || cfg.Grace != time.Second || cfg.Timeout != driver.DefaultTimeout {
		t.Errorf("config %+v", cfg)
	}
}

// --settle and --repeat are run flags too: peers takes them as conform
// does, into the run's Config, and both refuse the same bad values.
func TestRunFlagsSettleRepeat(t *testing.T) {
	var r runFlags
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	r.register(f, " per agent")
	if err := f.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if cfg := r.config(driver.Target{Name: "x"}, nil, nil, nil); cfg.Settle != driver.DefaultSettle || cfg.Repeat != 1 || !cfg.Pool || cfg.RerunPooled != conformance.RerunKnown || r.check() != nil {
		t.Errorf("defaults: settle %s, repeat %d, pool %v (want on), rerun pooled %q (want known), check %v", cfg.Settle, cfg.Repeat, cfg.Pool, cfg.RerunPooled, r.check())
	}
	if cfg := r.config(driver.Target{Name: "x", PoolSessions: 4}, nil, nil, nil); cfg.Agent.PoolSessions != 4 {
		t.Errorf("no --pool-sessions: %d sessions a pooled process, want the agent's 4", cfg.Agent.PoolSessions)
	}
	if err := f.Parse([]string{"--settle", "40ms", "--repeat", "4", "--pool", "off", "--pool-sessions", "3", "--rerun-pooled", "every"}); err != nil {
		t.Fatal(err)
	}
	if cfg := r.config(driver.Target{Name: "x", PoolSessions: 4}, nil, nil, nil); cfg.Agent.PoolSessions != 3 {
		t.Errorf("--pool-sessions 3: %d sessions a pooled process", cfg.Agent.PoolSessions)
	}
	if cfg := r.config(driver.Target{Name: "x"}, nil, nil, nil); cfg.Settle != 40*time.Millisecond || cfg.Repeat != 4 || cfg.Pool || cfg.RerunPooled != conformance.RerunEvery {
		t.Errorf("settle %s, repeat %d, pool %v, rerun pooled %q; want 40ms, 4, false, every", cfg.Settle, cfg.Repeat, cfg.Pool, cfg.RerunPooled)
	}
	for _, tc := range []struct{ args, want string }{
		{"--repeat=0", "--repeat 0: want at least 1"},
		{"--settle=0s", "--settle 0s: want a positive duration"},
		{"--pool=yes", `--pool "yes": want on or off`},
		{"--pool-sessions=-1", "--pool-sessions -1: want at least 1 (or 0: the agent's default)"},
		{"--rerun-pooled=some", `--rerun-pooled "some": want known or every`},
	} {
		var r runFlags
		f := pflag.NewFlagSet("t", pflag.ContinueOnError)
		r.register(f, "")
		if err := f.Parse([]string{tc.args}); err != nil {
			t.Fatal(err)
		}
		if err := r.check(); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.args, err, tc.want)
		}
	}
	var out, errw bytes.Buffer
	cmd := NewRootCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&errw)
	cmd.SetArgs([]string{"peers", "--repeat", "0", "--cache", t.TempDir()})
	if err := cmd.Execute(); err == nil || err.Error() != "--repeat 0: want at least 1" {
		t.Errorf("peers --repeat 0: %v", err)
	}
}

// --acp-version and --advertise-plan are the run's offer (Config.Offer):
// version 1 by default, and only what the runner can offer.
func TestRunFlagsOffer(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want driver.Offer
		bad  string
	}{
		{nil, driver.Offer{ACPVersion: driver.ACPv1}, ""},
		{[]string{"--acp-version", "2"}, driver.Offer{ACPVersion: driver.ACPv2}, ""},
		{[]string{"--advertise-plan"}, driver.Offer{ACPVersion: driver.ACPv1, PlanOps: true}, ""},
		{[]string{"--acp-version", "3"}, driver.Offer{}, "--acp-version 3: want 1 or 2"},
		{[]string{"--acp-version", "2", "--advertise-plan"}, driver.Offer{}, "--advertise-plan with --acp-version 2: clientCapabilities.plan is protocol version 1's; on version 2 plan_update is the plan"},
	} {
		var r runFlags
		f := pflag.NewFlagSet("t", pflag.ContinueOnError)
		r.register(f, "")
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := r.check()
		switch {
		case tc.bad != "":
			if err == nil || err.Error() != tc.bad {
				t.Errorf("%v: %v, want %q", tc.args, err, tc.bad)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.args, err)
		default:
			if got := r.config(driver.Target{Name: "x"}, nil, nil, nil).Offer; got != tc.want {
				t.Errorf("%v: offer %+v, want %+v", tc.args, got, tc.want)
			}
		}
	}
}

package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/todoharness/todoharness/conformance"
)

// conform and peers read --timeout, --grace, --parallel and -q the same way.
func TestRunFlagsShared(t *testing.T) {
	preset := &conformance.Preset{Name: "p", Timeout: 2 * time.Minute}
	for _, tc := range []struct {
		args   []string
		preset *conformance.Preset
		want   time.Duration
	}{
		{nil, nil, conformance.DefaultTimeout},
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
	cfg := r.config(conformance.Target{Name: "x"}, nil, nil, &progress)
	if cfg.Progress != nil || cfg.Parallel != 3 || cfg.Grace != time.Second || cfg.Timeout != conformance.DefaultTimeout {
		t.Errorf("config %+v", cfg)
	}
}

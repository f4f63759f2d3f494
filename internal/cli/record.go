package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/scenario"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/mockmodel"
)

// defaultScenarios is where `record` finds the e2e scenarios.
const defaultScenarios = "fixtures/e2e"

// newRecordCmd is `todoharness record`: run e2e scenarios through the
// reference agent and the ACP bridge while recording the model's HTTP
// exchanges into each scenario's cassette.
func newRecordCmd() *cobra.Command {
	var (
		dir, model string
		all, mock  bool
	)
	cmd := &cobra.Command{
		Use:   "record [--all | SCENARIO...]",
		Short: "Record e2e cassettes (real model with DEEPSEEK_API_KEY, or --mock)",
		Long: `Record the model exchanges of e2e scenarios (folders of ` + defaultScenarios + `/ with an
input.json of ACP steps) into <scenario>/cassette.yaml.

With DEEPSEEK_API_KEY set, every request goes to DEEPSEEK_BASE_URL (default
https://api.deepseek.com) with model --model / DEEPSEEK_MODEL (default
deepseek-chat). A base URL on this machine is labelled mock-server in the
cassette's provenance, never real-model.

With --mock, each scenario that has a mock-script.yaml is recorded against the
local mock model server playing that script (no key needed; scenarios without
a script are skipped). Those cassettes are labelled mock-server: scripted
answers, not model output.

Credentials are scrubbed before a cassette is saved, and every new cassette is
replayed once offline to check it reproduces the recorded run. Rewrite the
goldens afterwards with GOLDIE_UPDATE=1 go test ./suites/e2e/ (make record does
both).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRecord(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), dir, model, all, mock, args)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", defaultScenarios, "folder of e2e scenarios")
	cmd.Flags().StringVar(&model, "model", "", "model name (default $DEEPSEEK_MODEL, else "+openaichat.DefaultModel+")")
	cmd.Flags().BoolVar(&all, "all", false, "record every scenario in --dir")
	cmd.Flags().BoolVar(&mock, "mock", false, "record against the local mock model server playing each scenario's mock-script.yaml")
	return cmd
}

func runRecord(ctx context.Context, out, errw io.Writer, dir, model string, all, mock bool, names []string) error {
	if all == (len(names) > 0) {
		return errors.New("record: name the scenarios to record, or pass --all")
	}
	if all {
		var err error
		if names, err = scenario.List(dir); err != nil {
			return err
		}
	}
	cfg := openaichat.ConfigFromEnv(model)
	if !mock && cfg.APIKey == "" {
		return errors.New("record: DEEPSEEK_API_KEY is not set, so there is no model to record against " +
			"(set it to record against DeepSeek, or pass --mock to record the scripted scenarios against the local mock server)")
	}
	recorded := 0
	for _, name := range names {
		sc, err := scenario.Load(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		c := cfg
		var prov cassette.Provenance
		if mock {
			if sc.MockScript == "" {
				fmt.Fprintf(errw, "skip %s: no %s (its cassette is not recorded against the mock server)\n", sc.Name, scenario.MockScriptFile)
				continue
			}
			script, err := mockmodel.LoadScript(sc.MockScript)
			if err != nil {
				return err
			}
			srv := mockmodel.NewServer(script)
			c.BaseURL, c.APIKey = srv.BaseURL(), ""
			prov = cassette.Provenance{
				Source: cassette.SourceMockServer,
				Description: fmt.Sprintf("recorded against the local mock model server playing %s/%s: scripted answers, NOT real-model output",
					filepath.ToSlash(dir), filepath.ToSlash(filepath.Join(sc.Name, scenario.MockScriptFile))),
			}
			err = recordOne(ctx, out, sc, c, prov)
			srv.Close()
			if err != nil {
				return err
			}
		} else if err := recordOne(ctx, out, sc, c, prov); err != nil {
			return err
		}
		recorded++
	}
	fmt.Fprintf(out, "recorded %d cassette(s); now rewrite the goldens for review: GOLDIE_UPDATE=1 go test ./suites/e2e/\n", recorded)
	return nil
}

// recordOne records one scenario into its cassette and replays the result.
func recordOne(ctx context.Context, out io.Writer, sc *scenario.Scenario, cfg openaichat.ClientConfig, prov cassette.Provenance) error {
	prov.BaseURL, prov.Model, prov.Scenario = cfg.BaseURL, cfg.Model, sc.Name
	res, err := scenario.RecordCassette(ctx, sc, scenario.RecordConfig{
		Client: cfg, Provenance: prov, Cassette: sc.CassettePath(),
	})
	if err != nil {
		return fmt.Errorf("record %s: %w", sc.Name, err)
	}
	p := res.Provenance
	fmt.Fprintf(out, "recorded %s: %d exchange(s) -> %s [%s, %s, %s]; offline replay reproduces it\n",
		sc.Name, res.Exchanges, sc.CassettePath(), p.Source, p.APIHost, p.Model)
	return nil
}

// newCassetteCmd is `todoharness cassette`: cassette tools.
func newCassetteCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "cassette", Short: "Cassette tools (rebuild from a session log, show provenance, scan for credentials)"}

	var model, baseURL, system, recordedBy, logName, scen string
	var real bool
	fromLog := &cobra.Command{
		Use:   "from-log SESSION.jsonl OUT.yaml",
		Short: "Rebuild the model's HTTP exchanges from a session log's assistant/chunk events",
		Long: `Rebuild a cassette from a session log (ours or the original implementation's):
one exchange per model step. Each request is what the llm client sends for the
model history derived from the surface events before the step, with the tools
of the shipped composition; each response is an SSE body rebuilt from the
step's assistant/chunk events. The provenance says "rebuilt from session log
<name> recorded by <--recorded-by>".

The shipped todo-plan cassette was made with:

  todoharness cassette from-log fixtures/interop/deepseek-harness/todo-plan/session.jsonl \
    fixtures/e2e/todo-plan/cassette.yaml --scenario todo-plan --real-model-output \
    --recorded-by "the original implementation against DeepSeek"`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ld, err := session.LoadFile(args[0])
			if err != nil {
				return err
			}
			for _, w := range ld.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			reg, err := builtin.Compose("")
			if err != nil {
				return err
			}
			name := logName
			if name == "" {
				name = filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(args[0])), filepath.Base(args[0])))
			}
			res, err := cassette.FromLog(cmd.Context(), cassette.FromLogOptions{
				Log: ld, LogName: name, Out: args[1], Tools: reg.Specs(), Model: model,
				BaseURL: baseURL, System: system, RecordedBy: recordedBy,
				RealModelOutput: real, Scenario: scen,
			})
			if err != nil {
				return err
			}
			for _, w := range res.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d exchange(s); %s\n", args[1], res.Steps, res.Provenance.Description)
			return nil
		},
	}
	fromLog.Flags().StringVar(&model, "model", openaichat.DefaultModel, "model of the rebuilt requests")
	fromLog.Flags().StringVar(&baseURL, "base-url", openaichat.DefaultBaseURL, "API base URL the requests are addressed to")
	fromLog.Flags().StringVar(&system, "system", "", "system prompt of the rebuilt requests (the reference agent sends none)")
	fromLog.Flags().StringVar(&recordedBy, "recorded-by", "", `who recorded the log, for the provenance ("the original implementation against DeepSeek")`)
	fromLog.Flags().StringVar(&logName, "name", "", "name of the log in the provenance (default: <parent folder>/<file>)")
	fromLog.Flags().StringVar(&scen, "scenario", "", "e2e scenario the cassette belongs to")
	fromLog.Flags().BoolVar(&real, "real-model-output", false, "the log's assistant chunks were produced by a real model")
	cmd.AddCommand(fromLog)

	cmd.AddCommand(&cobra.Command{
		Use:   "show CASSETTE.yaml...",
		Short: "Print each cassette's provenance (fails on a corrupt cassette)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, path := range args {
				p, err := cassette.LoadProvenance(path)
				if err != nil {
					return err
				}
				kind := "NOT real-model output"
				if p.RealModelOutput {
					kind = "real-model output"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s (%s); host %s, model %s, recorded %s by %s: %s\n",
					path, p.Source, kind, p.APIHost, p.Model, p.RecordedAt, p.ToolVersion, p.Description)
			}
			return nil
		},
	})

	cmd.AddCommand(&cobra.Command{
		Use:   "scan FILE_OR_DIR...",
		Short: "Scan cassettes (*.yaml) for anything that looks like a credential (exit 1 if found)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			found := 0
			for _, root := range args {
				err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
					if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
						return err
					}
					data, err := os.ReadFile(path)
					if err != nil {
						return err
					}
					for _, f := range cassette.ScanCredentials(data) {
						found++
						fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", path, f)
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			if found > 0 {
				return exitCode(1)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "no credentials found")
			return nil
		},
	})
	return cmd
}

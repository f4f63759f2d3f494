package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/proxy"
	"github.com/todoharness/todoharness/harness/llm/cassette/record"
	"github.com/todoharness/todoharness/harness/llm/cassette/replay"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
)

// Goldens are the two normalised views the e2e tier compares.
type Goldens struct {
	ACP []byte
	Log []byte
}

// Goldens computes the normalised views of a run.
func (r *Result) Goldens() (Goldens, error) {
	acp, err := ACPGolden(r.Wire, r.Cwd)
	if err != nil {
		return Goldens{}, err
	}
	if r.Log == nil {
		return Goldens{}, errors.New("the run left no session log")
	}
	lg, err := LogGolden(r.Log.Events)
	if err != nil {
		return Goldens{}, err
	}
	return Goldens{ACP: acp, Log: lg}, nil
}

// Replayed is the outcome of replaying a cassette.
type Replayed struct {
	Result *Result
	Player *replay.Player
}

// Replay runs sc offline against the cassette at path: the llm client talks
// to a replaying Recorder, addressed to the base URL and model of the
// cassette's provenance (matching includes the path and the model). It fails
// when the cassette cannot be opened, when any request missed (the error
// carries the MissError with its diff), when a recorded exchange was left
// unplayed, or when the run itself failed.
func Replay(ctx context.Context, sc *Scenario, path string, opts RunOptions) (*Replayed, error) {
	rec, err := replay.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	defer rec.Stop()
	px, err := proxy.New(rec, "")
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	defer closeProxy(ctx, px)
	p := rec.Provenance()
	opts.Client = openaichat.ClientConfig{BaseURL: px.URL + px.BasePath(), Model: p.Model}
	res, runErr := Run(ctx, sc, opts)
	out := &Replayed{Result: res, Player: rec}
	if missErr := rec.Err(); missErr != nil {
		return out, fmt.Errorf("scenario %s: replay %s: %w", sc.Name, path, missErr)
	}
	if runErr != nil {
		return out, runErr
	}
	if left := rec.Unplayed(); len(left) > 0 {
		return out, fmt.Errorf("scenario %s: replay %s: recorded interactions %v were never requested: the run made fewer model calls than the recording", sc.Name, path, left)
	}
	return out, nil
}

// RecordConfig configures RecordCassette.
type RecordConfig struct {
	// Client is the live model: BaseURL, APIKey, Model (HTTPClient, if set,
	// carries the live requests).
	Client openaichat.ClientConfig
	// Provenance is completed by record.Start (BaseURL and Model are taken
	// from Client when empty).
	Provenance cassette.Provenance
	// Cassette is the file to (re)write.
	Cassette string
	// System is the agent's system prompt.
	System string
	// Secrets are known secret values scrubbed besides the API key.
	Secrets []string
}

// Recorded is the outcome of RecordCassette.
type Recorded struct {
	Provenance cassette.Provenance
	Exchanges  int
	// Live is the recorded run (its model output as the model sent it);
	// Goldens are its goldens with every known secret redacted: they equal
	// the replay's.
	Live    *Result
	Goldens Goldens
}

// RecordCassette runs sc live, recording the model exchanges (the API key is
// scrubbed), then replays the new cassette offline and checks the replay
// reproduces the live run (same normalised plan and log). Only then does it
// replace cfg.Cassette.
func RecordCassette(ctx context.Context, sc *Scenario, cfg RecordConfig) (*Recorded, error) {
	if cfg.Provenance.BaseURL == "" {
		cfg.Provenance.BaseURL = cfg.Client.BaseURL
	}
	if cfg.Provenance.Model == "" {
		cfg.Provenance.Model = cfg.Client.Model
	}
	if cfg.Provenance.Scenario == "" {
		cfg.Provenance.Scenario = sc.Name
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(cfg.Cassette), ".record-")
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, filepath.Base(cfg.Cassette))
	rec, err := record.Start(record.Options{
		Path: tmp, Provenance: cfg.Provenance, Secrets: append([]string{cfg.Client.APIKey}, cfg.Secrets...),
		RealTransport: transportOf(cfg.Client.HTTPClient), Previous: cfg.Cassette,
	})
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	px, err := proxy.New(rec, cfg.Client.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	client := cfg.Client
	client.BaseURL, client.HTTPClient = px.URL+px.BasePath(), nil
	live, runErr := Run(ctx, sc, RunOptions{Client: client, System: cfg.System})
	closeProxy(ctx, px)
	if ctx.Err() != nil {
		// Interrupted: what was recorded so far is not a cassette.
		_ = rec.Discard()
		return nil, fmt.Errorf("scenario %s: interrupted (%w), %s left unchanged", sc.Name, context.Cause(ctx), cfg.Cassette)
	}
	if err := errors.Join(runErr, rec.Stop()); err != nil {
		return nil, fmt.Errorf("scenario %s: recording failed, %s left unchanged: %w", sc.Name, cfg.Cassette, err)
	}
	liveG, err := live.Goldens()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	// The cassette holds the model output scrubbed: so must what the
	// replay is compared with.
	liveG = redactGoldens(liveG, rec.Secrets())
	rep, err := Replay(ctx, sc, tmp, RunOptions{System: cfg.System})
	if err != nil {
		return nil, fmt.Errorf("scenario %s: the new cassette does not replay, %s left unchanged: %w", sc.Name, cfg.Cassette, err)
	}
	repG, err := rep.Result.Goldens()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	if !bytes.Equal(liveG.ACP, repG.ACP) || !bytes.Equal(liveG.Log, repG.Log) {
		return nil, notReproduced(sc.Name, cfg.Cassette, liveG, repG, rec.Secrets())
	}
	if err := os.Rename(tmp, cfg.Cassette); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	return &Recorded{Provenance: rec.Provenance(), Exchanges: rec.Requests(), Live: live, Goldens: liveG}, nil
}

// notReproduced is the error of a recording whose replay differs from the
// live run: both sides printed, each with every known secret and
// credential-shaped value redacted (the replayed side holds what scrubbing
// left in the cassette: when that is a key, the error must not print it).
func notReproduced(name, path string, live, replayed Goldens, secrets []string) error {
	replayed = redactGoldens(replayed, secrets)
	msg := fmt.Sprintf("replaying the new cassette does not reproduce the live run, %s left unchanged:\nlive ACP:\n%s\nreplayed ACP:\n%s\nlive log:\n%s\nreplayed log:\n%s",
		path, live.ACP, replayed.ACP, live.Log, replayed.Log)
	return fmt.Errorf("scenario %s: %s", name, scrub.RedactText(msg, secrets))
}

// redactGoldens redacts known secrets from goldens, a field's text joined
// across lines as a stream's deltas are.
func redactGoldens(g Goldens, secrets []string) Goldens {
	red := func(b []byte) []byte {
		lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
		out := bytes.Join(scrub.RedactJSONLines(lines, secrets), []byte("\n"))
		if len(b) > 0 {
			out = append(out, '\n')
		}
		return out
	}
	return Goldens{ACP: red(g.ACP), Log: red(g.Log)}
}

// closeProxy stops a proxy, giving in-flight requests a few seconds.
func closeProxy(ctx context.Context, px *proxy.Proxy) {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = px.Close(c)
}

// transportOf returns hc's transport (nil, meaning the default, when unset).
func transportOf(hc *http.Client) http.RoundTripper {
	if hc == nil {
		return nil
	}
	return hc.Transport
}

package proxy_test

import (
	"context"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/llm/cassette/internal/cassettetest"
	"github.com/todoharness/todoharness/harness/llm/cassette/proxy"
	"github.com/todoharness/todoharness/harness/llm/cassette/record"
	"github.com/todoharness/todoharness/harness/llm/cassette/replay"
)

// Both cassette transports can be served.
var (
	_ proxy.Transport = (*record.Recorder)(nil)
	_ proxy.Transport = (*replay.Player)(nil)
)

// A replay served by the proxy answers at the upstream's path from the
// cassette, with nothing sent to the server it was recorded against.
func TestAProxiedReplayAnswersFromTheCassette(t *testing.T) {
	path, srv := cassettetest.RecordTwo(t, "sk-unit-test-key-0001", "")
	before := len(srv.Got())
	p, err := replay.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	px, err := proxy.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = px.Close(ctx)
	})
	prov := p.Provenance()
	prov.BaseURL = px.URL + px.BasePath()
	c := cassettetest.Client(t, nil, prov)
	r, err := c.Stream(context.Background(), cassettetest.UserReq("bye"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cassettetest.TextOf(r); got != "Good bye" {
		t.Errorf("answer %q, want Good bye", got)
	}
	if px.BasePath() != "/v1" || len(p.Unplayed()) != 1 || len(srv.Got()) != before {
		t.Errorf("base path %q, unplayed %v, %d requests reached the server", px.BasePath(), p.Unplayed(), len(srv.Got())-before)
	}
}

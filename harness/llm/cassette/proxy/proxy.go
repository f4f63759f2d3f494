package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
)

// Proxy serves a cassette transport over HTTP on 127.0.0.1.
type Proxy struct {
	// URL is http://127.0.0.1:PORT, without a trailing slash.
	URL string

	rec      Transport
	upstream *url.URL
	srv      *http.Server
	ln       net.Listener
	done     chan struct{}
}

// Transport is what a Proxy serves: a recording *record.Recorder or a
// replaying *replay.Player.
type Transport interface {
	http.RoundTripper
	Mode() cassette.Mode
	Provenance() cassette.Provenance
	// AddSecrets adds known secret values (scrubbed from the cassette, or
	// from what a replay matches and prints).
	AddSecrets(secrets ...string)
	// SetPlaceholders names run-specific values (see
	// cassette.Placeholders).
	SetPlaceholders(values map[string]string)
}

// New starts a proxy in front of rec. upstream is the provider's base URL
// (record mode; it may carry user:password); in replay mode it may be ""
// (the cassette's provenance base URL is used).
func New(rec Transport, upstream string) (*Proxy, error) {
	if upstream == "" {
		upstream = rec.Provenance().BaseURL
	}
	up, err := url.Parse(upstream)
	if err != nil || up.Scheme == "" || up.Host == "" {
		return nil, fmt.Errorf("cassette proxy: upstream %q is not an absolute URL (want https://host[/base])", cassette.WithoutUserinfo(upstream))
	}
	if up.User != nil {
		pw, _ := up.User.Password()
		rec.AddSecrets(up.User.Username(), pw, up.User.String())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cassette proxy: %w", err)
	}
	p := &Proxy{URL: "http://" + ln.Addr().String(), rec: rec, upstream: up, ln: ln, done: make(chan struct{})}
	rp := &httputil.ReverseProxy{
		Rewrite:       p.rewrite,
		Transport:     rec,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, fmt.Sprintf("todoharness cassette proxy (%s): %s %s: %v", rec.Mode(), r.Method, r.URL.Path, err), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: rp, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		defer close(p.done)
		_ = p.srv.Serve(ln)
	}()
	return p, nil
}

// BasePath is the path of the upstream base URL ("" when it has none).
func (p *Proxy) BasePath() string { return strings.TrimSuffix(p.upstream.Path, "/") }

// rewrite sends the request to the upstream, keeping its path, and notes
// the credentials it carries.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL.Scheme = p.upstream.Scheme
	pr.Out.URL.Host = p.upstream.Host
	pr.Out.URL.User = nil
	pr.Out.Host = ""
	// Let the transport negotiate compression itself: it then hands the
	// body over decoded, and the cassette stores it decoded.
	pr.Out.Header.Del("Accept-Encoding")
	if p.upstream.User != nil && pr.Out.Header.Get("Authorization") == "" {
		pw, _ := p.upstream.User.Password()
		pr.Out.SetBasicAuth(p.upstream.User.Username(), pw)
	}
	if p.rec.Mode() == cassette.ModeRecord {
		p.rec.AddSecrets(scrub.CredentialsOf(pr.In)...)
	}
}

// Close stops the proxy (in-flight requests are given until ctx ends).
func (p *Proxy) Close(ctx context.Context) error {
	err := p.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = errors.Join(err, p.srv.Close())
	}
	<-p.done
	return err
}

package cassette

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
)

// Proxy serves a Recorder over HTTP on 127.0.0.1, so that any agent, in any
// language, can be recorded and replayed: pointed at the proxy's URL as it
// would be pointed at its provider, the agent reaches the upstream through
// the recorder (record mode), or is answered from the cassette with nothing
// leaving the machine (replay mode). The request path goes to the upstream
// as it came; only the scheme and host change.
//
// While recording, the proxy learns the credentials the agent sends
// (Authorization bearer and basic values, x-api-key, x-goog-api-key,
// api-key and any other credential header, cookies, key-like query
// parameters) and the user:password of the upstream URL, and hands them to
// the recorder as known secrets: they are scrubbed in every form wherever
// they appear in the cassette. A user:password in the upstream URL is sent
// as basic authorization when the agent sends none.
type Proxy struct {
	// URL is http://127.0.0.1:PORT, without a trailing slash.
	URL string

	rec      *Recorder
	upstream *url.URL
	srv      *http.Server
	ln       net.Listener
	done     chan struct{}
}

// NewProxy starts a proxy in front of rec. upstream is the provider's base
// URL (record mode; it may carry user:password); in replay mode it may be
// "" (the cassette's provenance base URL is used).
func NewProxy(rec *Recorder, upstream string) (*Proxy, error) {
	if upstream == "" {
		upstream = rec.Provenance().BaseURL
	}
	up, err := url.Parse(upstream)
	if err != nil || up.Scheme == "" || up.Host == "" {
		return nil, fmt.Errorf("cassette proxy: upstream %q is not an absolute URL (want https://host[/base])", WithoutUserinfo(upstream))
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
	if p.rec.Mode() == ModeRecord {
		p.rec.AddSecrets(CredentialsOf(pr.In)...)
	}
}

// CredentialsOf returns the credential values a request carries: the value
// of every credential header (a bearer token without its scheme, a basic
// value decoded to its user and password too), each cookie's value, and
// key-like query parameters.
func CredentialsOf(r *http.Request) []string {
	var out []string
	for k, vs := range r.Header {
		if !isSensitiveHeader(k) {
			continue
		}
		for _, v := range vs {
			out = append(out, v)
			scheme, rest, ok := strings.Cut(strings.TrimSpace(v), " ")
			if !ok {
				continue
			}
			rest = strings.TrimSpace(rest)
			out = append(out, rest)
			if strings.EqualFold(scheme, "basic") {
				if b, err := base64.StdEncoding.DecodeString(rest); err == nil {
					user, pw, _ := strings.Cut(string(b), ":")
					out = append(out, string(b), user, pw)
				}
			}
		}
	}
	for _, c := range r.Cookies() {
		out = append(out, c.Value)
	}
	for k, vs := range r.URL.Query() {
		if isSensitiveField(k) {
			out = append(out, vs...)
		}
	}
	if r.URL.User != nil {
		pw, _ := r.URL.User.Password()
		out = append(out, r.URL.User.Username(), pw)
	}
	return out
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

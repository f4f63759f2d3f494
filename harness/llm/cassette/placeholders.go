package cassette

import (
	"sort"
	"strings"
	"sync"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// Placeholders name run-specific values (the agent's working directory, its
// throw-away home) by placeholders ("{{cwd}}"): a recording stores the
// placeholder wherever the value appears in a request or response; a
// replay matches requests with the value read as the placeholder, and
// answers with the placeholder read as the value of this run. So an agent
// that puts its cwd in its prompts replays from any folder. The zero value
// has none; it is safe for concurrent use.
type Placeholders struct {
	mu     sync.Mutex
	places [][2]string // {value, placeholder}, longest value first
}

// Set replaces the placeholders by values (placeholder -> value; empty
// values are left out).
func (p *Placeholders) Set(values map[string]string) {
	var places [][2]string
	for ph, v := range values {
		if v != "" {
			places = append(places, [2]string{v, ph})
		}
	}
	sort.Slice(places, func(i, j int) bool { return len(places[i][0]) > len(places[j][0]) })
	p.mu.Lock()
	p.places = places
	p.mu.Unlock()
}

func (p *Placeholders) list() [][2]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.places
}

// To replaces this run's values by their placeholders in s.
func (p *Placeholders) To(s string) string {
	for _, x := range p.list() {
		s = strings.ReplaceAll(s, x[0], x[1])
	}
	return s
}

// From replaces placeholders by this run's values in s.
func (p *Placeholders) From(s string) string {
	for _, x := range p.list() {
		s = strings.ReplaceAll(s, x[1], x[0])
	}
	return s
}

// Interaction replaces this run's values by their placeholders in a
// recorded interaction's URL and bodies (a go-vcr BeforeSaveHook).
func (p *Placeholders) Interaction(i *cassette.Interaction) error {
	i.Request.Body = p.To(i.Request.Body)
	i.Request.URL = p.To(i.Request.URL)
	i.Response.Body = p.To(i.Response.Body)
	return nil
}

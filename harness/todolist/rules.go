package todolist

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrEmptyContent refuses an item whose content is empty once trimmed.
var ErrEmptyContent = errors.New("invalid todo: `content` must be a non-empty string")

// Validate applies the value rules the todo tool applies after its schema:
// trimmed content must be non-empty and unique, and at most one task may be
// in_progress unless the policy allows parallel work. It returns the
// trimmed list (never nil).
func Validate(items []Item, p Policy) ([]Item, error) {
	l := NewList(p, len(items))
	for _, t := range items {
		if err := l.Add(t); err != nil {
			return nil, err
		}
	}
	return l.Done()
}

// List builds a task list item by item under the value rules, as Validate
// does. The methods beside Add let a deliberately broken tool (the fault
// layer, harness/breakage) pass an item by one rule without restating the
// others.
type List struct {
	policy Policy
	items  []Item
	seen   map[string]bool
	active int
}

// NewList starts an empty list judged under p, with room for n items.
func NewList(p Policy, n int) *List {
	return &List{policy: p, items: make([]Item, 0, n), seen: make(map[string]bool, n)}
}

// Add appends t, trimmed, when its content is non-empty once trimmed and
// not on the list yet.
func (l *List) Add(t Item) error {
	if Blank(t.Content) {
		return ErrEmptyContent
	}
	return l.AddUnique(t)
}

// AddUnique appends t, trimmed, when its content is not on the list yet
// (the content rule is not applied).
func (l *List) AddUnique(t Item) error {
	c := Trim(t.Content)
	if l.seen[c] {
		q, _ := json.Marshal(c)
		return fmt.Errorf("invalid todos: duplicate content %s", q)
	}
	l.seen[c] = true
	if t.Status == StatusInProgress {
		l.active++
	}
	l.items = append(l.items, Item{Content: c, Status: t.Status})
	return nil
}

// Has reports whether an item with this content (trimmed) is on the list.
func (l *List) Has(content string) bool { return l.seen[Trim(content)] }

// Append appends t, trimmed, under no rule; it does not count as in
// progress.
func (l *List) Append(t Item) {
	l.items = append(l.items, Item{Content: Trim(t.Content), Status: t.Status})
}

// Done applies the in_progress rule to the whole list and returns it.
func (l *List) Done() ([]Item, error) {
	if !l.policy.Allows(l.active) {
		return nil, fmt.Errorf("invalid todos: at most one task may be in_progress, got %d", l.active)
	}
	return l.items, nil
}

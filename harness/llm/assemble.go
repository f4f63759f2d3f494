package llm

import "sort"

// Assembler turns a sequence of chunks back into a Response. Both the HTTP
// client and the in-process mock model use it, so they agree on block order.
type Assembler struct {
	blocks map[int]*Part
	order  []int
	usage  *Usage
	finish FinishReason
}

// NewAssembler returns an empty Assembler.
func NewAssembler() *Assembler { return &Assembler{blocks: map[int]*Part{}} }

// Add folds one chunk into the response under construction.
func (a *Assembler) Add(c Chunk) {
	idx := 0
	if c.Index != nil {
		idx = *c.Index
	}
	switch c.Type {
	case ChunkBlockStart:
		if _, ok := a.blocks[idx]; !ok {
			a.blocks[idx] = &Part{Type: c.BlockType}
			a.order = append(a.order, idx)
		}
	case ChunkReasoningDelta, ChunkTextDelta:
		a.block(idx, c).Text += c.Text
	case ChunkToolCallDelta:
		b := a.block(idx, c)
		if c.ID != "" {
			b.ID = c.ID
		}
		if c.Name != "" {
			b.Name = c.Name
		}
		if c.ArgumentsDelta != nil {
			b.Arguments += *c.ArgumentsDelta
		}
	case ChunkBlockEnd:
		if c.Block != nil {
			b := a.block(idx, c)
			*b = *c.Block
		}
	case ChunkUsage:
		if c.Usage != nil {
			u := *c.Usage
			a.usage = &u
		}
	case ChunkFinish:
		if c.Reason != nil {
			a.finish = *c.Reason
		}
	}
}

func (a *Assembler) block(idx int, c Chunk) *Part {
	b, ok := a.blocks[idx]
	if !ok {
		t := c.BlockType
		if t == "" {
			switch c.Type {
			case ChunkReasoningDelta:
				t = PartReasoning
			case ChunkToolCallDelta:
				t = PartToolCall
			default:
				t = PartText
			}
		}
		b = &Part{Type: t}
		a.blocks[idx] = b
		a.order = append(a.order, idx)
	}
	return b
}

// Response returns the assembled response, blocks in index order.
func (a *Assembler) Response() Response {
	idxs := append([]int(nil), a.order...)
	sort.Ints(idxs)
	r := Response{Usage: a.usage, Finish: a.finish}
	for _, i := range idxs {
		r.Content = append(r.Content, *a.blocks[i])
	}
	return r
}

// IntPtr returns a pointer to i (for Chunk.Index).
func IntPtr(i int) *int { return &i }

// StrPtr returns a pointer to s (for Chunk.ArgumentsDelta).
func StrPtr(s string) *string { return &s }

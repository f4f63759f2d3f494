package stdio

import (
	"bufio"
	"errors"
	"io"
	"os"

	"github.com/chzyer/readline"
)

// maxLine bounds one line of piped input.
const maxLine = 1 << 20

// InputReader is a LineReader that can be closed.
type InputReader interface {
	LineReader
	io.Closer
}

// NewInput returns the chat's line source for in: a readline prompt (line
// editing, history) when in is a terminal, else a plain line scanner, so the
// chat can be piped and tested. interactive reports which one it is: without
// a terminal nothing echoes the input, so the caller sets Chat.Echo.
func NewInput(in io.Reader, out io.Writer, prompt string) (r InputReader, interactive bool, err error) {
	if prompt == "" {
		prompt = DefaultPrompt
	}
	if f, ok := in.(*os.File); ok && readline.IsTerminal(int(f.Fd())) {
		rl, err := readline.NewEx(&readline.Config{
			Prompt:          prompt,
			Stdin:           f,
			Stdout:          out,
			HistoryLimit:    500,
			InterruptPrompt: "^C",
		})
		if err != nil {
			return nil, false, err
		}
		return &termInput{rl: rl}, true, nil
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &pipeInput{sc: sc, in: in}, false, nil
}

type termInput struct{ rl *readline.Instance }

// ReadLine reads one edited line. Ctrl-C on an empty line ends the input
// like Ctrl-D; on a non-empty line it discards the line.
func (t *termInput) ReadLine() (string, error) {
	for {
		line, err := t.rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			if line == "" {
				return "", io.EOF
			}
			continue
		}
		return line, err
	}
}

func (t *termInput) Close() error { return t.rl.Close() }

type pipeInput struct {
	sc *bufio.Scanner
	in io.Reader
}

func (p *pipeInput) ReadLine() (string, error) {
	if p.sc.Scan() {
		return p.sc.Text(), nil
	}
	if err := p.sc.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}

// Close closes the input when it is a closer other than os.Stdin.
func (p *pipeInput) Close() error {
	if c, ok := p.in.(io.Closer); ok && p.in != os.Stdin {
		return c.Close()
	}
	return nil
}

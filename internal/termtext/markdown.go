package termtext

import "strings"

// MarkdownCell returns s for one cell of a Markdown (GitHub-flavoured)
// table: on one line, what Visible escapes shown visibly, and every
// character Markdown would read as syntax there backslash-escaped (|
// that ends the cell, ! [ ] ( ) of a link or a remote image, < > & of
// HTML and entities, * _ ~ ` of emphasis and code, \ itself), so the cell
// shows s as text and loads nothing.
func MarkdownCell(s string) string {
	return markdownCell.Replace(Visible(s))
}

var markdownCell = func() *strings.Replacer {
	var pairs []string
	for _, c := range `\|![]()<>&*_~` + "`" {
		pairs = append(pairs, string(c), `\`+string(c))
	}
	return strings.NewReplacer(pairs...)
}()

package conformance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/mockmodel"
)

// What the agent did with each scripted call is read from what it says
// about it, never assumed from the case's expectation: the result its
// model was handed (an error flag, or on a wire with none the words of
// the result), the final status of the ACP tool call with the call's id
// (tool_call_update completed or failed), and a plan showing the call's
// list. When none of them tells, the call's verdict is unknown and the
// checks that need it are not judged for it (they say why).

// callVerdict is the agent's verdict on one call.
type callVerdict string

const (
	callUnknown  callVerdict = ""
	callAccepted callVerdict = "accepted"
	callRefused  callVerdict = "refused"
)

// acpCall is what the agent reported over ACP of one tool call: the
// final status of its tool_call / tool_call_update notifications.
type acpCall struct {
	// Status is the first final status reported ("completed" or
	// "failed"), "" when none was; Seq is where (-1 when none).
	Status string
	Seq    int
	// Text is the text content of that update (its output), if any.
	Text string
}

// verdict is the call verdict an ACP status says ("" for none).
func (a acpCall) verdict() callVerdict {
	switch a.Status {
	case "completed":
		return callAccepted
	case "failed":
		return callRefused
	}
	return callUnknown
}

// acpCalls maps each toolCallId to what the agent reported of it: the
// first final status in wire order (a later replay of the same call on a
// load does not overwrite what the live turn said). Updates for another
// session count for nothing (ACP-SESSION-1).
func (ev *Evidence) acpCalls() map[string]acpCall {
	foreign := ev.updateSessions().foreign
	out := map[string]acpCall{}
	for _, m := range ev.Wire {
		if m.Dir != driver.Received || m.Kind != driver.KindNotification || m.Method != "session/update" || foreign[m.Seq] {
			continue
		}
		kind := m.UpdateKind()
		if kind != "tool_call" && kind != "tool_call_update" {
			continue
		}
		var n struct {
			Params struct {
				Update struct {
					ToolCallID string            `json:"toolCallId"`
					Status     string            `json:"status"`
					Content    []json.RawMessage `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(m.Line), &n) != nil || n.Params.Update.ToolCallID == "" {
			continue
		}
		u := n.Params.Update
		if prev, ok := out[u.ToolCallID]; ok && prev.Status != "" {
			continue // the first final status stands
		}
		c := acpCall{Seq: -1}
		if u.Status == "completed" || u.Status == "failed" {
			c = acpCall{Status: u.Status, Seq: m.Seq, Text: contentText(u.Content)}
		}
		out[u.ToolCallID] = c
	}
	return out
}

// contentText joins the text of a tool call's content blocks.
func contentText(blocks []json.RawMessage) string {
	var parts []string
	for _, b := range blocks {
		var c struct {
			Type    string `json:"type"`
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(b, &c) == nil && c.Type == "content" && c.Content.Type == "text" {
			parts = append(parts, c.Content.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Known result forms: how the dialects' own tools word a result on a wire
// with no error flag, where the words are all the model has.
var (
	// refusalForms start a refusal in any dialect: the harness's "Error:"
	// (which the mock reads as the flag), codex's "failed to parse
	// function arguments", Claude Code's "No such tool available", Qwen
	// Code's todo_write validation ("Each todo must have a non-empty
	// \"id\" ..."), and the plain words of a refusal.
	refusalForms = regexp.MustCompile(`(?i)^\s*(error\b|failed to parse function arguments|no such tool available|each todo must\b|invalid\b|refused\b|rejected\b)`)
	// countsForm is todo_write's acceptance: the counts of the new list.
	countsForm = regexp.MustCompile(`(?i)^\s*updated todo list\b|\d+\s+pending\b.*\d+\s+in[ _-]?progress\b.*\d+\s+(completed|done)\b`)
	// todosModifiedForm is Qwen Code's todo_write acceptance.
	todosModifiedForm = regexp.MustCompile(`(?i)^\s*todos have been modified successfully\b`)
	// planUpdatedForm is codex's update_plan acceptance.
	planUpdatedForm = regexp.MustCompile(`(?i)^\s*plan updated\b`)
	// notReachedForms say the call reached no tool of that name.
	notReachedForms = regexp.MustCompile(`(?i)^\s*(<tool_use_error>\s*)?(no such tool available|unknown tool|tool .{0,80} not found)`)
)

// acceptedForm reports whether text is the dialect's own acceptance.
func acceptedForm(dialect, text string) bool {
	switch dialect {
	case driver.DialectTodoWrite, driver.DialectQwen:
		// One tool name, two tools: either's acceptance.
		return countsForm.MatchString(text) || todosModifiedForm.MatchString(text)
	case driver.DialectOpencode:
		// opencode's todowrite answers with the list it stored, as JSON.
		var list []json.RawMessage
		return json.Unmarshal([]byte(strings.TrimSpace(text)), &list) == nil
	case driver.DialectCodex:
		return planUpdatedForm.MatchString(text)
	}
	return false
}

// told is what the model was told of a call by its result: accepted or
// refused, or unknown when the result says neither (no flag on its wire
// and words of no known form); how says why.
func (ev *Evidence) told(r result) (callVerdict, string) {
	if !r.Found {
		return callUnknown, "the model never saw its result"
	}
	flagless := ev.Journal[r.Request].ToolErrors == mockmodel.ToolErrorsPrefix
	switch {
	case r.IsError && flagless:
		return callRefused, fmt.Sprintf("its result starts with %q", mockmodel.ToolErrorPrefix)
	case r.IsError:
		return callRefused, "its result has the error flag"
	case !flagless:
		return callAccepted, "its result has no error flag"
	case acceptedForm(ev.Dialect.Name, r.Text):
		return callAccepted, "its result is worded as the " + ev.Dialect.Tool + " tool's acceptance"
	case refusalForms.MatchString(r.Text):
		return callRefused, "its result is worded as a refusal"
	}
	return callUnknown, "its result (no error flag on " + wireName(ev.Journal[r.Request].Wire) + ") is worded as neither an acceptance nor a refusal"
}

// wireName names a model wire for a reader.
func wireName(wire string) string {
	if s := map[string]string{mockmodel.WireOpenAIChat: "OpenAI chat completions", mockmodel.WireOpenAIResponses: "OpenAI Responses"}[wire]; s != "" {
		return s
	}
	return wire
}

// toolOffered reports whether any model request of the case offered the
// dialect's tool (true when the agent made none: nothing says it was not).
func (ev *Evidence) toolOffered() bool {
	if len(ev.Journal) == 0 {
		return true
	}
	for _, e := range ev.Journal {
		for _, t := range e.Tools {
			if t.Name == ev.Dialect.Tool {
				return true
			}
		}
	}
	return false
}

// judgeCall reads the agent's verdict on write o from every signal (see
// the top of this file): what its model was told when that is known,
// else the final ACP status of its tool call, else a plan showing its
// list; unknown when nothing tells. A call that reached no todo tool of
// the agent (none was offered, or the result says there is no such tool)
// is unknown whatever was said of it: it tells nothing of that tool.
func (ev *Evidence) judgeCall(o *writeObs, acp acpCall, offered bool) {
	o.ACP = acp
	o.Told, o.ToldHow = ev.told(o.Result)
	switch {
	case !offered:
		o.Unknown = fmt.Sprintf("the %s tool was offered in no model request of the case (see TW-TOOL-1): %s reached no todo tool of the agent", ev.Dialect.Tool, o.CallID)
		return
	case o.Result.Found && notReachedForms.MatchString(o.Result.Text):
		o.Unknown = fmt.Sprintf("%s reached no todo tool of the agent: its result is %q", o.CallID, driver.Truncate(o.Result.Text, 80))
		return
	}
	v, by := o.Told, "what the model was told: "+o.ToldHow
	if v == callUnknown {
		v, by = acp.verdict(), "the final status of its ACP tool call: "+acp.Status
	}
	if v == callUnknown && ev.shown(o.Write) {
		v, by = callAccepted, "a plan of its prompt shows its list"
	}
	o.Accepted, o.Refused, o.By = v == callAccepted, v == callRefused, by
	if v == callUnknown {
		o.Unknown = fmt.Sprintf("cannot tell whether the agent accepted or refused %s: %s, no tool_call_update with a final status names it, and no plan shows its list", o.CallID, o.ToldHow)
	}
}

// unknownOf is the reason the first write keep admits cannot be judged
// ("" when every one it admits can).
func unknownOf(ws []writeObs, keep func(writeObs) bool) string {
	for _, w := range ws {
		if w.Unknown != "" && (keep == nil || keep(w)) {
			return w.Unknown
		}
	}
	return ""
}

// orUnknown is v, unless v judged nothing (not run) while a write keep
// admits has an unknown verdict: then not run, saying why once.
func orUnknown(v verdict, ws []writeObs, keep func(writeObs) bool) verdict {
	if v.Outcome != NotRun {
		return v
	}
	if why := unknownOf(ws, keep); why != "" {
		return skipf("%s", why)
	}
	return v
}

// evalToolStatus judges, for each scripted call whose ACP tool call ended
// with a final status and whose result the model could read as an
// acceptance or a refusal, that the two agree: an editor shows the
// status, the model acts on its result.
func evalToolStatus(ev *Evidence) verdict {
	return judgeEach(ev.writes(), func(w writeObs) bool { return w.ACP.Status != "" && w.Told != callUnknown }, func(fs *failures, _ int, w writeObs) {
		if w.ACP.verdict() == w.Told {
			return
		}
		told := "a plain result (" + w.ToldHow + ")"
		if w.Told == callRefused {
			told = "an error (" + w.ToldHow + ")"
		}
		fs.add(failf("%s: the agent reported its tool call %s, but its model was told %s: %q; report the call failed exactly when the model is told it failed",
			w.CallID, w.ACP.Status, told, driver.Truncate(w.Result.Text, 100)).at(w.ACP.Seq, fmt.Sprintf("tool call %s reported %s; its model was told %s", w.CallID, w.ACP.Status, w.Told)))
	}, "no scripted call has both a final ACP tool-call status (completed or failed) and a result the model could read as an acceptance or a refusal")
}

// allRefusedNote says, when the agent refused every well-formed scripted
// call of the run (a list of {content, status} the contract accepts) and
// accepted none, that its todo tool wants something the contract does not:
// every plan check then judges nothing useful, and the fix is a dialect or
// preset that supplies it. "" when it accepted one, or none was judged.
func allRefusedNote(evs []*Evidence) string {
	refused, example, wants := 0, "", ""
	for _, ev := range evs {
		if ev == nil || ev.Case == nil || ev.NotRun != "" || ev.Interrupted != "" {
			continue
		}
		for _, w := range ev.writes() {
			if !w.Shaped || w.Reject {
				continue
			}
			if w.Accepted {
				return ""
			}
			if w.Refused {
				if refused++; example == "" {
					example = w.Result.Text
					if example == "" {
						example = w.ACP.Text
					}
				}
			}
		}
		if wants == "" {
			wants = ev.unsuppliedFields()
		}
	}
	if refused == 0 {
		return ""
	}
	what := "something the contract does not"
	if wants != "" {
		what = "what the contract does not: its schema requires " + wants + " on every item"
	}
	return fmt.Sprintf("the agent refused every well-formed todo call of the run (%d), accepting none: its %s tool wants %s (it answered, e.g., %q); the checks of plans and lists judge nothing useful until a dialect (--dialect) or preset (--preset) supplies it, or one is added (driver/dialect.go, driver/presets.go)",
		refused, evs[0].Dialect.Tool, what, driver.Truncate(example, 120))
}

// unsuppliedFields names the item fields the offered schema requires that
// the scripted calls do not carry ("" when none): neither the dialect's
// content and status nor an extra field it fills.
func (ev *Evidence) unsuppliedFields() string {
	spec, _, ok := ev.offeredTool()
	if !ok {
		return ""
	}
	s, err := driver.ParseToolSchema(spec.Parameters)
	if err != nil {
		return ""
	}
	d := ev.Dialect
	list, ok := s.Properties[d.ListField]
	if !ok || list.Items == nil {
		return ""
	}
	supplied := map[string]bool{d.ContentField: true, d.StatusField: true}
	if d.Name != driver.DialectTodoWrite { // TranslateArgs fills the extras of other dialects
		for _, f := range d.Extra {
			supplied[f] = true
		}
	}
	var out []string
	for _, f := range list.Items.Required {
		if !supplied[f] {
			out = append(out, fmt.Sprintf("%q", f))
		}
	}
	return strings.Join(out, ", ")
}

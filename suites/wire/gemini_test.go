package wire

import (
	"context"
	"encoding/json"
	"errors"

	"google.golang.org/genai"

	"github.com/todoharness/todoharness/mockmodel"
)

var geminiCase = wireCase{
	name: "Gemini (google.golang.org/genai)", wire: mockmodel.WireGemini, path: "/v1beta/models/gemini-mock:generateContent",
	streamPath: "/v1beta/models/gemini-mock:streamGenerateContent",
	toolErrors: mockmodel.ToolErrorsFlag,
	newDriver: func(srv *mockmodel.Server) (driver, error) {
		c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
			APIKey:      "test-key",
			Backend:     genai.BackendGeminiAPI,
			HTTPClient:  srv.Client(),
			HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
		})
		return geminiDriver{c: c}, err
	},
	// promptTokenCount counts the cache; candidates exclude the thoughts.
	usage: map[string]int64{"promptTokenCount": 150, "cachedContentTokenCount": 30, "candidatesTokenCount": 28,
		"thoughtsTokenCount": 12, "totalTokenCount": 190},
	stop:               [2]string{"STOP", "STOP"},
	streamsArgs:        false,
	sendsReasoningBack: true,
	// functionResponse.response.error carries the failure.
	errorText:     errMessage,
	kinds:         [2]string{"FAILED_PRECONDITION", "FAILED_PRECONDITION"},
	printsMessage: true,
}

type geminiDriver struct{ c *genai.Client }

func (geminiDriver) apiError(err error) (apiErr, bool) {
	var e genai.APIError
	if !errors.As(err, &e) {
		return apiErr{}, false
	}
	code := ""
	if len(e.Details) > 0 {
		code, _ = e.Details[0]["reason"].(string)
	}
	return apiErr{status: e.Code, message: e.Message, kind: e.Status, code: code}, true
}

func (d geminiDriver) send(ctx context.Context, stream bool, prior *reply, isError bool) (reply, error) {
	contents := []*genai.Content{genai.NewContentFromText(userPrompt, genai.RoleUser)}
	if prior != nil {
		resp := map[string]any{"output": okResult}
		if isError {
			resp = map[string]any{"error": errMessage}
		}
		contents = append(contents, prior.native.(*genai.Content), &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{
			FunctionResponse: &genai.FunctionResponse{ID: prior.calls[0].id, Name: toolName, Response: resp},
		}}})
	}
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText(systemPrompt, genai.RoleUser),
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name: toolName, Description: toolDesc, ParametersJsonSchema: todoSchema(),
		}}}},
	}
	if !stream {
		resp, err := d.c.Models.GenerateContent(ctx, "gemini-mock", contents, cfg)
		if err != nil {
			return reply{}, err
		}
		var r reply
		if err := geminiAdd(&r, resp); err != nil {
			return reply{}, err
		}
		r.native = resp.Candidates[0].Content
		return r, nil
	}
	var r reply
	for resp, err := range d.c.Models.GenerateContentStream(ctx, "gemini-mock", contents, cfg) {
		if err != nil {
			return reply{}, err
		}
		r.events++
		if err := geminiAdd(&r, resp); err != nil {
			return reply{}, err
		}
	}
	// The turn to send back, its streamed pieces merged.
	content := &genai.Content{Role: genai.RoleModel}
	if r.reasoning != "" {
		content.Parts = append(content.Parts, &genai.Part{Text: r.reasoning, Thought: true})
	}
	if r.text != "" {
		content.Parts = append(content.Parts, genai.NewPartFromText(r.text))
	}
	for _, c := range r.calls {
		var args map[string]any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			return reply{}, err
		}
		content.Parts = append(content.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: c.id, Name: c.name, Args: args}})
	}
	r.native = content
	return r, nil
}

// geminiAdd adds one response (the whole answer, or one stream event) to r.
func geminiAdd(r *reply, resp *genai.GenerateContentResponse) error {
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return errors.New("response without a candidate")
	}
	cand := resp.Candidates[0]
	for _, p := range cand.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			b, err := json.Marshal(p.FunctionCall.Args)
			if err != nil {
				return err
			}
			r.calls = append(r.calls, call{id: p.FunctionCall.ID, name: p.FunctionCall.Name, args: string(b)})
			r.callEvents++
		case p.Thought:
			r.reasoning += p.Text
		case p.Text != "":
			r.text += p.Text
			r.textDeltas++
		}
	}
	if cand.FinishReason != "" {
		r.stop = string(cand.FinishReason)
	}
	if u := resp.UsageMetadata; u != nil {
		r.usage = map[string]int64{
			"promptTokenCount": int64(u.PromptTokenCount), "cachedContentTokenCount": int64(u.CachedContentTokenCount),
			"candidatesTokenCount": int64(u.CandidatesTokenCount), "thoughtsTokenCount": int64(u.ThoughtsTokenCount),
			"totalTokenCount": int64(u.TotalTokenCount),
		}
	}
	return nil
}

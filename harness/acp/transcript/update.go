package transcript

import "encoding/json"

// UpdateKind reads one raw ACP line: isUpdate says whether it is a
// session/update notification, and kind is its sessionUpdate ("plan",
// "tool_call", ...; "" when it has none); the error is the line's when it
// is not JSON. It is the one reader of that field for conformance's wire,
// the recorder's goldens and the tests' transcripts.
func UpdateKind(line []byte) (kind string, isUpdate bool, err error) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Update struct {
				Kind string `json:"sessionUpdate"`
			} `json:"update"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return "", false, err
	}
	if m.Method != "session/update" {
		return "", false, nil
	}
	return m.Params.Update.Kind, true, nil
}

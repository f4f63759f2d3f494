package driver

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ACPSchemaSource is where the embedded ACP schema was copied from. A test
// compares the copy with the module cache's file when it is present.
const ACPSchemaSource = "github.com/coder/acp-go-sdk@v0.13.0/schema/schema.json"

//go:embed acp-schema.json
var acpSchemaJSON []byte

//go:embed acp-schema.unstable.json
var acpUnstableSchemaJSON []byte

// ACPUnstableSchema returns the embedded unstable ACP schema: the protocol's
// draft additions (such as usage_update), copied from the same module.
func ACPUnstableSchema() []byte { return append([]byte(nil), acpUnstableSchemaJSON...) }

// ACPSchema returns the embedded ACP JSON schema (a copy of ACPSchemaSource).
func ACPSchema() []byte { return append([]byte(nil), acpSchemaJSON...) }

// ACPSchemaV2Source is where the embedded ACP v2 draft schema was copied
// from: the ACP repository at a commit, its schema version (meta.json,
// CHANGELOG.md) and licence. fixtures/acp-schema/v2 keeps the same files
// with the licence; a test holds the embedded copies to them byte for
// byte (docs/conformance.md, "Moving to the next ACP v2 draft").
const ACPSchemaV2Source = "agentclientprotocol/agent-client-protocol@b7f00054 schema/v2/schema.json (schema 2.0.0-alpha.3, Apache-2.0)"

//go:embed acp-schema-v2.json
var acpSchemaV2JSON []byte

//go:embed acp-schema-v2.unstable.json
var acpUnstableSchemaV2JSON []byte

// ACPSchemaV2 returns the embedded ACP v2 draft schema (ACPSchemaV2Source)
// and ACPUnstableSchemaV2 its unstable layer (schema.unstable.json).
func ACPSchemaV2() []byte { return append([]byte(nil), acpSchemaV2JSON...) }

// ACPUnstableSchemaV2 returns the embedded unstable ACP v2 schema.
func ACPUnstableSchemaV2() []byte { return append([]byte(nil), acpUnstableSchemaV2JSON...) }

// acpV1DraftSchemaJSON is the ACP repository's unstable v1 schema at the
// same commit (schema/v1/schema.unstable.json, fixtures/acp-schema/v1):
// the v1 draft's plan operations, which the SDK's unstable schema
// predates. A v1 message both SDK schemas reject is checked against it.
//
//go:embed acp-schema-v1-draft.unstable.json
var acpV1DraftSchemaJSON []byte

// ACPV1DraftSchema returns the embedded unstable v1 schema of the ACP
// repository (acpV1DraftSchemaJSON).
func ACPV1DraftSchema() []byte { return append([]byte(nil), acpV1DraftSchemaJSON...) }

const schemaURL = "https://agentclientprotocol.com/schema.json"

// SchemaValidator validates ACP messages against the schema, by method:
// params and results against the definition the schema ties to the method
// (x-method, x-side), error objects against Error, ids against RequestId.
// It is safe for concurrent use; one validator can serve many runs.
type SchemaValidator struct {
	c *jsonschema.Compiler

	// byMethod maps "request|response|notification" + method to a $defs
	// name, for each side.
	agentDefs  map[string]string // messages the agent sends
	clientDefs map[string]string // messages the client sends

	printer *message.Printer

	mu    sync.Mutex
	cache map[string]*jsonschema.Schema
	// accepted are the messages Validate accepted, by validKey (what it
	// reads of a message), up to acceptedKeep bytes of keys (guarded by
	// mu): validation is a function of them, and agents send many lines
	// twice (every case's initialize answer, the same update of the
	// same scenario step). A message it rejects is validated again, its
	// error built anew.
	accepted     map[string]struct{}
	acceptedSize int
	// anySessionID says the session/update notification's sessionId is
	// any string by the schema (plainStringSessionID): a session/update
	// is then remembered with its session ID set aside (validKey), and
	// one session's update accepted is every session's.
	anySessionID bool

	// unstable validates against the draft schema, for messages the stable
	// schema rejects (loadUnstable is nil inside the unstable validator
	// itself). It is compiled on first use: it is twice the stable one's
	// work (about 45 ms), and most runs never need it.
	loadUnstable func() (*SchemaValidator, error)
	// loadDraft compiles the ACP repository's unstable v1 schema
	// (acpV1DraftSchemaJSON) on first use, for the messages both SDK
	// schemas reject (nil: none, as in v2).
	loadDraft func() (*SchemaValidator, error)
	// loadV2 compiles the validator of protocol version 2 (ForVersion),
	// on first use: most runs speak version 1 only. nil inside it.
	loadV2 func() (*SchemaValidator, error)

	// notification is the $defs name of the session/update notification
	// (SessionNotification in v1, UpdateSessionNotification in v2);
	// openUpdates is set when SessionUpdate accepts kinds it does not
	// name (v2's extensible unions).
	notification string
	openUpdates  bool

	// updateBranch maps a sessionUpdate kind to the pointer of its branch
	// of SessionUpdate's oneOf; updateKinds lists the kinds in order.
	updateBranch map[string]string
	updateKinds  []string
	// updateByBranch is set when every branch of SessionUpdate's oneOf
	// requires its own sessionUpdate const: a session/update is then valid
	// exactly when its params are valid with the update left out
	// (envelopeDef) and its update is valid against the branch its
	// sessionUpdate names, and Validate checks that one branch instead of
	// trying every other (the profile's largest part of the judge).
	updateByBranch bool

	// quick is this validator on a copy of the schema whose oneOfs of
	// constants (enums written as a oneOf, as PlanEntryStatus) are enums
	// (enumsForConstChoices): it accepts exactly the messages this one
	// accepts, without building an error for each other branch of every
	// such oneOf it meets (a plan's status and priority in each entry).
	// Validate asks it first and this one only for a message it rejects,
	// so every error reads as before. nil inside quick itself.
	quick *SchemaValidator
}

// envelopeDef is the definition the validator adds to its copy of the
// schema: SessionNotification with any update (its update is checked
// against its own branch of SessionUpdate).
const envelopeDef = "todoharness.SessionNotificationWithoutUpdate"

// NewSchemaValidator compiles the embedded stable ACP schema; the unstable
// one is compiled the first time a message needs it (ValidateUnstable).
func NewSchemaValidator() (*SchemaValidator, error) {
	v, err := newVersionValidator(acpSchemaJSON, acpUnstableSchemaJSON, "")
	if err != nil {
		return nil, err
	}
	v.loadV2 = sync.OnceValues(func() (*SchemaValidator, error) {
		return newVersionValidator(acpSchemaV2JSON, acpUnstableSchemaV2JSON, "v2 ")
	})
	v.loadDraft = sync.OnceValues(func() (*SchemaValidator, error) {
		d, err := newSchemaValidator(acpV1DraftSchemaJSON)
		if err != nil {
			return nil, fmt.Errorf("the ACP repository's unstable v1 schema: %w", err)
		}
		return d, nil
	})
	return v, nil
}

// newVersionValidator compiles one protocol version's stable schema, with
// its unstable one compiled on first use; name is how errors name it.
func newVersionValidator(stable, unstable []byte, name string) (*SchemaValidator, error) {
	v, err := newSchemaValidator(stable)
	if err != nil {
		return nil, fmt.Errorf("%sschema: %w", name, err)
	}
	v.loadUnstable = sync.OnceValues(func() (*SchemaValidator, error) {
		u, err := newSchemaValidator(unstable)
		if err != nil {
			return nil, fmt.Errorf("%sunstable schema: %w", name, err)
		}
		return u, nil
	})
	return v, nil
}

// ForVersion is the validator of protocol version version: v itself for
// 1 (and 0, evidence saved before there was a choice), the v2 draft
// schema's for 2 (compiled the first time it is asked for).
func (v *SchemaValidator) ForVersion(version int) (*SchemaValidator, error) {
	if version != ACPv2 || v.loadV2 == nil {
		return v, nil
	}
	v2, err := v.loadV2()
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	return v2, nil
}

// ValidateUnstable checks one wire message against the unstable (draft) ACP
// schema. Use it to tell a message from a newer protocol draft from a
// malformed one after Validate rejected it.
func (v *SchemaValidator) ValidateUnstable(m WireMsg, fromAgent bool) error {
	if v.loadUnstable == nil {
		return v.Validate(m, fromAgent)
	}
	u, err := v.loadUnstable()
	if err != nil {
		return fmt.Errorf("conformance: %w", err)
	}
	err = u.Validate(m, fromAgent)
	if err == nil || v.loadDraft == nil {
		return err
	}
	d, derr := v.loadDraft()
	if derr != nil {
		return fmt.Errorf("conformance: %w", derr)
	}
	if d.Validate(m, fromAgent) == nil {
		return nil // a later v1 draft's (the plan operations)
	}
	return err
}

func newSchemaValidator(schemaJSON []byte) (*SchemaValidator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("conformance: ACP schema: %w", err)
	}
	var raw struct {
		Defs map[string]struct {
			Method string         `json:"x-method"`
			Side   string         `json:"x-side"`
			OneOf  []updateBranch `json:"oneOf"`
			AnyOf  []updateBranch `json:"anyOf"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schemaJSON, &raw); err != nil {
		return nil, fmt.Errorf("conformance: ACP schema: %w", err)
	}
	notification := ""
	for name, d := range raw.Defs {
		if d.Method == "session/update" && strings.HasSuffix(name, "Notification") {
			notification = name
		}
	}
	if notification == "" {
		return nil, errors.New("conformance: ACP schema: no definition of the session/update notification (x-method)")
	}
	anySessionID := plainStringSessionID(doc, notification)
	byBranch := addEnvelopeDef(doc, notification)
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("conformance: ACP schema: %w", err)
	}
	qc := jsonschema.NewCompiler()
	if err := qc.AddResource(schemaURL, enumsForConstChoices(copyJSON(doc))); err != nil {
		return nil, fmt.Errorf("conformance: ACP schema with enums: %w", err)
	}
	v := &SchemaValidator{c: c, agentDefs: map[string]string{}, clientDefs: map[string]string{}, cache: map[string]*jsonschema.Schema{},
		printer: message.NewPrinter(language.English), updateBranch: map[string]string{}, notification: notification,
		anySessionID: anySessionID}
	branches, union := raw.Defs["SessionUpdate"].OneOf, "oneOf"
	if len(branches) == 0 {
		branches, union = raw.Defs["SessionUpdate"].AnyOf, "anyOf"
	}
	for i, b := range branches {
		if k := b.Properties.SessionUpdate.Const; k != "" {
			v.updateBranch[k] = fmt.Sprintf("#/$defs/SessionUpdate/%s/%d", union, i)
			v.updateKinds = append(v.updateKinds, k)
		} else {
			v.openUpdates = true // a branch for any other kind (v2's "other")
		}
	}
	v.updateByBranch = byBranch && len(branches) > 0 && len(v.updateBranch) == len(branches)
	for name, d := range raw.Defs {
		if d.Method == "" {
			continue
		}
		// x-side says which side handles the method: "agent" methods are
		// requests/notifications the client sends and responses the agent
		// sends; "client" methods the other way round.
		kind := KindRequest
		switch {
		case strings.HasSuffix(name, "Response"):
			kind = KindResponse
		case strings.HasSuffix(name, "Notification"):
			kind = KindNotification
		}
		key := kind + " " + d.Method
		toAgent := kind != KindResponse
		if d.Side == "client" {
			toAgent = !toAgent
		}
		if toAgent {
			v.clientDefs[key] = name
		} else {
			v.agentDefs[key] = name
		}
	}
	// Compile the common definitions now: a broken schema fails here, not
	// mid-run.
	for _, ptr := range []string{"#/$defs/RequestId", "#/$defs/Error", "#/$defs/" + notification} {
		if _, err := v.schema(ptr); err != nil {
			return nil, err
		}
	}
	// The quick copy shares what was read from the schema; it compiles
	// each definition the first time a message needs it.
	v.quick = &SchemaValidator{c: qc, agentDefs: v.agentDefs, clientDefs: v.clientDefs, cache: map[string]*jsonschema.Schema{},
		printer: v.printer, updateBranch: v.updateBranch, updateKinds: v.updateKinds, updateByBranch: v.updateByBranch,
		notification: notification, openUpdates: v.openUpdates}
	return v, nil
}

// copyJSON copies a decoded JSON document (maps, slices and scalars).
func copyJSON(x any) any {
	switch x := x.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSON(e)
		}
		return out
	default:
		return x
	}
}

// enumsForConstChoices rewrites, in the decoded schema doc, every oneOf
// whose branches are each a string constant and nothing else (a const, a
// type "string", a title, a description), all different, as an enum of
// those strings, and returns doc. Exactly one branch of such a oneOf
// accepts a value when the value is one of the strings, so the schema
// accepts the same instances; only its errors differ.
func enumsForConstChoices(doc any) any {
	switch x := doc.(type) {
	case map[string]any:
		for _, e := range x {
			enumsForConstChoices(e)
		}
		if values, ok := constChoices(x["oneOf"]); ok {
			if _, has := x["enum"]; !has {
				delete(x, "oneOf")
				x["enum"] = values
			}
		}
	case []any:
		for _, e := range x {
			enumsForConstChoices(e)
		}
	}
	return doc
}

// constChoices returns the strings of a oneOf's branches when each branch
// is only a distinct string const (see enumsForConstChoices).
func constChoices(oneOf any) ([]any, bool) {
	branches, _ := oneOf.([]any)
	if len(branches) == 0 {
		return nil, false
	}
	seen := map[string]bool{}
	values := make([]any, 0, len(branches))
	for _, b := range branches {
		bm, _ := b.(map[string]any)
		c, isString := bm["const"].(string)
		if !isString || seen[c] {
			return nil, false
		}
		for k, e := range bm {
			switch {
			case k == "const", k == "title", k == "description":
			case k == "type" && e == "string":
			default:
				return nil, false
			}
		}
		seen[c] = true
		values = append(values, c)
	}
	return values, true
}

// updateBranch is one branch of SessionUpdate's union, as far as the
// validator reads it: the sessionUpdate it requires.
type updateBranch struct {
	Properties struct {
		SessionUpdate struct {
			Const string `json:"const"`
		} `json:"sessionUpdate"`
	} `json:"properties"`
}

// addEnvelopeDef adds envelopeDef to the decoded schema doc (a copy of
// its session/update notification, the definition notification), and
// reports whether SessionUpdate's branches can be told apart by their
// sessionUpdate alone (each requires it, with a const).
func addEnvelopeDef(doc any, notification string) bool {
	defs, _ := doc.(map[string]any)["$defs"].(map[string]any)
	sn, _ := defs[notification].(map[string]any)
	props, _ := sn["properties"].(map[string]any)
	su, _ := defs["SessionUpdate"].(map[string]any)
	branches, _ := su["oneOf"].([]any)
	if props == nil || len(branches) == 0 {
		return false
	}
	for k := range su {
		if k != "description" && k != "discriminator" && k != "oneOf" {
			return false // another keyword applies to every update
		}
	}
	for _, b := range branches {
		bm, _ := b.(map[string]any)
		req, _ := bm["required"].([]any)
		if !slices.Contains(req, any("sessionUpdate")) {
			return false
		}
	}
	env := maps.Clone(sn)
	env["properties"] = maps.Clone(props)
	env["properties"].(map[string]any)["update"] = true
	defs[envelopeDef] = env
	return true
}

// updateValid reports whether a session/update's params are valid by the
// branch their update's sessionUpdate names (see updateByBranch); false
// means Validate must look at the whole union for its error.
func (v *SchemaValidator) updateValid(params any) bool {
	p, _ := params.(map[string]any)
	u, _ := p["update"].(map[string]any)
	kind, _ := u["sessionUpdate"].(string)
	ptr, ok := v.updateBranch[kind]
	if !ok || !v.updateByBranch {
		return false
	}
	env, err := v.schema("#/$defs/" + envelopeDef)
	if err != nil || env.Validate(params) != nil {
		return false
	}
	bs, err := v.schema(ptr)
	return err == nil && bs.Validate(u) == nil
}

func (v *SchemaValidator) schema(ptr string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.cache[ptr]; ok {
		return s, nil
	}
	s, err := v.c.Compile(schemaURL + ptr)
	if err != nil {
		return nil, fmt.Errorf("conformance: compile ACP schema %s: %w", ptr, err)
	}
	v.cache[ptr] = s
	return s, nil
}

// Validate checks one wire message. fromAgent says who sent it. It returns
// nil for a valid message, else an error naming the definition and the
// first problems.
func (v *SchemaValidator) Validate(m WireMsg, fromAgent bool) error {
	key, keep := validKey(m, fromAgent, v.anySessionID)
	if keep && v.wasAccepted(key) {
		return nil
	}
	err := v.validate(m, fromAgent)
	if err == nil && keep {
		v.accept(key)
	}
	return err
}

// acceptedKeep bounds the keys a validator keeps of the messages it
// accepted (Validate), acceptedLine the line of one it keeps.
const (
	acceptedKeep = 16 << 20
	acceptedLine = 16 << 10
)

// validKey is what Validate reads of m: the line, its kind and method
// (Classify's, or a sent message's method as written), the method a
// response answers, the side; keep is false for a line too long to keep.
func validKey(m WireMsg, fromAgent, anySessionID bool) (key string, keep bool) {
	if len(m.Line) > acceptedLine || m.Capped {
		return "", false
	}
	side := "c"
	if fromAgent {
		side = "a"
	}
	if anySessionID && m.Kind == KindNotification && m.Method == "session/update" {
		if rest, ok := afterSessionID(m.Line); ok {
			return side + "\x01" + m.Kind + "\x00" + m.Method + "\x00" + m.ReplyTo + "\x00" + rest, true
		}
	}
	return side + "\x00" + m.Kind + "\x00" + m.Method + "\x00" + m.ReplyTo + "\x00" + m.Line, true
}

// updateFrame is how the SDKs (and the reference agent) begin a
// session/update line, up to the value of its sessionId.
const updateFrame = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"`

// afterSessionID is what follows the session ID of a line that begins
// with updateFrame, the ID a non-empty run of printable ASCII characters
// other than a quote or a backslash (ok false for any other line). Two
// lines that differ in that ID alone are one JSON document but for the
// string value of params.sessionId (if one was valid JSON, that ID was a
// string; the same bytes before it put the other's in the same place):
// where the schema takes any string there, one is valid exactly when the
// other is.
func afterSessionID(line string) (rest string, ok bool) {
	if !strings.HasPrefix(line, updateFrame) {
		return "", false
	}
	id := line[len(updateFrame):]
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c == '"':
			return id[i:], i > 0
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", false
		}
	}
	return "", false
}

// plainStringSessionID reports whether the schema doc's notification
// definition (before the envelope is added) takes any string as its
// sessionId: the definition has no keyword that could constrain a property
// besides properties, required and type, and its sessionId is a $ref (or an
// allOf of one) to a definition that says only type "string" (titles and
// descriptions aside).
func plainStringSessionID(doc any, notification string) bool {
	obj := func(x any) map[string]any { m, _ := x.(map[string]any); return m }
	only := func(m map[string]any, keys ...string) bool {
		for k := range m {
			if !slices.Contains(keys, k) {
				return false
			}
		}
		return true
	}
	defs := obj(obj(doc)["$defs"])
	n := obj(defs[notification])
	if n == nil || !only(n, "description", "title", "type", "properties", "required", "x-method", "x-side") {
		return false
	}
	sid := obj(obj(n["properties"])["sessionId"])
	if sid == nil || !only(sid, "description", "title", "allOf", "$ref") {
		return false
	}
	ref, _ := sid["$ref"].(string)
	if all, ok := sid["allOf"].([]any); ok {
		if len(all) != 1 || ref != "" || !only(obj(all[0]), "$ref") {
			return false
		}
		ref, _ = obj(all[0])["$ref"].(string)
	}
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok {
		return false
	}
	d := obj(defs[name])
	return d != nil && only(d, "description", "title", "type") && d["type"] == "string"
}

func (v *SchemaValidator) wasAccepted(key string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.accepted[key]
	return ok
}

func (v *SchemaValidator) accept(key string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.acceptedSize+len(key) > acceptedKeep {
		return
	}
	if v.accepted == nil {
		v.accepted = map[string]struct{}{}
	}
	if _, ok := v.accepted[key]; !ok {
		v.accepted[key] = struct{}{}
		v.acceptedSize += len(key)
	}
}

// validate is Validate without its memory.
func (v *SchemaValidator) validate(m WireMsg, fromAgent bool) error {
	if v.quick != nil && v.quick.validate(m, fromAgent) == nil {
		return nil
	}
	if m.Kind == KindInvalid {
		return fmt.Errorf("not a JSON-RPC message: %s", m.Problem)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(m.Line))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	defs := v.clientDefs
	if fromAgent {
		defs = v.agentDefs
	}
	obj, _ := inst.(map[string]any)
	// The Envelope: classify checked jsonrpc and the shape; the id must be
	// a RequestId. Validating against the schema's whole message union
	// would try every method's definition: by method is exact and cheaper.
	if id, ok := obj["id"]; ok {
		s, err := v.schema("#/$defs/RequestId")
		if err != nil {
			return err
		}
		if err := s.Validate(id); err != nil {
			return v.schemaErr("RequestId", err)
		}
	}
	method := m.Method
	var part any
	switch m.Kind {
	case KindResponse:
		method = m.ReplyTo
		if method == "" {
			return fmt.Errorf("response to unknown request id %s", string(m.ID))
		}
		if e, isErr := obj["error"]; isErr {
			s, err := v.schema("#/$defs/Error")
			if err != nil {
				return err
			}
			if err := s.Validate(e); err != nil {
				return v.schemaErr("Error", err)
			}
			return nil
		}
		part = obj["result"]
	default:
		part = obj["params"]
	}
	def, ok := defs[m.Kind+" "+method]
	if !ok {
		if strings.HasPrefix(method, "_") {
			return nil // extension method: only the Envelope applies
		}
		return fmt.Errorf("%s %q is not an ACP method a%s sends", m.Kind, method, map[bool]string{true: "n agent", false: " client"}[fromAgent])
	}
	if m.Kind == KindNotification && method == "session/update" && v.updateValid(part) {
		return nil
	}
	ds, err := v.schema("#/$defs/" + def)
	if err != nil {
		return err
	}
	if err := ds.Validate(part); err != nil {
		if m.Kind == KindNotification && method == "session/update" {
			if berr := v.updateErr(def, part); berr != nil {
				return berr
			}
		}
		return v.schemaErr(def, err)
	}
	return nil
}

// updateErr validates a session/update's update against the branch its
// own sessionUpdate selects, so that the error is about that kind of
// update and not about every other kind; nil when that branch accepts it
// (the problem is elsewhere in the message).
func (v *SchemaValidator) updateErr(def string, params any) error {
	p, _ := params.(map[string]any)
	u, ok := p["update"].(map[string]any)
	if !ok {
		return nil
	}
	kind, _ := u["sessionUpdate"].(string)
	ptr, ok := v.updateBranch[kind]
	if !ok && v.openUpdates {
		return nil // a kind the union's open branch takes: its error says more
	}
	if !ok {
		return fmt.Errorf("invalid %s: /update/sessionUpdate: %s is not one of %s", def, jsonText(u["sessionUpdate"]), strings.Join(v.updateKinds, ", "))
	}
	bs, err := v.schema(ptr)
	if err != nil {
		return err
	}
	if err := bs.Validate(u); err != nil {
		return v.schemaErrAt(def+" ("+kind+")", err, "/update")
	}
	return nil
}

// jsonText renders a decoded JSON value as JSON.
func jsonText(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

// schemaErr condenses a validation error to its deepest causes.
func (v *SchemaValidator) schemaErr(def string, err error) error { return v.schemaErrAt(def, err, "") }

// schemaErrAt condenses a validation error to its deepest causes, each as
// "location: problem" with prefix before the location: for a oneOf over
// update kinds, the branch that got furthest explains the problem better
// than the discriminator mismatches of the others; a oneOf of constants
// (an enum written as oneOf, as PlanEntryStatus) is one problem: "value is
// not one of a, b, c".
func (v *SchemaValidator) schemaErrAt(def string, err error, prefix string) error {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return fmt.Errorf("%s: %w", def, err)
	}
	type leaf struct {
		depth int
		text  string
		// discriminator: a const mismatch, i.e. a oneOf branch for another
		// kind of message; only shown when nothing else explains the error.
		discriminator bool
	}
	var leaves []leaf
	at := func(e *jsonschema.ValidationError) string {
		return prefix + "/" + strings.Join(e.InstanceLocation, "/")
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if want, got, ok := constChoice(e); ok {
			leaves = append(leaves, leaf{len(e.InstanceLocation), fmt.Sprintf("%s: %s is not one of %s", at(e), jsonText(got), strings.Join(want, ", ")), false})
			return
		}
		if len(e.Causes) == 0 {
			text := e.ErrorKind.LocalizedString(v.printer)
			if en, ok := e.ErrorKind.(*kind.Enum); ok {
				var want []string
				for _, w := range en.Want {
					want = append(want, fmt.Sprint(w))
				}
				text = fmt.Sprintf("%s is not one of %s", jsonText(en.Got), strings.Join(want, ", "))
			}
			_, isConst := e.ErrorKind.(*kind.Const)
			leaves = append(leaves, leaf{len(e.InstanceLocation), at(e) + ": " + text, isConst})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	relevant := leaves[:0:0]
	for _, l := range leaves {
		if !l.discriminator {
			relevant = append(relevant, l)
		}
	}
	if len(relevant) > 0 {
		leaves = relevant
	}
	deepest := 0
	for _, l := range leaves {
		deepest = max(deepest, l.depth)
	}
	var texts []string
	seen := map[string]bool{}
	for _, l := range leaves {
		if l.depth == deepest && !seen[l.text] {
			seen[l.text] = true
			texts = append(texts, l.text)
		}
	}
	if len(texts) > 6 {
		texts = append(texts[:6], fmt.Sprintf("and %d more", len(texts)-6))
	}
	return fmt.Errorf("invalid %s: %s", def, strings.Join(texts, "; "))
}

// constChoice recognises a oneOf or anyOf whose every branch failed on a
// const at the same place (an enum written as a oneOf of constants): the
// values allowed and the value seen.
func constChoice(e *jsonschema.ValidationError) (want []string, got any, ok bool) {
	switch e.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
	default:
		return nil, nil, false
	}
	if len(e.Causes) < 2 {
		return nil, nil, false
	}
	for _, c := range e.Causes {
		// A branch's error may wrap its const in a group or an allOf.
		for len(c.Causes) == 1 {
			c = c.Causes[0]
		}
		k, isConst := c.ErrorKind.(*kind.Const)
		if !isConst || len(c.Causes) > 0 || strings.Join(c.InstanceLocation, "/") != strings.Join(e.InstanceLocation, "/") {
			return nil, nil, false
		}
		want, got = append(want, fmt.Sprint(k.Want)), k.Got
	}
	return want, got, true
}

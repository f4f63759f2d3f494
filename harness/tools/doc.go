// Package tools is the harness's tool registry: tools register with a name, a
// description and a JSON Schema for their arguments; Execute validates the
// model's raw argument string against that schema with a real JSON Schema
// validator before the tool runs, and turns every failure into an isError
// result whose text is "Error: <message>", which is what the model sees.
package tools

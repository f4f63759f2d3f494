// Package yamlx is the one door through which todoharness reads YAML (mock
// scripts, conformance cases, expected-failure lists, plugin compositions,
// cassettes). It parses with gopkg.in/yaml.v3 and refuses a document whose
// aliases expand it beyond a fixed budget before anything walks or decodes
// it, so a few hundred bytes of nested aliases (a "billion laughs" document)
// are an error naming the line, not an exhausted memory.
package yamlx

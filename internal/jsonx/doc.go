// Package jsonx is the one JSON encoder todoharness writes with: the output
// of encoding/json (sorted map keys) without HTML escaping, so that "a < b &
// c" reads as written, and without the trailing newline of json.Encoder.
// Logs, goldens, cassette matching and mock scripts all encode through it,
// so their bytes agree. Decode is its strict counterpart: one value,
// numbers kept as written.
package jsonx

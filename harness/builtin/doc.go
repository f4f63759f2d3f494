// Package builtin is the reference harness as shipped: the catalogue of
// plugins it knows and the composition file `todoharness agent` starts from.
// Tests load the shipped composition through Compose, the same code path the
// binary uses.
package builtin

// Package acpnorm normalises an agent's raw ACP stdout (one JSON-RPC
// message per line) as the original implementation's snapshot kit does:
// JSON-RPC ids renumbered in first-seen order, session ids and every UUID
// to {{sessionId}}, the cwd and its aliases to {{cwd}}, messageId to
// {{messageId}}, usage_update's used to {{usedTokens}}; and writes a
// transcript with its keys sorted (Canonical) to compare two, key order
// aside. Snapshots and recordings both write their goldens with it.
package acpnorm

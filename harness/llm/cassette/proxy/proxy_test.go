package proxy_test

import (
	"github.com/todoharness/todoharness/harness/llm/cassette/proxy"
	"github.com/todoharness/todoharness/harness/llm/cassette/record"
	"github.com/todoharness/todoharness/harness/llm/cassette/replay"
)

// Both cassette transports can be served.
var (
	_ proxy.Transport = (*record.Recorder)(nil)
	_ proxy.Transport = (*replay.Player)(nil)
)

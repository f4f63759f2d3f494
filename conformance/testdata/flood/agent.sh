#!/bin/sh
# A minimal ACP agent that floods the conformance runner, for the memory
# measurements of docs/performance.md (never run by the tests):
#   agent.sh line     300 MB stdout line before the initialize answer
#   agent.sh notify   300,000 session/update notifications per prompt
#   agent.sh bodies   8 model requests of 20 MB each per prompt
#   agent.sh chunks   64 MiB of "<" in 16,384 agent_message_chunk updates
# The runner's requests are read one per line; their id is the first key
# (the runner writes sorted keys).
mode=$1
ok() { printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$1" "$2"; }
while IFS= read -r line; do
	id=$(printf '%s' "$line" | sed -n 's/^{"id":\([0-9]*\).*/\1/p')
	case "$line" in
	*'"method":"initialize"'*)
		if [ "$mode" = line ]; then
			head -c 300000000 /dev/zero | tr '\0' a
			echo
		fi
		ok "$id" '{"protocolVersion":1,"agentCapabilities":{"loadSession":false},"authMethods":[]}' ;;
	*'"method":"session/new"'*)
		ok "$id" '{"sessionId":"flood"}' ;;
	*'"method":"session/prompt"'*)
		case "$mode" in
		notify)
			yes '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"flood","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"flood"}}}}' | head -n 300000 ;;
		chunks)
			lt=$(head -c 4096 /dev/zero | tr '\0' '<')
			yes '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"flood","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"'"$lt"'"}}}}' | head -n 16384 ;;
		bodies)
			{ printf '{"model":"mock","messages":[{"role":"user","content":"'; head -c 20000000 /dev/zero | tr '\0' a; printf '"}]}'; } > body.json
			for i in 1 2 3 4 5 6 7 8; do
				curl -s -o /dev/null -H 'Content-Type: application/json' --data-binary @body.json "$TODOHARNESS_MODEL_URL/chat/completions"
			done
			rm -f body.json ;;
		esac
		ok "$id" '{"stopReason":"end_turn"}' ;;
	esac
done

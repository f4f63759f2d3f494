#!/usr/bin/env python3
"""A minimal ACP agent with a todo_write tool that passes the todoharness
conformance catalogue. Python 3, standard library only (tested with 3.11).

It speaks ACP (JSON-RPC 2.0, one message per line) on stdin/stdout and
talks to a model over the OpenAI chat completions API (non-streaming), at
the base URL given with --base-url or in $TODOHARNESS_MODEL_URL (which the
conformance runner always sets to its mock model, on 127.0.0.1). It speaks
plain HTTP over a socket: the runner starts the agent once per case, and
urllib's imports alone would double its start-up (an https:// URL is
refused, saying so):

    todoharness conform --agent "python3 $PWD/docs/examples/minimal_agent.py"

What it does, in the order the runner sees it (docs/validating-other-agents.md,
"Checklist for agent authors"):

- initialize: protocolVersion 1, agentCapabilities.loadSession true;
- session/new: a fresh session, persisted as <cwd>/.minimal-agent/<id>.jsonl;
- session/prompt: asks the model, offering one tool, todo_write; for each
  todo_write call it sends tool_call, then (only when the call is valid) a
  plan with every entry's priority, then tool_call_update; the model gets a
  result with the counts only, "Error: ..." when the call was refused;
- session/load: replays the stored updates (the plan among them) and only
  then answers.

$FLAW breaks behaviours on purpose (the conformance tier checks that each
flaw fails exactly the checks it should, and that no combination passes;
see internal/breakage): no-priority, no-validation, echo-list, no-load, or
several of them separated by commas.
"""

import json
import os
import sys
import socket

FLAWS = ("no-priority", "no-validation", "echo-list", "no-load")
FLAW = set(f for f in os.environ.get("FLAW", "").split(",") if f)

STATUSES = ("pending", "in_progress", "completed")

# What JavaScript's String.prototype.trim() cuts, the contract's trim.
# Python's own str.strip() differs: it keeps U+FEFF and cuts U+0085 and
# U+001C-U+001F.
JS_WHITESPACE = ("\t\n\v\f\r \u00a0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B))
                 + "\u2028\u2029\u202f\u205f\u3000\ufeff")

# The tool as the model sees it: the whole list on every call.
TODO_TOOL = {
    "type": "function",
    "function": {
        "name": "todo_write",
        "description": (
            "Record and update your task list. Send the COMPLETE list on every call: "
            "it replaces the previous one. Each item is {content, status}; status is "
            "pending, in_progress or completed; at most one task may be in_progress."
        ),
        "parameters": {
            "type": "object",
            "required": ["todos"],
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The COMPLETE task list, replacing any previous list",
                    "items": {
                        "type": "object",
                        "required": ["content", "status"],
                        "properties": {
                            "content": {"type": "string"},
                            "status": {"type": "string", "enum": list(STATUSES)},
                        },
                    },
                }
            },
        },
    },
}


def validate(args):
    """Returns (todos, None) for a valid call, (None, message) otherwise:
    the schema's type/required/enum rules, then non-empty (trimmed) and
    unique content and at most one task in_progress."""
    if not isinstance(args, dict) or "todos" not in args:
        return None, "invalid arguments: todos is required"
    todos = args["todos"]
    if not isinstance(todos, list):
        return None, "invalid arguments: todos must be an array, got %s" % type(todos).__name__
    out = []
    for i, t in enumerate(todos):
        if not isinstance(t, dict):
            return None, "invalid arguments: todos[%d] must be an object" % i
        content, status = t.get("content"), t.get("status")
        if not isinstance(content, str):
            return None, "invalid arguments: todos[%d].content must be a string" % i
        if status not in STATUSES:
            return None, "invalid arguments: todos[%d].status %s is not one of %s" % (
                i, json.dumps(status), ", ".join(STATUSES))
        out.append({"content": content.strip(JS_WHITESPACE), "status": status})
    if "no-validation" in FLAW:
        return out, None
    seen = set()
    for t in out:
        if not t["content"]:
            return None, "invalid todo: `content` must be a non-empty string"
        if t["content"] in seen:
            return None, "invalid todos: duplicate content %s" % json.dumps(t["content"])
        seen.add(t["content"])
    active = sum(1 for t in out if t["status"] == "in_progress")
    if active > 1:
        return None, "invalid todos: at most one task may be in_progress, got %d" % active
    return out, None


def counts_text(todos):
    n = {s: sum(1 for t in todos if t["status"] == s) for s in STATUSES}
    return "Updated todo list: %d pending, %d in progress, %d completed." % (
        n["pending"], n["in_progress"], n["completed"])


class Session:
    """One session: the model history and the ACP updates sent, appended to
    a JSON lines file in the cwd as they happen (nothing a client saw is
    lost when the process is killed)."""

    def __init__(self, sid, cwd):
        self.id, self.cwd = sid, cwd
        self.messages, self.updates = [], []
        self.path = os.path.join(cwd, ".minimal-agent", sid + ".jsonl")
        self.file = None  # opened for appending at the first event

    def append(self, kind, value):
        """Writes the event to the file before anyone hears of it: flushed
        to the kernel, it survives the process being killed (a machine
        crash is another matter: that would take an fsync per event)."""
        self.keep(kind, value)
        if self.file is None:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            self.file = open(self.path, "a", encoding="utf-8")
        self.file.write(json.dumps({"type": kind, "value": value}) + "\n")
        self.file.flush()

    @classmethod
    def load(cls, sid, cwd):
        s = cls(sid, cwd)
        if os.path.basename(sid) != sid or not os.path.exists(s.path):
            raise KeyError(sid)
        with open(s.path, encoding="utf-8") as f:
            for line in f:
                if line.endswith("\n"):  # a torn last line is dropped
                    ev = json.loads(line)
                    s.keep(ev["type"], ev["value"])
        return s

    def keep(self, kind, value):
        """message: model history; update: replayed on load; todo/write:
        the list (the last one is the current list)."""
        if kind == "message":
            self.messages.append(value)
        elif kind == "update":
            self.updates.append(value)


class Agent:
    def __init__(self, base_url, model):
        scheme, _, rest = base_url.rstrip("/").partition("://")
        if scheme != "http":
            raise ValueError("base URL %r: want http://HOST:PORT/PATH (plain HTTP only)" % base_url)
        hostport, _, path = rest.partition("/")
        host, _, port = hostport.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError("base URL %r: want http://HOST:PORT/PATH" % base_url)
        self.addr, self.path, self.model = (host, int(port)), "/" + path, model
        self.sessions = {}

    # --- the wire -------------------------------------------------------
    def send(self, msg):
        msg["jsonrpc"] = "2.0"
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

    def update(self, session, update, persist=True):
        self.send({"method": "session/update", "params": {"sessionId": session.id, "update": update}})
        if persist:
            session.append("update", update)

    def serve(self):
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                self.send({"id": None, "error": {"code": -32700, "message": "parse error"}})
                continue
            if "method" not in msg or "id" not in msg:
                continue  # a notification (session/cancel) or an answer: nothing to do
            try:
                result = self.handle(msg["method"], msg.get("params") or {})
                self.send({"id": msg["id"], "result": result})
            except RPCError as e:
                self.send({"id": msg["id"], "error": {"code": e.code, "message": str(e)}})
            except Exception as e:  # noqa: BLE001 - report, keep serving
                self.send({"id": msg["id"], "error": {"code": -32603, "message": "internal error: %s" % e}})

    # --- ACP methods ----------------------------------------------------
    def handle(self, method, params):
        if method == "initialize":
            return {
                "protocolVersion": 1,
                "agentCapabilities": {"loadSession": "no-load" not in FLAW},
                "agentInfo": {"name": "minimal-agent", "version": "0.1.0"},
                "authMethods": [],
            }
        if method == "session/new":
            s = Session(os.urandom(16).hex(), params["cwd"])
            self.sessions[s.id] = s
            return {"sessionId": s.id}
        if method == "session/load" and "no-load" not in FLAW:
            try:
                s = Session.load(params["sessionId"], params["cwd"])
            except KeyError:
                raise RPCError(-32602, "no session %s in %s" % (params.get("sessionId"), params.get("cwd")))
            self.sessions[s.id] = s
            for u in s.updates:  # the replay comes before the answer
                self.update(s, u, persist=False)
            return {}
        if method == "session/prompt":
            s = self.sessions.get(params.get("sessionId"))
            if s is None:
                raise RPCError(-32602, "unknown session %s" % params.get("sessionId"))
            return self.prompt(s, params.get("prompt") or [])
        raise RPCError(-32601, "method not found: %s" % method)

    def prompt(self, s, blocks):
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        s.append("message", {"role": "user", "content": text})
        # Not sent now (the client has the prompt), but replayed on load.
        s.append("update", {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}})
        for _ in range(32):  # model steps per prompt
            answer = self.chat(s.messages)["choices"][0]["message"]
            calls = answer.get("tool_calls") or []
            if not calls:
                reply = answer.get("content") or ""
                s.append("message", {"role": "assistant", "content": reply})
                self.update(s, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": reply}})
                return {"stopReason": "end_turn"}
            s.append("message", {"role": "assistant", "content": answer.get("content"), "tool_calls": calls})
            for call in calls:
                s.append("message", {"role": "tool", "tool_call_id": call["id"], "content": self.tool(s, call)})
        return {"stopReason": "max_turn_requests"}

    def tool(self, s, call):
        """Runs one tool call; returns the result text the model sees."""
        fn = call.get("function") or {}
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except ValueError:
            args = None
        self.update(s, {"sessionUpdate": "tool_call", "toolCallId": call["id"], "title": "Update todo list",
                        "kind": "other", "status": "in_progress", "rawInput": args})
        if fn.get("name") != "todo_write":
            todos, err = None, "unknown tool %s" % fn.get("name")
        else:
            todos, err = validate(args)
        if err is not None:
            # OpenAI chat completions has no error flag: "Error:" marks it.
            result, status = "Error: " + err, "failed"
        else:
            s.append("todo/write", {"todos": todos})
            entries = [{"content": t["content"], "status": t["status"]} for t in todos]
            if "no-priority" not in FLAW:
                for e in entries:
                    e["priority"] = "medium"  # ACP requires one; the list has none
            self.update(s, {"sessionUpdate": "plan", "entries": entries})
            result, status = counts_text(todos), "completed"
            if "echo-list" in FLAW:
                result += " The list: " + json.dumps(todos)
        self.update(s, {"sessionUpdate": "tool_call_update", "toolCallId": call["id"], "status": status,
                        "content": [{"type": "content", "content": {"type": "text", "text": result}}]})
        return result

    # --- the model ------------------------------------------------------
    def chat(self, messages):
        """POST /chat/completions over HTTP/1.0: one connection per request,
        the answer read to the end (no chunked encoding in HTTP/1.0)."""
        body = json.dumps({"model": self.model, "messages": messages, "tools": [TODO_TOOL], "stream": False}).encode()
        head = ("POST %s/chat/completions HTTP/1.0\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
                "Authorization: Bearer mock\r\nContent-Length: %d\r\n\r\n") % (
            self.path.rstrip("/"), self.addr[0], self.addr[1], len(body))
        with socket.create_connection(self.addr, timeout=120) as c:
            c.sendall(head.encode() + body)
            with c.makefile("rb") as r:
                answer = r.read()
        header, _, data = answer.partition(b"\r\n\r\n")
        status = header.split(b"\r\n", 1)[0].split()
        if len(status) < 2 or status[1] != b"200":
            raise RuntimeError("model: %s: %s" % (b" ".join(status[1:]).decode(errors="replace") or "no HTTP answer",
                                                   data.decode(errors="replace")[:500]))
        return json.loads(data)


class RPCError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def main(argv):
    base_url = os.environ.get("TODOHARNESS_MODEL_URL", "")
    model = "mock"
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--base-url" and args:
            base_url = args.pop(0)
        elif a == "--model" and args:
            model = args.pop(0)
        else:
            sys.exit("minimal_agent: unknown argument %r (use --base-url URL, --model NAME)" % a)
    if not base_url:
        sys.exit("minimal_agent: no model: give --base-url URL or set TODOHARNESS_MODEL_URL")
    for f in sorted(FLAW - set(FLAWS)):
        sys.exit("minimal_agent: unknown FLAW %r (known: %s)" % (f, ", ".join(FLAWS)))
    try:
        agent = Agent(base_url, model)
    except ValueError as e:
        sys.exit("minimal_agent: %s" % e)
    agent.serve()


if __name__ == "__main__":
    main(sys.argv[1:])

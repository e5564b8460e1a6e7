#!/usr/bin/env python3
"""A small MCP server (stdio, newline-delimited JSON-RPC) that misbehaves on request.

Tools: `echo {text}`, `nested {order: {items: [{sku, qty}], ship: {city}}}` (answers with
what it got), `env {name}` (whether the variable is set), `read {path}`, `write {path,
text}` (a file, its folders made), `crash` (exits mid-call, after a line on stderr), `hang`
(never answers), `fail` (an error result).

Options: `--die-at-start` writes a reason to stderr and exits 1 before the handshake;
`--count FILE` appends a line to FILE at every start (to count restarts); `--calls FILE`
appends the name of every tool called.
"""

import json
import os
import sys
import time

TOOLS = [
    {
        "name": "echo",
        "description": "Answers with the text it is given.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "nested",
        "description": "Takes an order with nested objects and answers with it.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "order": {
                    "type": "object",
                    "properties": {
                        "items": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "sku": {"type": "string"},
                                    "qty": {"type": "integer", "minimum": 1},
                                },
                                "required": ["sku", "qty"],
                            },
                        },
                        "ship": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                        },
                    },
                    "required": ["items"],
                }
            },
            "required": ["order"],
        },
    },
    {
        "name": "env",
        "description": "Says whether an environment variable is set.",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
    {"name": "where", "description": "Says where it runs and which workspace it was given.", "inputSchema": {"type": "object"}},
    {
        "name": "read",
        "description": "Reads a file, or says why it cannot.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
    {
        "name": "write",
        "description": "Writes a file (its folders made), or says why it cannot.",
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
        },
    },
    {"name": "crash", "description": "Exits in the middle of the call.", "inputSchema": {"type": "object"}},
    {"name": "hang", "description": "Never answers.", "inputSchema": {"type": "object"}},
    {"name": "fail", "description": "Answers with an error result.", "inputSchema": {"type": "object"}},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(value, error=False):
    return {"content": [{"type": "text", "text": value}], "isError": error}


def call(name, args):
    if name == "echo":
        return text("echo: " + str(args.get("text", "")))
    if name == "nested":
        return text("order: " + json.dumps(args.get("order"), sort_keys=True))
    if name == "env":
        variable = str(args.get("name", ""))
        return text(variable + (" is set" if variable in os.environ else " is not set"))
    if name == "where":
        return text("cwd=" + os.getcwd() + " workspace=" + os.environ.get("CAIRN_WORKSPACE", "(none)"))
    if name == "read":
        try:
            with open(str(args.get("path", ""))) as f:
                return text("read: " + f.read())
        except OSError as e:
            return text("cannot read: " + e.strerror, error=True)
    if name == "write":
        path = str(args.get("path", ""))
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w") as f:
                f.write(str(args.get("text", "")))
            return text("wrote " + path)
        except OSError as e:
            return text("cannot write: " + e.strerror, error=True)
    if name == "crash":
        sys.stderr.write("flaky: crashing in the middle of a call\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "hang":
        while True:
            time.sleep(60)
    if name == "fail":
        return text("the thing failed", error=True)
    return None


def main():
    args = sys.argv[1:]
    if "--count" in args:
        with open(args[args.index("--count") + 1], "a") as f:
            f.write("start\n")
    if "--die-at-start" in args:
        sys.stderr.write("flaky: cannot start: the token is missing\n")
        sys.exit(1)
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue  # a notification
        if method == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "flaky", "version": "1.0.0"},
            }
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            params = message.get("params") or {}
            if "--calls" in args:
                with open(args[args.index("--calls") + 1], "a") as f:
                    f.write(str(params.get("name")) + "\n")
            result = call(params.get("name"), params.get("arguments") or {})
            if result is None:
                send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32602, "message": "no such tool"}})
                continue
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "method not found"}})
            continue
        send({"jsonrpc": "2.0", "id": ident, "result": result})


if __name__ == "__main__":
    main()

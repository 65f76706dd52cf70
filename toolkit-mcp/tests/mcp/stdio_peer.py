"""A scripted stdio MCP server (session revision) for what real servers do not do on purpose.

Usage: stdio_peer.py MODE PIDFILE
  normal          answers initialize, tools/list (one tool, echo) and tools/call; logs to stderr
  die-after-call  exits right after its first tools/call answer
  die-in-call     exits when a tools/call arrives, without answering
  die-once        as die-in-call in the first process the pid file records, as normal after
  stubborn        ignores stdin closing and SIGTERM (only SIGKILL ends it)
  huge-line       answers a tools/call for the text "huge" with a line longer than 2 MiB
  noisy           as normal, and first writes a stderr line of 100 KiB
  growing         as normal, and each tools/list also lists the tools grown_1 .. grown_N, N
                  the number of lists so far (a server whose tools change while it runs)
  announcing      as growing, and a tools/call for the text "change" first says
                  notifications/tools/list_changed
  flood           as normal, but a tools/call for the text "flood" is answered after 20,000 pings
                  written without reading stdin; one for "count" answers how many answers to
                  pings had come by then
  slow-modern     speaks only the stateless revision: answers server/discover a second late
                  (as a server slow to start does) and refuses initialize with -32022
Every other mode never answers server/discover (as some legacy servers do); each writes its pid
to PIDFILE first.
"""
import json
import signal
import sys
import time

mode, pidfile = sys.argv[1], sys.argv[2]
with open(pidfile, "a") as f:
    f.write(f"{__import__('os').getpid()}\n")
if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode == "noisy":
    print("n" * (100 * 1024), file=sys.stderr, flush=True)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    print(f"got {method}", file=sys.stderr, flush=True)
    if mode == "slow-modern" and method == "server/discover":
        time.sleep(1)
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow-peer", "version": "0.1"}}})
        continue
    if mode == "slow-modern" and method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32022,
            "message": "this server speaks 2026-07-28 only", "data": {"supported": ["2026-07-28"]}}})
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "stdio-peer", "version": "0.1"}}})
        send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
    elif method == "tools/list":
        tools = [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]
        if mode in ("growing", "announcing"):
            lists = globals().get("lists", 0) + 1
            globals()["lists"] = lists
            tools += [{"name": f"grown_{n}", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
                      for n in range(1, lists + 1)]
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": tools}})
    elif method == "tools/call":
        if mode == "die-in-call":
            sys.exit(3)
        if mode == "die-once" and len(open(pidfile).read().split()) == 1:
            sys.exit(3)
        if mode == "huge-line" and message["params"]["arguments"].get("text") == "huge":
            send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": "x" * (3 * 1024 * 1024)}]}})
            continue
        text = message["params"]["arguments"].get("text", "")
        if mode == "announcing" and text == "change":
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        if mode == "flood" and text == "flood":
            for n in range(20000):
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": f"flood-{n}", "method": "ping"}) + "\n")
            sys.stdout.flush()
        if mode == "flood" and text == "count":
            text = str(globals().get("pongs", 0))
        send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": text}]}})
        if mode == "die-after-call":
            sys.exit(0)
    elif ident is not None and method is None and mode == "flood":
        globals()["pongs"] = globals().get("pongs", 0) + 1
    elif ident is not None and method is None:
        # The client's answer to our ping: kept where the test reads it.
        with open(pidfile + ".answers", "a") as f:
            f.write(json.dumps(message) + "\n")
if mode == "stubborn":
    while True:
        time.sleep(1)

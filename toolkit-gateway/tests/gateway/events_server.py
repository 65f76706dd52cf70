"""An MCP server over stdio (plain Python 3, standard library only) serving the MCP Events
extension (SEP-3415, `io.modelcontextprotocol/events`, Beta) by poll and push, in the stateless
revision 2026-07-28 (the per-request `_meta` envelope, opened with `server/discover`), as
server-everything's events and FastMCP's events package serve them. Neither peer is released
with events in the registries (npm server-everything 2026.8.31, PyPI fastmcp 4.2.3), hence this.

Event types:
  clock-tick    poll and push, replayable: one event per tick of a clock that started at
                EVENTS_EPOCH_MS (default: when the process started), every EVENTS_TICK_MS
                (default 1000). The cursor is the index of the last tick delivered, so a process
                started again with the same epoch resumes where another left off. Only the last
                EVENTS_RETAIN ticks (default 10) are kept: an older cursor is answered from the
                oldest kept with `truncated: true`. Argument `every`: only every Nth tick.
  custom-event  push only, no replay (cursor null): raised by the tool `trigger-event`.
  bad-event     poll and push: two events, the first of which breaks its payloadSchema (its
                `level` is a string where an integer is required).

Push streams send `notifications/events/active` first, a heartbeat every EVENTS_HEARTBEAT_MS
(default 15000) with the cursor reached, and stop on `notifications/cancelled`.

Tools: `trigger-event` {message, count?} raises custom-event on every open stream of it;
`exit-after` {events} makes the process exit (as a crash: no answer, no goodbye) once it has sent
that many more events; `freeze-streams` makes the open push streams go silent for good (as a
connection that died without closing); `terminate-streams` ends them with
`notifications/events/terminated` (Forbidden, as when access is revoked).

Every message is one line, written in two pieces with a flush after each.

Usage: events_server.py              (stdio)
       events_server.py --http PORT  (Streamable HTTP, stateless, at http://127.0.0.1:PORT/mcp;
                                      an events/stream is answered with an event stream)
"""
import datetime
import json
import os
import sys
import threading
import time

VERSION = "2026-07-28"
EXTENSION = "io.modelcontextprotocol/events"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = {"name": "events-fixture", "version": "1.0.0"}

TICK_MS = int(os.environ.get("EVENTS_TICK_MS", "1000"))
RETAIN = int(os.environ.get("EVENTS_RETAIN", "10"))
EPOCH_MS = int(os.environ.get("EVENTS_EPOCH_MS", str(int(time.time() * 1000))))
HEARTBEAT_MS = int(os.environ.get("EVENTS_HEARTBEAT_MS", "15000"))

EVENT_TYPES = [
    {
        "name": "clock-tick",
        "description": "Fires at each tick of the server's clock. Replayable from a cursor "
        "(the last tick delivered); only the last ticks are kept.",
        "delivery": ["poll", "push"],
        "inputSchema": {
            "type": "object",
            "properties": {
                "every": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Only every Nth tick",
                }
            },
            "additionalProperties": False,
        },
        "payloadSchema": {
            "type": "object",
            "properties": {
                "tick": {"type": "integer"},
                "at": {"type": "string", "format": "date-time"},
            },
            "required": ["tick", "at"],
        },
    },
    {
        "name": "custom-event",
        "description": "Fires when the tool trigger-event is called. Push only, no replay.",
        "delivery": ["push"],
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "payloadSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}, "seq": {"type": "integer"}},
            "required": ["message"],
        },
    },
    {
        "name": "bad-event",
        "description": "Two events, the first of which breaks this payloadSchema.",
        "delivery": ["poll", "push"],
        "inputSchema": {"type": "object"},
        "payloadSchema": {
            "type": "object",
            "properties": {"level": {"type": "integer"}},
            "required": ["level"],
        },
    },
]
TYPES = {event["name"]: event for event in EVENT_TYPES}

TOOLS = [
    {
        "name": "trigger-event",
        "description": "Raises custom-event on every open push stream of it.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "count": {"type": "integer", "minimum": 1},
            },
            "required": ["message"],
        },
    },
    {
        "name": "exit-after",
        "description": "Exits the process once it has sent this many more events.",
        "inputSchema": {
            "type": "object",
            "properties": {"events": {"type": "integer", "minimum": 1}},
            "required": ["events"],
        },
    },
    {
        "name": "freeze-streams",
        "description": "Makes the open push streams go silent for good.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "terminate-streams",
        "description": "Ends the open push streams, as when access is revoked.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]

out_lock = threading.Lock()
state_lock = threading.Lock()
custom_streams = {}  # request id -> stream
exit_after = [None]  # events left before the process exits
freeze_generation = [0]  # streams opened before it are frozen
next_custom_id = [0]


class Refused(Exception):
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def write(message):
    """Writes one message as one line, in two pieces, flushed after each."""
    line = json.dumps(message, separators=(",", ":"))
    half = len(line) // 2
    with out_lock:
        sys.stdout.write(line[:half])
        sys.stdout.flush()
        sys.stdout.write(line[half:] + "\n")
        sys.stdout.flush()


def log(text):
    sys.stderr.write(f"events-fixture: {text}\n")
    sys.stderr.flush()


def result(body):
    body = dict(body)
    body["resultType"] = "complete"
    body["_meta"] = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
    return body


def now_tick():
    return max(0, (int(time.time() * 1000) - EPOCH_MS) // TICK_MS)


def tick_event(index):
    at = datetime.datetime.fromtimestamp(
        (EPOCH_MS + index * TICK_MS) / 1000, tz=datetime.timezone.utc
    )
    return {
        "eventId": f"tick-{index}",
        "name": "clock-tick",
        "timestamp": at.isoformat().replace("+00:00", "Z"),
        "data": {"tick": index, "at": at.isoformat().replace("+00:00", "Z")},
    }


def bad_events():
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")
    return [
        {"eventId": "bad-1", "name": "bad-event", "timestamp": stamp, "data": {"level": "high"}},
        {"eventId": "bad-2", "name": "bad-event", "timestamp": stamp, "data": {"level": 2}},
    ]


def event_type(params):
    name = params.get("name")
    if name not in TYPES:
        raise Refused(-32023, f"Unknown event: {name!r}", {"kind": "event"})
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise Refused(-32602, "arguments must be an object")
    schema = TYPES[name]["inputSchema"]
    if schema.get("additionalProperties") is False:
        unknown = sorted(set(arguments) - set(schema.get("properties", {})))
        if unknown:
            raise Refused(-32602, f"Unknown arguments for {name}: {', '.join(unknown)}")
    every = arguments.get("every", 1)
    if not isinstance(every, int) or every < 1:
        raise Refused(-32602, "every must be an integer of at least 1")
    return name, arguments


def tick_cursor(cursor):
    """The tick a clock-tick cursor names, refused when it names none that was."""
    try:
        index = int(cursor)
    except (TypeError, ValueError):
        raise Refused(-32602, f"Not a cursor of clock-tick: {cursor!r}")
    if index < 0 or index > now_tick():
        raise Refused(-32602, f"Not a cursor of clock-tick: {cursor!r}")
    return index


def ticks_from(cursor):
    """Where delivery starts after `cursor`: (the position before it, truncated)."""
    if cursor is None:
        return now_tick(), False
    position = tick_cursor(cursor)
    oldest = max(0, now_tick() - RETAIN + 1)
    if position + 1 < oldest:
        return oldest - 1, True
    return position, False


def poll(params):
    name, arguments = event_type(params)
    if "poll" not in TYPES[name]["delivery"]:
        raise Refused(-32026, f"{name} is not delivered by poll",
                      {"feature": "deliveryMode", "value": "poll"})
    cursor = params.get("cursor")
    max_events = params.get("maxEvents") or 100
    if name == "bad-event":
        if cursor is None:
            return result({"events": [], "cursor": "0", "truncated": False, "hasMore": False,
                           "nextPollMs": TICK_MS})
        if cursor not in ("0", "1", "2"):
            raise Refused(-32602, f"Not a cursor of bad-event: {cursor!r}")
        events = bad_events()[int(cursor):]
        return result({"events": events, "cursor": "2", "truncated": False, "hasMore": False,
                       "nextPollMs": TICK_MS})
    position, truncated = ticks_from(cursor)
    every = arguments.get("every", 1)
    events, last, head = [], position, now_tick()
    index = position + 1
    while index <= head and len(events) < max_events:
        if index % every == 0:
            events.append(tick_event(index))
        last = index
        index += 1
    return result({"events": events, "cursor": str(last), "truncated": truncated,
                   "hasMore": last < head, "nextPollMs": TICK_MS})


class Stream:
    """One events/stream request: its notifications name it by its id."""

    def __init__(self, request_id, name, arguments, cursor, emit=None):
        self.id = request_id
        self.name = name
        self.arguments = arguments
        self.cursor = cursor
        self.emit = emit or write
        self.cancelled = threading.Event()
        with state_lock:
            self.generation = freeze_generation[0]

    def frozen(self):
        with state_lock:
            return self.generation < freeze_generation[0]

    def send(self, method, params):
        if self.cancelled.is_set() or self.frozen():
            return False
        params = dict(params)
        params["_meta"] = {SUBSCRIPTION_ID: self.id}
        try:
            self.emit({"jsonrpc": "2.0", "method": method, "params": params})
        except OSError:  # over HTTP: the client closed the stream, which ends it
            self.cancelled.set()
            return False
        if method == "notifications/events/event":
            sent_an_event()
        return True

    def run(self):
        try:
            self.serve()
        except Exception as error:  # a stream that fails ends; the server keeps running
            log(f"stream {self.id} failed: {error!r}")
        finally:
            with state_lock:
                custom_streams.pop(self.id, None)

    def serve(self):
        heartbeat = HEARTBEAT_MS / 1000
        if self.name == "custom-event":
            with state_lock:
                custom_streams[self.id] = self
            self.send("notifications/events/active", {"cursor": None, "truncated": False})
            while not self.cancelled.wait(heartbeat):
                self.send("notifications/events/heartbeat", {"cursor": None})
            return
        if self.name == "bad-event":
            self.send("notifications/events/active", {"cursor": "0", "truncated": False})
            for index, event in enumerate(bad_events()[int(self.cursor or 0):]):
                self.send("notifications/events/event",
                          dict(event, cursor=str(int(self.cursor or 0) + index + 1)))
            while not self.cancelled.wait(heartbeat):
                self.send("notifications/events/heartbeat", {"cursor": "2"})
            return
        position, truncated = ticks_from(self.cursor)
        every = self.arguments.get("every", 1)
        self.send("notifications/events/active",
                  {"cursor": str(position), "truncated": truncated})
        last_beat = time.monotonic()
        while not self.cancelled.is_set():
            head = now_tick()
            while position < head and not self.cancelled.is_set():
                position += 1
                if position % every == 0:
                    if not self.send("notifications/events/event",
                                     dict(tick_event(position), cursor=str(position))):
                        break
            if time.monotonic() - last_beat >= heartbeat:
                self.send("notifications/events/heartbeat", {"cursor": str(position)})
                last_beat = time.monotonic()
            next_tick = (EPOCH_MS + (position + 1) * TICK_MS) / 1000 - time.time()
            until_beat = heartbeat - (time.monotonic() - last_beat)
            self.cancelled.wait(max(0.005, min(next_tick, until_beat)))


streams = {}  # request id -> Stream


def sent_an_event():
    with state_lock:
        if exit_after[0] is None:
            return
        exit_after[0] -= 1
        if exit_after[0] > 0:
            return
    log("exiting, as told")
    sys.stdout.flush()
    os._exit(0)


def new_stream(request_id, params, emit=None):
    """The stream an events/stream request opens, or its refusal."""
    name, arguments = event_type(params)
    if "push" not in TYPES[name]["delivery"]:
        raise Refused(-32026, f"{name} is not delivered by push",
                      {"feature": "deliveryMode", "value": "push"})
    cursor = params.get("cursor")
    if name == "clock-tick" and cursor is not None:
        tick_cursor(cursor)
    return Stream(request_id, name, arguments, cursor, emit)


def open_stream(request_id, params):
    stream = new_stream(request_id, params)
    streams[request_id] = stream
    threading.Thread(target=stream.run, daemon=True).start()


def call_tool(params):
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "trigger-event":
        message = arguments.get("message")
        if not isinstance(message, str):
            raise Refused(-32602, "message must be a string")
        count = arguments.get("count", 1)
        with state_lock:
            targets = list(custom_streams.values())
        for seq in range(count):
            for stream in targets:
                with state_lock:
                    next_custom_id[0] += 1
                    event_id = f"custom-{next_custom_id[0]}"
                stamp = datetime.datetime.now(datetime.timezone.utc).isoformat()
                stream.send("notifications/events/event", {
                    "eventId": event_id, "name": "custom-event",
                    "timestamp": stamp.replace("+00:00", "Z"),
                    "data": {"message": message, "seq": seq}, "cursor": None,
                })
        text = f"raised {count} custom-event on {len(targets)} stream(s)"
    elif name == "exit-after":
        with state_lock:
            exit_after[0] = int(arguments.get("events", 1))
        text = f"exiting after {exit_after[0]} more events"
    elif name == "freeze-streams":
        with state_lock:
            freeze_generation[0] += 1
        text = "the open streams are silent now"
    elif name == "terminate-streams":
        ended = [stream for stream in list(streams.values()) if not stream.cancelled.is_set()]
        for stream in ended:
            stream.send("notifications/events/terminated", {"error": {
                "code": -32024, "message": "Forbidden", "data": {"reason": "Access revoked"}}})
            stream.cancelled.set()
        text = f"terminated {len(ended)} stream(s)"
    else:
        raise Refused(-32602, f"Unknown tool: {name!r}")
    return result({"content": [{"type": "text", "text": text}], "isError": False})


def handle(message):
    method = message.get("method")
    params = message.get("params") or {}
    request_id = message.get("id")
    if request_id is None:
        if method == "notifications/cancelled":
            stream = streams.pop(params.get("requestId"), None)
            if stream is not None:
                stream.cancelled.set()
        return
    meta = params.get("_meta") or {}
    requested = meta.get("io.modelcontextprotocol/protocolVersion")
    if method == "initialize" or requested != VERSION:
        requested = requested or params.get("protocolVersion")
        raise Refused(-32022, f"This server speaks {VERSION} only",
                      {"supported": [VERSION], "requested": requested})
    if method == "server/discover":
        return result({
            "supportedVersions": [VERSION],
            "capabilities": {"tools": {"listChanged": False},
                             "extensions": {EXTENSION: {"listChanged": False}}},
        })
    if method == "ping":
        return result({})
    if method == "tools/list":
        return result({"tools": TOOLS})
    if method == "tools/call":
        return call_tool(params)
    if method == "events/list":
        return result({"events": EVENT_TYPES})
    if method == "events/poll":
        return poll(params)
    if method == "events/stream":
        open_stream(request_id, params)
        return None  # answered by its notifications, and never otherwise
    raise Refused(-32601, f"Method not found: {method}")


def answered(message):
    """The answer to `message`: a response, or None (a notification, an open stream)."""
    try:
        answer = handle(message)
        if answer is None:
            return None
        return {"jsonrpc": "2.0", "id": message["id"], "result": answer}
    except Refused as refused:
        error = {"code": refused.code, "message": refused.message}
        if refused.data is not None:
            error["data"] = refused.data
        return {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
    except Exception as error:  # the server keeps running
        log(f"failed: {error!r}")
        if message.get("id") is None:
            return None
        return {"jsonrpc": "2.0", "id": message["id"],
                "error": {"code": -32603, "message": "Internal error"}}


def serve_stdio():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            write({"jsonrpc": "2.0", "id": None,
                   "error": {"code": -32700, "message": "Parse error"}})
            continue
        answer = answered(message)
        if answer is not None:
            write(answer)
    # stdin closed: the client is gone.
    with state_lock:
        for stream in list(streams.values()):
            stream.cancelled.set()


def serve_http(port):
    """Streamable HTTP, stateless: one POST per message at /mcp; an events/stream is answered
    with an event stream carrying its notifications until the client closes it."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, status, body=None):
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            if self.path != "/mcp":
                return self.reply(404)
            length = int(self.headers.get("Content-Length") or 0)
            try:
                message = json.loads(self.rfile.read(length))
            except ValueError:
                return self.reply(400, {"jsonrpc": "2.0", "id": None,
                                        "error": {"code": -32700, "message": "Parse error"}})
            if message.get("id") is None:
                handle(message)
                return self.reply(202)
            if message.get("method") == "events/stream":
                return self.stream(message)
            self.reply(200, answered(message))

        def stream(self, message):
            lock = threading.Lock()

            def emit(notification):
                frame = f"data: {json.dumps(notification)}\n\n".encode()
                with lock:
                    half = len(frame) // 2
                    self.wfile.write(frame[:half])
                    self.wfile.flush()
                    self.wfile.write(frame[half:])
                    self.wfile.flush()

            try:
                stream = new_stream(message["id"], message.get("params") or {}, emit)
            except Refused:
                return self.reply(200, answered(message))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.flush()
            stream.run()  # until the client closes the stream

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    log(f"listening on http://127.0.0.1:{port}/mcp")
    server.serve_forever()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        serve_http(int(sys.argv[2]))
    else:
        serve_stdio()

"""An MCP server whose events are delivered only by webhook, as the servers ChatGPT subscribes to
deliver them: PyPI `mcp-webhook-events` 0.2.0 on the official Python SDK (`mcp` 2.3), served over
Streamable HTTP. Its one event type, `ticket.updated`, is filtered by `queue`; the tool
`update_ticket` publishes one and delivers it at once (signed, to each subscription's callback).
`subscriptions` tells a test each live subscription's callback URL and secret, so that it can
forge deliveries the gateway must refuse.

Run as `python webhook_events_server.py PORT STORE`. Loopback callbacks over http are allowed
(`allow_insecure_for_tests`), as a test on 127.0.0.1 needs.
"""

import sqlite3
import sys

import uvicorn
from mcp.server import MCPServer
from mcp_webhook_events import EventDefinition, McpEvents, SafeHttp

port, store = int(sys.argv[1]), sys.argv[2]

server = MCPServer("tickets")
events = McpEvents(
    server,
    store=store,
    definitions=[
        EventDefinition(
            name="ticket.updated",
            description="A ticket of a queue changed status.",
            input_schema={
                "type": "object",
                "properties": {"queue": {"type": "string"}},
                "required": ["queue"],
                "additionalProperties": False,
            },
            payload_schema={
                "type": "object",
                "properties": {
                    "queue": {"type": "string"},
                    "ticket": {"type": "string"},
                    "status": {"type": "string"},
                },
                "required": ["queue", "ticket", "status"],
            },
        )
    ],
    http=SafeHttp(allow_insecure_for_tests=True, timeout=5.0),
)
events.install()


@server.tool()
def update_ticket(queue: str, ticket: str, status: str) -> str:
    """Changes a ticket's status: its queue's subscribers are told at once."""
    queued = events.publish(
        "ticket.updated", {"queue": queue, "ticket": ticket, "status": status}
    )
    delivered = events.deliver_pending()
    return f"queued {queued}, delivered {delivered['delivered']}, failed {delivered['failed']}"


@server.tool()
def subscriptions() -> list:
    """Every live subscription: its id, arguments, callback URL and secret."""
    db = sqlite3.connect(store)
    rows = db.execute("SELECT id, arguments, url, secret FROM subscriptions").fetchall()
    db.close()
    return [
        {"id": id, "arguments": arguments, "url": url, "secret": secret}
        for (id, arguments, url, secret) in rows
    ]


app = server.streamable_http_app(stateless_http=True, json_response=True)
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")

"""A server of the Python MCP SDK (`mcp` on PyPI, `MCPServer`) whose tools ask the client for
input the way the stateless revision (2026-07-28) does: they answer `input_required`
(multi-round-trip requests) and finish when the call comes back with the answers.

Usage: python_asking_peer.py stdio | python_asking_peer.py http PORT
"""
import json
import sys

from mcp_types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("python-asking-peer")

FORM = {
    "type": "object",
    "properties": {"name": {"type": "string", "default": "Ada"}},
    "required": ["name"],
}


def asked_name(message: str) -> InputRequiredResult:
    return InputRequiredResult(
        input_requests={
            "who": ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=FORM))
        },
        request_state="asked-once",
    )


@server.tool()
def greet(ctx: Context) -> str | InputRequiredResult:
    """Asks the person's name, then greets them."""
    answers = ctx.input_responses
    if not answers:
        return asked_name("What is your name?")
    if ctx.request_state != "asked-once":
        return f"the state came back as {ctx.request_state!r}"
    answer = answers["who"]
    action = answer.get("action") if isinstance(answer, dict) else getattr(answer, "action", None)
    content = answer.get("content") if isinstance(answer, dict) else getattr(answer, "content", None)
    if action != "accept":
        return f"not greeted: {action}"
    return "accepted " + json.dumps(content, sort_keys=True)


@server.tool()
def nag(ctx: Context) -> str | InputRequiredResult:
    """Asks again each time it is answered: it never finishes."""
    return asked_name("And now?")


@server.tool()
def busy(ctx: Context) -> str | InputRequiredResult:
    """Sheds load once: gives only a state to send back, then answers."""
    if ctx.request_state == "later":
        return "done after a retry"
    return InputRequiredResult(request_state="later")


@server.tool()
def summarize(ctx: Context) -> str | InputRequiredResult:
    """Asks the client's model (sampling) to write a summary."""
    answers = ctx.input_responses
    if not answers:
        return InputRequiredResult(
            input_requests={
                "model": CreateMessageRequest(
                    params=CreateMessageRequestParams(
                        messages=[SamplingMessage(role="user", content=TextContent(type="text", text="Summarize"))],
                        max_tokens=50,
                    )
                )
            }
        )
    answer = answers["model"]
    content = answer.get("content") if isinstance(answer, dict) else getattr(answer, "content", None)
    text = content.get("text") if isinstance(content, dict) else getattr(content, "text", None)
    return f"the model said: {text}"


if sys.argv[1] == "stdio":
    server.run("stdio")
else:
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), stateless_http=True)

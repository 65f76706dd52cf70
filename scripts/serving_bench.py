"""What the serving benchmarks share (scripts/bench-openapi-serving.py and
scripts/bench-graphql-serving.py): a free port, an input a tool's schema allows, a server's peak
memory."""

import os
import socket


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def instance(schema, defs, depth=0):
    """The first value `schema` allows, as far as this simple walk sees it."""
    if depth > 12 or not isinstance(schema, dict):
        return "a"
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return instance(defs.get(name, {}), defs, depth + 1)
    for key in ("const",):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("oneOf", "anyOf"):
        if schema.get(key):
            options = [o for o in schema[key] if o.get("type") != "null"] or schema[key]
            return instance(options[0], defs, depth + 1)
    if schema.get("allOf"):
        merged = {"type": "object", "properties": {}, "required": []}
        for part in schema["allOf"]:
            part = defs.get(part["$ref"].rsplit("/", 1)[-1], {}) if "$ref" in part else part
            merged["properties"].update(part.get("properties", {}))
            merged["required"] += part.get("required", [])
        return instance(merged, defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {
            name: instance(props.get(name, {}), defs, depth + 1)
            for name in schema.get("required", [])
        }
    if kind == "array":
        count = max(1, schema.get("minItems", 1))
        return [instance(schema.get("items", {}), defs, depth + 1)] * count
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return True
    formats = {
        "date-time": "2024-01-01T00:00:00Z",
        "date": "2024-01-01",
        "email": "a@example.com",
        "uri": "https://example.com",
        "uuid": "123e4567-e89b-12d3-a456-426614174000",
        "ipv4": "127.0.0.1",
    }
    text = formats.get(schema.get("format"), "a")
    return text * max(1, schema.get("minLength", 1)) if text == "a" else text


def peak_rss_kb(parent, other):
    """The largest VmHWM among the children of `parent` but `other` (the API mock): the server."""
    peak = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == other:
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            if ppid != parent:
                continue
            with open(f"/proc/{entry}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
        except (OSError, ValueError, IndexError):
            continue
    return peak

#!/usr/bin/env python3
"""A recording judge of HTTP requests against one OpenAPI 3.0 document, with PyPI openapi-core.

    openapi-judge.py DOCUMENT [--port PORT]

Serves on 127.0.0.1 (PORT, or a free one when 0 or absent) and prints
`openapi-judge listening on 127.0.0.1:PORT` once the document is loaded. For Stripe's document,
on which Prism never starts (toolkit-http/tests/http/stripe_judge.rs). Every request is
validated by openapi-core (path, method, query, headers, security, body):

- invalid: 422, the validator's reasons as text;
- valid: 200 with an answer built from the operation's first 2xx JSON response (see `instance`),
  itself checked by openapi-core's response validator; the header `X-Judge-Answer-Valid` says
  whether it fits the document (`true`/`false`, and why not in `X-Judge-Answer-Reason`).

openapi-core 0.23 reads a `deepObject` one bracket deep (`a[b]=c`) and no list; Stripe's queries
and form bodies nest (`items[0][price]=p`, `expand[0]=x`), so the `deepObject` reader here is
ours: brackets nested as Rails and Stripe read them, a container whose keys are all indices read
as a list. openapi-core still casts and validates what it reads.
"""

import argparse
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlsplit

from openapi_core import Config, OpenAPI
from openapi_core.casting.schemas import oas30_write_schema_casters_factory
from openapi_core.datatypes import RequestParameters
from openapi_core.deserializing.styles import StyleDeserializersFactory, style_deserializers
from openapi_core.templating.paths.finders import APICallPathFinder
from werkzeug.datastructures import Headers, ImmutableMultiDict

# Deeper than this, an answer instance stops (Stripe's schemas nest through expandable objects).
MAX_DEPTH = 12


def deep_object_loads(explode, name, schema_type, location):
    """A `deepObject` parameter (or form property) `name` from the pairs of `location`."""
    root = {}
    found = False
    for key, value in location.items(multi=True):
        if not key.startswith(name + "["):
            continue
        found = True
        # `a[b][0]` -> ["b", "0"]; `a[]` -> [""], an item appended.
        parts = re.findall(r"\[([^\[\]]*)\]", key[len(name):])
        node = root
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            if part == "":
                part = str(len(node))
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
    if not found:
        if name in location:
            return location[name]  # the flat form: Stripe's `""` that empties a field
        raise KeyError(name)
    return as_lists(root)


def as_lists(node):
    """Containers whose keys are 0..n-1 as lists, all the way down."""
    if not isinstance(node, dict):
        return node
    node = {key: as_lists(value) for key, value in node.items()}
    if node and all(key.isdigit() for key in node):
        indices = sorted(node, key=int)
        if [int(key) for key in indices] == list(range(len(indices))):
            return [node[key] for key in indices]
    return node


class Judged:
    """The request as openapi-core's `Request` protocol reads it."""

    def __init__(self, host_url, handler, body):
        url = urlsplit(handler.path)
        self.host_url = host_url
        self.path = url.path
        self.method = handler.command.lower()
        self.body = body
        self.content_type = (handler.headers.get("Content-Type") or "").lower()
        cookies = SimpleCookie(handler.headers.get("Cookie") or "")
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(parse_qsl(url.query, keep_blank_values=True)),
            header=Headers(list(handler.headers.items())),
            cookie=ImmutableMultiDict({key: morsel.value for key, morsel in cookies.items()}),
            path={},
        )


class Answer:
    """An answer as openapi-core's `Response` protocol reads it."""

    def __init__(self, data, status_code):
        self.data = data
        self.status_code = status_code
        self.headers = Headers({"Content-Type": "application/json"})
        self.content_type = "application/json"


def resolve(document, schema):
    """`schema` with its `$ref`s (local ones, as Stripe's are) followed."""
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 64:
        target = document
        for token in schema["$ref"].lstrip("#/").split("/"):
            target = target[token.replace("~1", "/").replace("~0", "~")]
        schema = target
        seen += 1
    return schema


def instance(document, schema, depth=0):
    """An answer for `schema`, the smallest the schema allows: its example if it has one; else
    null where it is nullable, the first enum value, the first variant of `anyOf`/`oneOf` that is
    not an object (Stripe's expandable fields: the id, not the object), the parts of `allOf`
    merged, required properties only, lists empty (or `minItems` long), and plain scalars of the
    string's format within the number's bounds."""
    schema = resolve(document, schema)
    if not isinstance(schema, dict):
        return None
    if "example" in schema:
        return schema["example"]
    if schema.get("nullable") or depth > MAX_DEPTH:
        return None
    if "enum" in schema:
        return schema["enum"][0]
    for choice in ("anyOf", "oneOf"):
        if choice in schema:
            variants = [resolve(document, variant) for variant in schema[choice]]
            simple = [v for v in variants if v.get("type") not in ("object", None)]
            return instance(document, (simple or variants)[0], depth + 1)
    if "allOf" in schema:
        merged = {}
        for part in schema["allOf"]:
            value = instance(document, part, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if kind == "object":
        properties = schema.get("properties", {})
        return {
            name: instance(document, properties.get(name, {}), depth + 1)
            for name in schema.get("required", [])
        }
    if kind == "array":
        return [
            instance(document, schema.get("items", {}), depth + 1)
            for _ in range(schema.get("minItems", 0))
        ]
    if kind in ("integer", "number"):
        return max(schema.get("minimum", 0), 0)
    if kind == "boolean":
        return False
    formats = {"date-time": "2024-01-02T03:04:05Z", "date": "2024-01-02", "uri": "https://example.com"}
    text = formats.get(schema.get("format"), "a")
    pattern = schema.get("pattern")
    if pattern and not re.search(pattern, text):
        # A pattern that is a literal between its anchors (Stripe's `^/v1/customers`) is its match.
        literal = re.sub(r"^\^|\$$", "", pattern)
        text = literal if re.search(pattern, literal) else text
    return text + "a" * max(schema.get("minLength", 0) - len(text), 0)


def success(document, operation):
    """The status and JSON schema of the operation's first 2xx answer, or None."""
    for status, response in sorted(operation.get("responses", {}).items()):
        if status.startswith("2"):
            media = resolve(document, response).get("content", {}).get("application/json")
            if media is not None:
                return int(status), media.get("schema", {})
    return None


def serve(path, port):
    """Loads the document at `path` once and serves its judge on 127.0.0.1:`port` (0: any)."""
    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    # The spec itself is not validated (minutes on Stripe's); the nested deepObject reader above.
    styles = StyleDeserializersFactory(
        oas30_write_schema_casters_factory,
        style_deserializers={**style_deserializers, "deepObject": deep_object_loads},
    )
    openapi = OpenAPI.from_dict(
        document, config=Config(spec_validator_cls=None, style_deserializers_factory=styles)
    )
    # The judge stands in for the document's first server: requests are read as sent there.
    server_url = urlsplit((document.get("servers") or [{"url": "http://localhost"}])[0]["url"])
    host_url = f"{server_url.scheme}://{server_url.netloc}"
    finder = APICallPathFinder(openapi.spec)
    # Answers are made once per operation and reused: they depend on the operation alone.
    answers = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass  # one line per request would only fill the test's pipe

        def reply(self, status, body, headers=()):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def judge(self):
            length = int(self.headers.get("Content-Length") or 0)
            request = Judged(host_url, self, self.rfile.read(length) if length else None)
            try:
                openapi.validate_request(request)
            except Exception as error:  # every kind of refusal is the request's miss
                reasons = [str(error)] + [str(cause) for cause in getattr(error, "schema_errors", [])]
                cause = error.__cause__
                while cause is not None:
                    reasons.append(str(cause))
                    reasons += [str(e) for e in getattr(cause, "schema_errors", [])]
                    cause = cause.__cause__
                # One line, short: the test prints it beside the call.
                reason = re.sub(r"\s+", " ", "; ".join(dict.fromkeys(reasons)))[:600]
                return self.reply(422, reason.encode(), [("Content-Type", "text/plain")])
            operation = finder.find(request.method, request.host_url + request.path).operation
            key = (request.method, operation.read_value().get("operationId"))
            with lock:
                known = answers.get(key)
            if known is None:
                try:
                    known = self.answer(request, operation.read_value())
                except Exception as error:  # a schema the generator cannot follow: said, not hidden
                    print(f"openapi-judge: no answer made: {error!r}", file=sys.stderr, flush=True)
                    known = 500, repr(error).encode(), [("Content-Type", "text/plain")]
                with lock:
                    answers[key] = known
            self.reply(*known)

        def answer(self, request, operation):
            """The status, body and headers of the answer to a valid request of `operation`."""
            found = success(document, operation)
            if found is None:
                return 204, b"", []
            status, schema = found
            body = json.dumps(instance(document, schema)).encode()
            try:
                openapi.validate_response(request, Answer(body, status))
                verdict = [("X-Judge-Answer-Valid", "true")]
            except Exception as error:
                reason = re.sub(r"\s+", " ", str(error))[:300]
                # Said once per operation: the test's output shows which answers go unjudged.
                print(f"openapi-judge: the answer of {operation.get('operationId')} does not fit: {reason}",
                      file=sys.stderr, flush=True)
                verdict = [("X-Judge-Answer-Valid", "false"), ("X-Judge-Answer-Reason", reason)]
            return status, body, [("Content-Type", "application/json")] + verdict

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = judge

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"openapi-judge listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("document")
    arguments.add_argument("--port", type=int, default=0)
    options = arguments.parse_args()
    try:
        serve(options.document, options.port)
    except KeyboardInterrupt:
        sys.exit(0)

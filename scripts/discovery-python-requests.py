#!/usr/bin/env python3
"""Prints the requests Google's official Python client builds for Discovery methods, offline.

Reads from stdin a JSON object {"documents": DIR, "cases": [{"document": "pubsub.v1.json",
"method": "pubsub.projects.topics.publish", "args": {WIRE_NAME: VALUE, ..., "body": {...}}}]}
and writes to stdout a JSON list, one object per case, {"method", "uri", "body"} (the body
parsed as JSON, or null), or {"error": TEXT} when the client refuses the arguments.

Each document is built with googleapiclient.discovery.build_from_document and an HttpMock, so
nothing is sent and no credential is needed; each method is found by its `id` in the
document's resources, and each argument named as the client names it (key2param). Run with
the venv scripts/install-test-peers makes: target/peers/google-api-python-client/bin/python.
"""

import json
import os
import sys

from googleapiclient.discovery import build_from_document, fix_method_name, key2param
from googleapiclient.http import HttpMock


def find(resource, method_id, trail):
    """The resource names and the method name of the method `method_id`, or None."""
    for name, method in resource.get("methods", {}).items():
        if method.get("id") == method_id:
            return trail + [name]
    for name, nested in resource.get("resources", {}).items():
        found = find(nested, method_id, trail + [name])
        if found:
            return found
    return None


def request(documents, services, case):
    path = os.path.join(documents, case["document"])
    if path not in services:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
        services[path] = (document, build_from_document(document, http=HttpMock(None, {"status": "200"})))
    document, service = services[path]
    trail = find(document, case["method"], [])
    if trail is None:
        return {"error": "no method %s" % case["method"]}
    target = service
    for resource in trail[:-1]:
        target = getattr(target, fix_method_name(resource))()
    method = getattr(target, fix_method_name(trail[-1]))
    args = {key2param(name): value for name, value in case["args"].items()}
    try:
        built = method(**args)
    except (TypeError, ValueError) as error:
        return {"error": str(error)}
    body = json.loads(built.body) if built.body else None
    return {"method": built.method, "uri": built.uri, "body": body}


def main():
    given = json.load(sys.stdin)
    services = {}
    answers = [request(given["documents"], services, case) for case in given["cases"]]
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()

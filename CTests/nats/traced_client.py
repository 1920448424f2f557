#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A plain NATS client with OpenTelemetry (nats-py and the W3C propagator, no qtbus)
for test_nats_headers.c: what a traced service at the other end of the bridge sees.

    traced_client.py roundtrip URL TO SUBJECT_BACK
        subscribe to SUBJECT_BACK; start a span, publish on TO with its context injected (traceparent, tracestate, baggage) and
        the headers Qtbus-Forged and qtbus-lower (which the bridge must not pass on);
        print "sent <traceparent>"; for the message that comes back print
        "back <traceparent> <tracestate> <baggage>", then "trace <id sent> <id back>"
        as the propagator extracts them from each side's headers
    traced_client.py request URL SUBJECT DATA
        request with a span's traceparent; print "sent <traceparent>", then
        "reply <data> headers <names, or none>"
    traced_client.py listen URL SUBJECT
        print "ready", then for one message "<data> <name>=<value>..." (sorted)

Each mode gives up after 10 s (exit 1), so a test never hangs on it.
"""
import asyncio
import sys

import nats
from opentelemetry import baggage, context, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

trace.set_tracer_provider(TracerProvider())
tracer = trace.get_tracer("qtbus.tests")
propagator = CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()])


def trace_id(headers):
    """The trace id the W3C propagator extracts from headers, in hex ("none" if none)."""
    span = trace.get_current_span(propagator.extract(carrier=dict(headers or {})))
    ctx = span.get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else "none"


def started_span_headers(name):
    """Headers carrying a new span's context (with a tracestate and a baggage entry)."""
    ctx = baggage.set_baggage("userId", "alice")
    token = context.attach(ctx)
    try:
        with tracer.start_as_current_span(name):
            headers = {}
            propagator.inject(headers)
    finally:
        context.detach(token)
    headers["tracestate"] = "congo=t61rcWkgMzE"
    return headers


async def main(mode, url, *rest):
    nc = await nats.connect(url)
    try:
        if mode == "roundtrip":
            to, back = rest
            got = asyncio.Queue()
            await nc.subscribe(back, cb=got.put)
            await nc.flush()
            headers = started_span_headers("python-publish")
            sent = dict(headers, **{"Qtbus-Forged": "1", "qtbus-lower": "1"})
            await nc.publish(to, b"order", headers=sent)
            await nc.flush()
            print("sent", headers["traceparent"], flush=True)
            msg = await got.get()
            h = msg.headers or {}
            print("back", h.get("traceparent", "-"), h.get("tracestate", "-"), h.get("baggage", "-"), flush=True)
            print("trace", trace_id(headers), trace_id(h), flush=True)
        elif mode == "request":
            subject, data = rest
            headers = started_span_headers("python-request")
            print("sent", headers["traceparent"], flush=True)
            msg = await nc.request(subject, data.encode(), timeout=5, headers=headers)
            names = ",".join(sorted(msg.headers)) if msg.headers else "none"
            print("reply", msg.data.decode(errors="replace"), "headers", names, flush=True)
        elif mode == "listen":
            (subject,) = rest
            got = asyncio.Queue()
            await nc.subscribe(subject, cb=got.put)
            await nc.flush()
            print("ready", flush=True)
            msg = await got.get()
            pairs = " ".join(f"{k}={v}" for k, v in sorted((msg.headers or {}).items()))
            print(msg.data.decode(errors="replace"), pairs, flush=True)
        else:
            raise SystemExit(f"traced_client.py: unknown mode {mode}")
    finally:
        await nc.close()


if __name__ == "__main__":
    try:
        asyncio.run(asyncio.wait_for(main(*sys.argv[1:]), 10))
    except asyncio.TimeoutError:
        print("traced_client.py: gave up after 10 s", file=sys.stderr)
        sys.exit(1)

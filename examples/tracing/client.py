#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""examples/tracing/client.py -- the Python end of the tracing example (README.md beside
this file): starts a span, publishes an Order with its W3C context (traceparent,
tracestate, baggage) as NATS headers on the subject the qtbus service imports, waits for
the service's Shipped, and extracts the context from its headers with the same
OpenTelemetry propagator.  Prints the trace id at each end; exits 1 if they differ.

    client.py nats://127.0.0.1:4222 [count]     (pip install nats-py opentelemetry-sdk)
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
tracer = trace.get_tracer("qtbus.example.tracing")
propagator = CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()])


def hop(name, span_context, ctx=None):
    user = baggage.get_baggage("userId", ctx) if ctx is not None else None
    print(f"{name:<28} trace {span_context.trace_id:032x}" + (f" (baggage: userId={user})" if user else ""),
          flush=True)


async def main(url, count=1):
    nc = await nats.connect(url)
    shipped = asyncio.Queue()
    # The service's bridge publishes Shipped on <prefix>.e.<subtype or _>.Shipped.
    await nc.subscribe("qtbus.e.*.Shipped", cb=shipped.put)
    await nc.flush()
    same = True
    for n in range(int(count)):
        token = context.attach(baggage.set_baggage("userId", "alice"))
        try:
            with tracer.start_as_current_span("place-order") as span:
                headers = {"tracestate": "shop=python"}
                propagator.inject(headers)
                hop("python publish Order", span.get_span_context(), context.get_current())
                await nc.publish("qtbus.e._.Order", f"order-{n}".encode(), headers=headers)
                sent = span.get_span_context().trace_id
        finally:
            context.detach(token)
        msg = await shipped.get()
        ctx = propagator.extract(carrier=dict(msg.headers or {}))
        back = trace.get_current_span(ctx).get_span_context()
        hop(f"python got {msg.data.decode()}", back, ctx)
        same = same and back.is_valid and back.trace_id == sent
    await nc.close()
    print("one trace end to end" if same else "the trace did not come back", flush=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(asyncio.wait_for(main(*sys.argv[1:]), 20)))

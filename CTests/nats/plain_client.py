#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A plain NATS client (nats-py, no qtbus) for test_nats_interop.c: what any NATS
program sees of qtbus's subjects, requests and replies.

    plain_client.py listen  URL SUBJECT COUNT   print "ready", then "<subject> <data>"
                                                for COUNT messages (headers not shown)
    plain_client.py serve   URL SUBJECT REPLY COUNT
                                                answer COUNT requests with REPLY's bytes
    plain_client.py request URL SUBJECT DATA    print the first reply's data, or
                                                "no responders" / "timeout"
    plain_client.py publish URL SUBJECT DATA    publish DATA, flushed

Each mode gives up after 10 s (exit 1), so a test never hangs on it.
"""
import asyncio
import sys

import nats
from nats.errors import NoRespondersError, TimeoutError


async def main(mode, url, subject, *rest):
    nc = await nats.connect(url)
    try:
        if mode == "listen":
            count = int(rest[0])
            got = asyncio.Queue()
            await nc.subscribe(subject, cb=got.put)
            await nc.flush()
            print("ready", flush=True)
            for _ in range(count):
                msg = await got.get()
                print(msg.subject, msg.data.decode(errors="replace"), flush=True)
        elif mode == "serve":
            reply, count = rest[0].encode(), int(rest[1])
            done = asyncio.Event()
            served = 0

            async def answer(msg):
                nonlocal served
                await msg.respond(reply)
                served += 1
                if served == count:
                    done.set()

            await nc.subscribe(subject, cb=answer)
            await nc.flush()
            print("ready", flush=True)
            await done.wait()
            await nc.flush()
            print("served", served, flush=True)
        elif mode == "request":
            try:
                msg = await nc.request(subject, rest[0].encode(), timeout=5)
                print(msg.data.decode(errors="replace"), flush=True)
            except NoRespondersError:
                print("no responders", flush=True)
            except TimeoutError:
                print("timeout", flush=True)
        elif mode == "publish":
            await nc.publish(subject, rest[0].encode())
            await nc.flush()
        else:
            raise SystemExit(f"plain_client.py: unknown mode {mode}")
    finally:
        await nc.close()


if __name__ == "__main__":
    try:
        asyncio.run(asyncio.wait_for(main(*sys.argv[1:]), 10))
    except asyncio.TimeoutError:
        print("plain_client.py: gave up after 10 s", file=sys.stderr)
        sys.exit(1)

#!/usr/bin/env python3
"""Counts atomic explosions per hour from Fogblast's public event stream.

An outside consumer of the stream (docs/events.md), using nothing of
Fogblast's: it reads the JSON subject of atomic moves through an ordered
JetStream consumer of its own, from a point in time, drops events it has
seen (delivery is at least once; the event id is the key) and prints one
line per hour:

    2026-12-01T18:00Z 412

    pip install nats-py
    python3 examples/explosions_per_hour.py --since-hours 24

It runs until interrupted, printing the counts every --report-s seconds,
or stops by itself once the stream has been quiet for --idle-exit-s.
"""

import argparse
import asyncio
import collections
import datetime
import json

import nats
from nats.js.api import ConsumerConfig, DeliverPolicy


def hour_of(at_ms):
    at = datetime.datetime.fromtimestamp(at_ms / 1000, tz=datetime.timezone.utc)
    return at.strftime("%Y-%m-%dT%H:00Z")


def report(counts):
    for hour in sorted(counts):
        print(f"{hour} {counts[hour]}", flush=True)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nats", default="nats://127.0.0.1:4222")
    parser.add_argument("--stream", default="FOGBLAST_GAMES_PUBLIC", help="the public events' stream")
    parser.add_argument("--subject-prefix", default="", help="the deployment's subject prefix, with its trailing dot")
    parser.add_argument("--since-hours", type=float, default=24.0)
    parser.add_argument("--idle-exit-s", type=float, default=0, help="stop once nothing arrived for this long (0: never)")
    parser.add_argument("--report-s", type=float, default=60.0)
    args = parser.parse_args()

    start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=args.since_hours)
    nc = await nats.connect(args.nats)
    js = nc.jetstream()
    config = ConsumerConfig(
        deliver_policy=DeliverPolicy.BY_START_TIME,
        opt_start_time=start.isoformat().replace("+00:00", "Z"),
    )
    subject = f"{args.subject_prefix}games.public.json.atomic.move"
    sub = await js.subscribe(subject, stream=args.stream, ordered_consumer=True, config=config)

    counts = collections.Counter()
    seen = set()
    last_report = asyncio.get_running_loop().time()
    while True:
        timeout = args.idle_exit_s if args.idle_exit_s > 0 else args.report_s
        try:
            message = await sub.next_msg(timeout=timeout)
        except nats.errors.TimeoutError:
            if args.idle_exit_s > 0:
                break
            message = None
        if message is not None:
            event = json.loads(message.data)
            if event["event_id"] not in seen:
                seen.add(event["event_id"])
                if event.get("moved", {}).get("exploded"):
                    counts[hour_of(event["at_ms"])] += 1
        now = asyncio.get_running_loop().time()
        if args.idle_exit_s == 0 and now - last_report >= args.report_s:
            report(counts)
            last_report = now
    report(counts)
    await nc.close()


if __name__ == "__main__":
    asyncio.run(main())

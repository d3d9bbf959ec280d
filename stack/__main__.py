"""CLI: ``python -m stack start|stop|status`` (see ``python -m stack --help``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import stack
from stack.procs import DEFAULT_STATE_DIR, StackError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m stack", description="Local Kafka (KRaft) + SecantusDB stack for development and tests."
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--state-dir", type=Path, default=DEFAULT_STATE_DIR, help="data, logs and pid files (default: %(default)s)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_start = sub.add_parser("start", parents=[common], help="start Kafka and SecantusDB (idempotent)")
    p_start.add_argument("--kafka-port", type=int, default=9092)
    p_start.add_argument("--mongo-port", type=int, default=27017)
    p_start.add_argument("--no-kafka", dest="kafka", action="store_false", help="do not start Kafka")
    p_start.add_argument("--no-mongo", dest="mongo", action="store_false", help="do not start SecantusDB")
    p_stop = sub.add_parser("stop", parents=[common], help="stop both services (data is kept)")
    p_stop.add_argument("--timeout", type=float, default=20.0, help="seconds before SIGKILL (default: %(default)s)")
    sub.add_parser("status", parents=[common], help="show what runs; exit 3 if a service is not running")
    return parser


def _status(state_dir: Path) -> int:
    broker, server = stack.services(state_dir)
    print(f"state dir: {broker.state_dir}")
    all_up = True
    for service in (broker, server):
        pid = service.pid
        if pid is None:
            all_up = False
            line = "stopped"
        else:
            answering = "answering" if service.is_ready() else "NOT answering"
            line = f"running (pid {pid}), {answering}"
        print(f"{service.name:6} {service.address:22} {line}")
        print(f"       log: {service.log_path}")
    if all_up:
        print(f"KAFKA_BOOTSTRAP={broker.bootstrap}")
        print(f"MONGO_URI={server.uri}")
    return 0 if all_up else 3


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "start":
            endpoints = stack.start(
                args.state_dir, args.kafka_port, args.mongo_port, kafka=args.kafka, mongo=args.mongo
            )
            if args.kafka:
                print(f"KAFKA_BOOTSTRAP={endpoints.kafka_bootstrap}")
            if args.mongo:
                print(f"MONGO_URI={endpoints.mongo_uri}")
            print(f"logs: {args.state_dir.resolve() / 'logs'}")
            return 0
        if args.command == "stop":
            stack.stop(args.state_dir, args.timeout)
            print(f"stack: stopped ({args.state_dir.resolve()})")
            return 0
        return _status(args.state_dir)
    except StackError as exc:
        print(f"stack: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stack: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A real S3-compatible server on a loopback port, for knowcode's shared-store tests and
benchmarks: moto's server (PyPI `moto[server]`), with authentication enforced. It creates an
IAM user with full access and its key, and a bucket, writes the environment a client needs to
ENV_FILE (shell `export` lines), and serves until stdin closes or it is signalled.

    python scripts/loopback-s3.py ENV_FILE [--bucket NAME]

Why moto: it comes from PyPI (the test suite already has a Python venv), runs in-process with
no Docker and no Java, implements S3's conditional writes (If-None-Match / If-Match) that the
shared store's publication relies on, and can enforce signatures, so bad credentials are
refused the way a real endpoint refuses them.
"""
import argparse
import os
import signal
import socket
import sys
import threading

# Requests moto answers before it enforces authentication: create the user, its policy, its
# key and the bucket. Everything after must be signed with that key.
SETUP_REQUESTS = 4


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("env_file")
    parser.add_argument("--bucket", default="knowcode-test")
    args = parser.parse_args()

    os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = str(SETUP_REQUESTS)
    # Setup calls are unsigned-in-effect; any placeholder key gets through the first four.
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "setup")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "setup")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    import boto3
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1")
    iam.create_user(UserName="knowcode")
    iam.put_user_policy(
        UserName="knowcode",
        PolicyName="all",
        PolicyDocument='{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}',
    )
    key = iam.create_access_key(UserName="knowcode")["AccessKey"]
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(
        Bucket=args.bucket
    )
    lines = {
        "KNOWCODE_TEST_S3_ENDPOINT": endpoint,
        "KNOWCODE_TEST_S3_BUCKET": args.bucket,
        "KNOWCODE_TEST_S3_KEY_ID": key["AccessKeyId"],
        "KNOWCODE_TEST_S3_SECRET": key["SecretAccessKey"],
    }
    tmp = args.env_file + ".part"
    with open(tmp, "w") as f:
        for name, value in lines.items():
            f.write(f"export {name}='{value}'\n")
    os.replace(tmp, args.env_file)
    print(f"loopback S3 on {endpoint}, bucket {args.bucket}", file=sys.stderr)

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    stop.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs every test of a CTest build directory under a wrapper command (valgrind...).

    ctest-under.py BUILD_DIR [--timeout S] [-R REGEX] -- WRAPPER [ARGS...]

Reads the tests from `ctest --show-only=json-v1`, so it works however the project
declares them (ctest's own memcheck mode needs include(CTest) in that project).  Each
test runs with its WORKING_DIRECTORY and ENVIRONMENT; WILL_FAIL is honoured.  Prints one
line per test and a summary; exits 1 if any test failed or timed out.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("--timeout", type=float, default=900.0, help="per test, seconds")
    parser.add_argument("-R", dest="regex", default=None, help="only tests whose name matches")
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        parser.error("missing wrapper command after --")
    split = argv.index("--")
    args = parser.parse_args(argv[:split])
    wrapper = argv[split + 1:]

    out = subprocess.run(["ctest", "--test-dir", args.build_dir, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    tests = json.loads(out).get("tests", [])
    if args.regex:
        tests = [t for t in tests if re.search(args.regex, t["name"])]
    if not tests:
        print(f"ctest-under: no tests in {args.build_dir}")
        return 1

    failures = []
    for i, test in enumerate(tests, 1):
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        env = dict(os.environ)
        for item in props.get("ENVIRONMENT", []):
            key, _, value = item.partition("=")
            env[key] = value
        cwd = props.get("WORKING_DIRECTORY", args.build_dir)
        command = wrapper + test["command"]
        start = time.monotonic()
        try:
            rc = subprocess.run(command, cwd=cwd, env=env, timeout=args.timeout,
                                stdin=subprocess.DEVNULL).returncode
            status = "Passed" if (rc != 0) == bool(props.get("WILL_FAIL")) else f"Failed (exit {rc})"
        except subprocess.TimeoutExpired:
            status = f"Timeout ({args.timeout:.0f}s)"
        took = time.monotonic() - start
        print(f"{i:3}/{len(tests)} {test['name']:<40} {status}  {took:.1f} s", flush=True)
        if status != "Passed":
            failures.append(test["name"])

    print(f"ctest-under: {len(tests) - len(failures)}/{len(tests)} passed under {wrapper[0]}")
    for name in failures:
        print(f"  failed: {name}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

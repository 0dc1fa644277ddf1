#!/usr/bin/env python3
"""qmp.py SOCKET COMMAND...: run QMP commands on QEMU's QMP socket, in order.

Each COMMAND is a QMP command's name, optionally followed by a space and its
arguments as a JSON object: 'human-monitor-command {"command-line": "savevm a"}'.
Waits up to 300 s for the socket to accept (QEMU starting on a busy host).
Prints each command's return as one line of JSON (an HMP command's text as
a JSON string); an error ends the run with one line on stderr and exit
status 1.  A "quit" need not answer.

As a module (vm/run's snapshot hook): connect() and execute().
"""
import json
import socket
import sys
import time


def connect(path, seconds=300, who="qmp.py"):
    """A socket connected to the Unix socket at path, tried for seconds"""
    end = time.monotonic() + seconds
    while True:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            return s
        except OSError as e:
            s.close()
            if time.monotonic() > end:
                sys.exit("%s: cannot connect to %s: %s" % (who, path, e))
            time.sleep(0.05)


def execute(f, name, args=None):
    """Command name (with args) on the QMP stream f: its answer, a dict with
    "return" or "error" (events are skipped); None if QEMU closed the socket"""
    req = {"execute": name}
    if args:
        req["arguments"] = args
    f.write(json.dumps(req) + "\n")
    f.flush()
    while True:
        line = f.readline()
        if not line:
            return None
        r = json.loads(line)
        if "return" in r or "error" in r:
            return r


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[0])
    f = connect(sys.argv[1]).makefile("rw")
    f.readline()  # the greeting
    for c in ["qmp_capabilities"] + sys.argv[2:]:
        name, _, args = c.partition(" ")
        r = execute(f, name, json.loads(args) if args else None)
        if r is None:
            if name == "quit":
                return
            sys.exit("qmp.py: %s: QEMU closed the socket" % name)
        if "error" in r:
            sys.exit("qmp.py: %s: %s" % (name, r["error"].get("desc", r)))
        if name != "qmp_capabilities":
            print(json.dumps(r["return"]), flush=True)


if __name__ == "__main__":
    main()

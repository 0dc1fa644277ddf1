#!/usr/bin/env python3
"""qmp.py SOCKET COMMAND...: run QMP commands on QEMU's QMP socket, in order.

Each COMMAND is a QMP command's name, optionally followed by a space and its
arguments as a JSON object: 'human-monitor-command {"command-line": "savevm a"}'.
Waits up to 60 s for the socket to accept.  Prints each command's return as
one line of JSON (an HMP command's text as a JSON string); an error ends the
run with one line on stderr and exit status 1.  A "quit" need not answer.
"""
import json
import socket
import sys
import time


def connect(path):
    end = time.monotonic() + 60
    while True:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            return s
        except OSError as e:
            s.close()
            if time.monotonic() > end:
                sys.exit("qmp.py: cannot connect to %s: %s" % (path, e))
            time.sleep(0.05)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[0])
    f = connect(sys.argv[1]).makefile("rw")
    f.readline()  # the greeting
    for c in ["qmp_capabilities"] + sys.argv[2:]:
        name, _, args = c.partition(" ")
        req = {"execute": name}
        if args:
            req["arguments"] = json.loads(args)
        f.write(json.dumps(req) + "\n")
        f.flush()
        while True:
            line = f.readline()
            if not line:
                if name == "quit":
                    return
                sys.exit("qmp.py: %s: QEMU closed the socket" % name)
            r = json.loads(line)
            if "error" in r:
                sys.exit("qmp.py: %s: %s" % (name, r["error"].get("desc", r)))
            if "return" in r:
                break
        if name != "qmp_capabilities":
            print(json.dumps(r["return"]), flush=True)


if __name__ == "__main__":
    main()

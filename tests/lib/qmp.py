#!/usr/bin/env python3
"""qmp.py [--until FILE LINE] SOCKET COMMAND...: run QMP commands on QEMU's QMP socket.

Each COMMAND is a QMP command's name, optionally followed by a space and its
arguments as a JSON object: 'human-monitor-command {"command-line": "savevm a"}'.
Waits up to 60 s for the socket to accept.  Prints each command's return as
one line of JSON (an HMP command's text as a JSON string); an error ends the
run with one line on stderr and exit status 1.  A "quit" need not answer.

--until FILE LINE runs the COMMANDs over and over until FILE has a line
LINE, and prints how many times it ran them instead of their returns.
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


class Closed(Exception):
    pass


def has_line(path, line):
    try:
        with open(path, errors="replace") as f:
            return any(x.rstrip("\n") == line for x in f)
    except OSError:
        return False


def main():
    args = sys.argv[1:]
    until = None
    if args[:1] == ["--until"]:
        until, args = args[1:3], args[3:]
    if len(args) < 2 or (until is not None and len(until) < 2):
        sys.exit(__doc__.strip().splitlines()[0])
    f = connect(args[0]).makefile("rw")
    f.readline()  # the greeting
    if until is None:
        try:
            run(f, ["qmp_capabilities"] + args[1:], True)
        except Closed as e:
            sys.exit("qmp.py: %s" % e)
        return
    run(f, ["qmp_capabilities"], False)
    rounds = 0
    while not has_line(*until):
        try:
            run(f, args[1:], False)
        except (Closed, OSError) as e:
            # QEMU may end as soon as it has written the line
            if has_line(*until):
                break
            sys.exit("qmp.py: %s" % e)
        rounds += 1
    print(rounds)


def run(f, commands, show):
    for c in commands:
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
                raise Closed("%s: QEMU closed the socket" % name)
            r = json.loads(line)
            if "error" in r:
                sys.exit("qmp.py: %s: %s" % (name, r["error"].get("desc", r)))
            if "return" in r:
                break
        if show and name != "qmp_capabilities":
            print(json.dumps(r["return"]), flush=True)


if __name__ == "__main__":
    main()

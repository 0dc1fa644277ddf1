#!/usr/bin/env python3
"""Verdicts of a host check's embedded script, for tests/lib/verdicts.sh.

The script judges; the test file holds the fixed list of the checks' ids and
prints one TAP line per id (verdicts.sh), whatever the script did.  A line:

  ID<TAB>ok<TAB>SEEN              the check passed
  ID<TAB>not ok<TAB>SEEN<TAB>WHY  the check failed, WHY saying why

SEEN (what the check saw: counts, values) follows the test file's own
description of the check in its TAP line.
  #<TAB>TEXT                     a diagnostic
  END<TAB>ok<TAB>...             the script ran to its end (written by run())
"""
import sys
import traceback

sys.dont_write_bytecode = True


def _clean(s):
    """one line, never empty (a TAB-separated field)"""
    return " ".join(str(s).split()) or "-"


def check(cid, ok, seen="", why=""):
    """the verdict on check CID"""
    if ok:
        print("%s\tok\t%s" % (cid, _clean(seen)))
    else:
        print("%s\tnot ok\t%s\t%s" % (cid, _clean(seen), _clean(why)))


def diag(text):
    print("#\t%s" % _clean(text))


def run(main):
    """MAIN(), then the END verdict; an exception goes to stderr, without it"""
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
    print("END\tok\t-")

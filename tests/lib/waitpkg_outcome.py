# The outcome (umwait-trace.8) of a wait by QEMU's waitpkg_wait event: the
# truth umwait-trace caps' outcomes are held to (tests/lib/attribute.py,
# tests/host/25-outcomes-qemu-trace.t).

# the outcome of the trace's reason for a CF=0 wait whose deadline was
# ahead when it began
OUTCOME = {"deadline": "deadline", "past": "past", "store": "early", "interrupt": "early",
           "nomonitor": "early", "migration": "early"}
# a deadline behind by this much when the wait began is over the 1 s of
# lateness caps allows at up to 8 GHz: caps must call the wait past
FAR = 1 << 33
# a wait that ended this much before its deadline is one caps must call
# early: its probe would have to run over 8 ms late at up to 8 GHz to see
# the deadline passed
FAR_EARLY = 1 << 26
# the outcome a far or farearly wait also counts as
WITHIN = {"far": "past", "farearly": "early"}


def fields(s):
    """The "name value ..." pairs of a trace event's text."""
    t = s.split()
    return {t[i]: t[i + 1] for i in range(0, len(t) - 1, 2)}


def outcome(f):
    """capped, deadline, early, past or other; far for a past wait and
    farearly for an early one that caps must call so (FAR, FAR_EARLY;
    each also counts as the outcome WITHIN names)."""
    start, dl = int(f["tsc_start"], 16), int(f["deadline"], 16)
    out = OUTCOME.get(f["reason"], "other") if f["cf"] == "0" else "capped"
    # a deadline behind at the start makes the wait past, whatever the
    # model names first (a store on the monitor's page since UMONITOR)
    if f["cf"] == "0" and dl <= start:
        out = "past"
    if out == "past" and start - dl >= FAR:
        out = "far"
    if out == "early" and dl - int(f["tsc_end"], 16) >= FAR_EARLY:
        out = "farearly"
    return out

# The outcome (umwait-trace.8) of a wait by QEMU's waitpkg_wait event (a
# Wait of tests/lib/qemu_trace.py): the truth umwait-trace caps' outcomes are
# held to (tests/lib/attribute.py, tests/host/25-outcomes-qemu-trace.t).

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


def outcome(w):
    """capped, deadline, early, past or other; far for a past wait and
    farearly for an early one that caps must call so (FAR, FAR_EARLY;
    each also counts as the outcome WITHIN names)."""
    out = OUTCOME.get(w.reason, "other") if w.cf == 0 else "capped"
    # a deadline behind at the start makes the wait past, whatever the
    # model names first (a store on the monitor's page since UMONITOR)
    if w.cf == 0 and w.deadline <= w.tsc_start:
        out = "past"
    if out == "past" and w.tsc_start - w.deadline >= FAR:
        out = "far"
    if out == "early" and w.deadline - w.tsc_end >= FAR_EARLY:
        out = "farearly"
    return out

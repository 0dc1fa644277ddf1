# The sysfs ABI suite of tests/guest, on Debian's kernel without the series: the
# same checks must pass, and its transcript must equal the one of our kernel
# (tests/host/30-umwait-sysfs-abi.t compares them).
. /lab/tests/guest/30-umwait-sysfs.t

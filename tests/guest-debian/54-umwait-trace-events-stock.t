# umwait-trace events on Debian's packaged kernels, without the series: the
# events of msr:write_msr and the sysfs store path, value by value against
# what the writes did. The same file as tests/guest's, which on a kernel with
# the series also holds them to the series' own events.
exec sh /lab/tests/guest/54-umwait-trace-events-stock.t

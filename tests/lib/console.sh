# What a guest kernel's console says of its crash (bash or busybox sh).
#
#   crash_where     on stdin a console log; on stdout, on one line, its first
#                   two "RIP:" and "Kernel panic" lines without their
#                   timestamps: where the kernel crashed, to say of a boot
#                   that is tried again

crash_where() {
	grep -m2 'RIP: \|Kernel panic' | sed 's/.*\] //' | tr '\n' ' '
}

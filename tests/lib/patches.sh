# Patch-series helpers for the host tests (bash): the kernel series
# (patches/, patches/6.12) and the QEMU one (vm/qemu) are read the same way.

# subject FILE: the Subject of a patch, unfolded, without the [PATCH n/m] tag
subject() {
	awk '/^Subject: / { s = $0; while ((getline l) > 0 && l ~ /^[ \t]/) s = s l; print s; exit }' "$1" |
		sed 's/^Subject: \[PATCH[^]]*\] //'
}

# series FILE: the patches a series file lists, one a line (comments and
# blank lines left out), for mapfile
series() {
	grep -v -e '^#' -e '^[[:space:]]*$' "$1"
}

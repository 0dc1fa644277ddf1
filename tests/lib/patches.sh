# Patch-series helpers for the host tests (bash): the kernel series
# (patches/, patches/6.12) and the QEMU one (vm/qemu) are read the same way,
# and as the build scripts read them (vm/lib/series.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../../vm/lib/series.sh"

# subject FILE: the Subject of a patch, unfolded, without the [PATCH n/m] tag
subject() {
	awk '/^Subject: / { s = $0; while ((getline l) > 0 && l ~ /^[ \t]/) s = s l; print s; exit }' "$1" |
		sed 's/^Subject: \[PATCH[^]]*\] //'
}

# series FILE: the names of the patch files a series file lists, in order
series() {
	series_patches "$1" | sed 's|.*/||'
}

# Kernel patch series for the lab's build scripts (bash; sourced): a series
# file lists one patch file a line (blank lines and '#' comments aside), in
# the order they apply. Patches go in with patch(1), exactly (no fuzz): the
# trees are plain extractions of Debian's tarballs, not git repositories, so
# that no build pays for hashing a whole kernel tree (or for the background
# gc that a commit of one starts).

# series_patches SERIES: the patch files of SERIES, one a line, in order
series_patches() {
	local p
	while read -r p; do
		case "$p" in '' | '#'*) continue ;; esac
		printf '%s\n' "$(dirname "$1")/$p"
	done <"$1"
}

# series_apply SERIES [-R]: apply each patch of SERIES to the tree in the
# current directory, or with -R take each back out, last first
series_apply() {
	local p list
	mapfile -t list < <(series_patches "$1")
	if [ "${2:-}" = -R ]; then
		for ((i = ${#list[@]} - 1; i >= 0; i--)); do
			patch -p1 -R --batch --fuzz=0 --quiet --no-backup-if-mismatch <"${list[i]}" || {
				echo "series: ${list[i]} does not come out cleanly" >&2
				return 1
			}
		done
		return 0
	fi
	for p in "${list[@]}"; do
		echo "series: applying $(basename "$p")"
		patch -p1 --forward --batch --fuzz=0 --quiet --no-backup-if-mismatch <"$p" || {
			echo "series: $p does not apply" >&2
			return 1
		}
	done
}

# series_subjects SERIES: each patch's subject, one a line
series_subjects() {
	local p
	for p in $(series_patches "$1"); do
		sed -n 's/^Subject: \(\[PATCH[^]]*\] \)\{0,1\}//p' "$p" | head -n 1
	done
}

# series_c_files PATCH: the .c files PATCH touches
series_c_files() {
	sed -n 's#^+++ b/\(.*\.c\)$#\1#p' "$1"
}

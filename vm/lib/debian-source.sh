# Fetch a Debian source package the way the lab's builders do (bash; sourced
# by vm/build-zydis, which defines die).
#
#   debian_source PACKAGE VERSION DIR   the .dsc and the files it names, in DIR
#
# Uses apt-get source --download-only; when apt has no deb-src entry for
# bookworm, one mirroring the machine's deb entries is added (root only).
# A DIR that already holds a complete download is reused as it is.

# has_deb_src: apt has a deb-src entry for Debian bookworm
has_deb_src() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		grep -qE '^[[:space:]]*deb-src[[:space:]]|^Types:.*deb-src' "$f" &&
			grep -q bookworm "$f" && return 0
	done
	return 1
}

# add_deb_src: add deb-src entries mirroring the machine's deb entries
add_deb_src() {
	local f=/etc/apt/sources.list.d/umwait-lab-src.sources
	local deb=/etc/apt/sources.list.d/debian.sources
	local uri= sec= key=

	[ "$(id -u)" -eq 0 ] || die "apt has no deb-src entry; run as root to add $f"
	if [ -r "$deb" ]; then
		uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' "$deb")
		sec=$(awk '/^URIs:/ && $2 ~ /security/ { print $2; exit }' "$deb")
		key=$(awk '/^Signed-By:/ { print $2; exit }' "$deb")
	fi
	echo "debian-source: adding $f" >&2
	cat >"$f" <<-EOS
		Types: deb-src
		URIs: ${uri:-http://deb.debian.org/debian}
		Suites: bookworm bookworm-updates
		Components: main
		Signed-By: ${key:-/usr/share/keyrings/debian-archive-keyring.gpg}

		Types: deb-src
		URIs: ${sec:-http://deb.debian.org/debian-security}
		Suites: bookworm-security
		Components: main
		Signed-By: ${key:-/usr/share/keyrings/debian-archive-keyring.gpg}
	EOS
	apt-get update -q >&2
}

# debian_source PACKAGE VERSION DIR: the .dsc and the files it names, in DIR
debian_source() {
	local pkg=$1 version=$2 dir=$3 dsc f ok=1 updated=0

	dsc=${pkg}_${version#*:}.dsc
	if [ -r "$dir/$dsc" ]; then
		for f in $(awk '/^Files:/ { on = 1; next } /^[^ ]/ { on = 0 }
				on && NF == 3 { print $3 }' "$dir/$dsc"); do
			[ -r "$dir/$f" ] || ok=0
		done
		[ $ok -eq 1 ] && return 0
	fi
	if ! has_deb_src; then
		add_deb_src
		updated=1
	fi
	mkdir -p "$dir"
	echo "debian-source: downloading $pkg $version source" >&2
	if ! (cd "$dir" && apt-get source -q --download-only "$pkg=$version" >&2); then
		# the entry was there but apt's lists may predate it
		[ $updated -eq 0 ] || die "apt-get source $pkg=$version failed"
		[ "$(id -u)" -eq 0 ] || die "apt-get source $pkg=$version failed (apt-get update as root may help)"
		apt-get update -q >&2
		(cd "$dir" && apt-get source -q --download-only "$pkg=$version" >&2) ||
			die "apt-get source $pkg=$version failed"
	fi
	[ -r "$dir/$dsc" ] || die "apt-get source did not produce $dsc"
}

# debian_source_newest PACKAGE PREFIX: the newest version of source PACKAGE
# that apt offers and that starts with PREFIX (an upstream version and the
# start of Debian's revision, such as "1:7.2+dfsg-"). A revision can vanish
# from the archive with an update: the lab builds whichever is current, and
# fails only where its patches stop applying.
debian_source_newest() {
	local v best=
	has_deb_src || add_deb_src
	for v in $(apt-cache showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p'); do
		case "$v" in "$2"*) ;; *) continue ;; esac
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done
	[ -n "$best" ] || die "apt offers no $1 source of version $2*: run apt-get update as root"
	echo "$best"
}

# Fetch a Debian source package the way the lab's builders do (bash; sourced
# by vm/build-zydis, vm/build-qemu and vm/qemu-version, which define die).
#
#   debian_source PACKAGE VERSION DIR   the .dsc and the files it names, in DIR
#   debian_source_newest PACKAGE PREFIX the newest version apt offers of it
#
# Uses apt-get source --download-only, which checks every file against the
# archive's signed indexes. The machine's apt is asked first. Where it has
# no deb-src entry (or lists that predate one), the lab's own source lists
# serve instead: a deb-src entry for each of the machine's Debian bookworm
# mirrors, their index in the lab cache (apt-src/, fetched again when a day
# old). That needs no root and changes nothing in /etc/apt or /var/lib/apt;
# the machine's apt keyring still decides what is trusted. A DIR that
# already holds a complete download is reused as it is.

_debsrc_vm=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# bookworm_mirrors: "URI SUITE" for each Debian bookworm suite apt's deb
# entries name (main component), one a line
bookworm_mirrors() {
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' \
		'Created-By: Packages' 'Component: main' 2>/dev/null |
		awk '$2 ~ /^bookworm(-updates|-security)?$/' | sort -u
}

# own_lists [--refresh]: bring the lab's own source lists up to date
# (fetched when missing, a day old, or with --refresh) and set own_apt to
# the options that make apt-get and apt-cache use them. --refresh fails at
# once when this process fetched them already: there is nothing newer.
own_fetched=0
own_lists() {
	local d mirrors lock rc=0
	[ "${1:-}" != --refresh ] || [ $own_fetched -eq 0 ] || return 1
	d=$("$_debsrc_vm/cache-dir")/apt-src
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/parts" || return 1
	# as root apt would download as _apt, which may not write here
	own_apt=(-q -o "Dir::Etc::SourceList=$d/sources.list"
		-o "Dir::Etc::SourceParts=$d/parts"
		-o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache"
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
		-o "APT::Sandbox::User=$(id -un)")
	# one update at a time; readers see whole files (apt renames them in)
	exec {lock}>"$d.lock"
	flock "$lock"
	if [ "${1:-}" = --refresh ] ||
		[ -z "$(find "$d/lists" -maxdepth 1 -name '*_Sources*' -mmin -1440 2>/dev/null)" ]; then
		mirrors=$(bookworm_mirrors)
		[ -n "$mirrors" ] || mirrors="http://deb.debian.org/debian/ bookworm"
		echo "$mirrors" | while read -r uri suite; do
			printf 'deb-src %s %s main\n' "$uri" "$suite"
		done >"$d/sources.list"
		echo "debian-source: apt has no usable deb-src entry: fetching the" \
			"bookworm source index into $d (no root needed)" >&2
		own_fetched=1
		apt-get "${own_apt[@]}" --error-on=any update >&2 || rc=1
	fi
	exec {lock}>&-
	return $rc
}

# debian_source PACKAGE VERSION DIR: the .dsc and the files it names, in DIR
debian_source() {
	local pkg=$1 version=$2 dir=$3 dsc f ok=1

	dsc=${pkg}_${version#*:}.dsc
	if [ -r "$dir/$dsc" ]; then
		for f in $(awk '/^Files:/ { on = 1; next } /^[^ ]/ { on = 0 }
				on && NF == 3 { print $3 }' "$dir/$dsc"); do
			[ -r "$dir/$f" ] || ok=0
		done
		[ $ok -eq 1 ] && return 0
	fi
	mkdir -p "$dir"
	echo "debian-source: downloading $pkg $version source" >&2
	# the machine's own deb-src entries first, quietly: many have none
	(cd "$dir" && apt-get source -q --download-only "$pkg=$version" >/dev/null 2>&1) ||
		{ own_lists && (cd "$dir" && apt-get "${own_apt[@]}" source --download-only "$pkg=$version" >&2); } ||
		{ own_lists --refresh && (cd "$dir" && apt-get "${own_apt[@]}" source --download-only "$pkg=$version" >&2); } ||
		die "apt-get source $pkg=$version failed (apt's error above): is the Debian mirror reachable?"
	[ -r "$dir/$dsc" ] || die "apt-get source did not produce $dsc"
}

# newest_of PREFIX: the newest of the versions on stdin (apt-cache showsrc's
# output) that start with PREFIX; nothing if none does
newest_of() {
	local v best=
	for v in $(sed -n 's/^Version: //p'); do
		case "$v" in "$1"*) ;; *) continue ;; esac
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done
	[ -z "$best" ] || echo "$best"
}

# debian_source_newest PACKAGE PREFIX: the newest version of source PACKAGE
# that apt offers and that starts with PREFIX (an upstream version and the
# start of Debian's revision, such as "1:7.2+dfsg-"). A revision can vanish
# from the archive with an update: the lab builds whichever is current, and
# fails only where its patches stop applying.
debian_source_newest() {
	local best
	# apt-cache fails where it has no source index at all: not an error here
	best=$( (apt-cache showsrc "$1" 2>/dev/null || :) | newest_of "$2")
	[ -n "$best" ] || { own_lists && best=$( (apt-cache "${own_apt[@]}" showsrc "$1" 2>/dev/null || :) | newest_of "$2"); }
	[ -n "$best" ] || { own_lists --refresh && best=$( (apt-cache "${own_apt[@]}" showsrc "$1" 2>/dev/null || :) | newest_of "$2"); }
	[ -n "$best" ] || die "apt offers no $1 source of version $2* (apt's lists and the lab's own in $("$_debsrc_vm/cache-dir")/apt-src)"
	echo "$best"
}

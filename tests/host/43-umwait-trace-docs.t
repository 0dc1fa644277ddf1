#!/bin/bash
# umwait-trace's documentation against its own --help, on the host (--help
# loads nothing): every command the top-level --help lists, and every short
# and long flag each subcommand's --help lists, is in the man page (a
# command as its .SS subsection, a flag in OPTIONS), in the bash completion
# (what it offers after "umwait-trace" and after "umwait-trace SUBCOMMAND -")
# and in the tool's README.md (a command as a synopsis line and a heading, a
# flag in that subcommand's synopsis).
#
# Twenty checks whatever the input: for the top level and each of the four
# subcommands, one that the list read from --help is the one argp's --usage
# prints (the same options, rendered another way: a --help this parser no
# longer reads would otherwise leave nothing to look for), and one per
# document naming what it lacks. A flag counts only as a whole word: --hist
# inside --hist-perturbing, or -o inside --output, is not it.
#
# The bugs they catch: a flag or a command added to the tool and not
# documented, or documented under another name; the completion not offering
# it; a README synopsis that lacks it (the one before these checks lacked
# 14 of caps' 22 flags).
. "$(dirname "$0")/../lib/tap.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
ut=${LAB_UMWAIT_TRACE:-$top/build/tools/umwait-trace}
man=${LAB_UMWAIT_TRACE_MAN:-$top/tools/umwait-trace/umwait-trace.8}
compl=${LAB_UMWAIT_TRACE_COMPLETION:-$top/tools/umwait-trace/umwait-trace.bash}
readme=${LAB_UMWAIT_TRACE_README:-$top/tools/umwait-trace/README.md}
cmds="status events caps sites"
# flags are words like -? that a glob would expand
set -f

# words LIST: the lines of LIST on one line
words() {
	printf '%s\n' "$1" | paste -sd' '
}

# help_flags CMD: the flags CMD's --help lists (option lines: a short option
# at column 3, or a long one alone at column 7; "-o, --output=FILE" gives -o
# and --output), one a line, sorted; for the top level (CMD ""), the commands
help_flags() {
	if [ -z "$1" ]; then
		"$ut" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' | sort
		return
	fi
	"$ut" "$1" --help | grep -E '^(  -[^- ]|      --[a-z])' |
		sed -E 's/^ +//; s/  .*//' | tr ',' '\n' |
		sed -E 's/^ +//; s/[= ].*//' | grep -E '^--?[^ ]' | sort -u
}

# usage_flags CMD: the same from argp's --usage ("[-v?V] [-o FILE]
# [--format=FORMAT] ..."); for the top level, the commands its error for an
# unknown command names
usage_flags() {
	local opt
	if [ -z "$1" ]; then
		"$ut" no-such-command 2>&1 | sed -n 's/.*unknown command [^(]*(\([^;)]*\).*/\1/p' |
			sed 's/,/ /g; s/ or / /' | tr ' ' '\n' | grep . | sort
		return
	fi
	"$ut" "$1" --usage | tr '\n' ' ' | grep -oE '\[-[^]]*\]' | sed 's/^\[//; s/\]$//' |
		while read -r opt; do
			case "$opt" in
			--*) printf '%s\n' "${opt%%=*}" ;;
			*)
				# "-v?V": short options without a value; "-o FILE": one with
				opt=${opt%% *}
				opt=${opt#-}
				while [ -n "$opt" ]; do
					printf -- '-%s\n' "${opt:0:1}"
					opt=${opt:1}
				done
				;;
			esac
		done | sort -u
}

# ere FLAG: FLAG as an extended regular expression, each '-' written '\-'
# when ROFF is given (as roff wants it)
ere() {
	if [ -n "${2:-}" ]; then
		printf '%s' "$1" | sed 's/[?]/\\?/g; s/-/\\\\-/g'
	else
		printf '%s' "$1" | sed 's/[?]/\\?/g'
	fi
}

# man_options: the man page's OPTIONS section
man_options() {
	sed -n '/^\.SH OPTIONS$/,/^\.SH /p' "$man"
}

# in_man FLAG: a flag in the man page's OPTIONS as a whole word (not
# preceded by a '-', not followed by a letter, a digit or another '\-'); a
# command as a subsection of its own (.SS CMD)
in_man() {
	case "$1" in
	-*) man_options | grep -qE -- '(^|[^-])'"$(ere "$1" roff)"'([^A-Za-z0-9\]|\\[^-]|$)' ;;
	*) grep -qxF -- ".SS $1" "$man" ;;
	esac
}

# synopsis CMD: the README's synopsis of CMD: its line "    umwait-trace CMD
# ..." with the lines that continue it, and the line every subcommand
# shares ("    umwait-trace SUBCOMMAND ...")
synopsis() {
	awk -v cmd="$1" '
		/^    umwait-trace / { on = ($2 == cmd || $2 == "SUBCOMMAND") }
		/^[^ ]/ || /^$/ { on = 0 }
		on' "$readme"
}

# in_readme CMD FLAG: a flag in the README's synopsis of CMD as a whole
# word; a command with a synopsis line and a heading (## CMD) of its own
in_readme() {
	case "$2" in
	-*) synopsis "$1" | grep -qE -- '(^|[^-A-Za-z0-9])'"$(ere "$2")"'([^A-Za-z0-9-]|$)' ;;
	*) grep -qxE -- "#+ $2" "$readme" && grep -qE -- "^    umwait-trace $2( |\$)" "$readme" ;;
	esac
}

# offered CMD: what the completion offers after "umwait-trace" (CMD "") or
# after "umwait-trace CMD -", one a line
offered() {
	bash -c '. /usr/share/bash-completion/bash_completion || exit 1
		. "$1" || exit 1
		if [ -z "$2" ]; then
			COMP_WORDS=(umwait-trace "") COMP_CWORD=1 COMP_LINE="umwait-trace "
		else
			COMP_WORDS=(umwait-trace "$2" -) COMP_CWORD=2 COMP_LINE="umwait-trace $2 -"
		fi
		COMP_POINT=${#COMP_LINE}
		_umwait_trace
		printf "%s\n" "${COMPREPLY[@]}"' _ "$compl" "$1"
}

# missing_from DOC FLAGS: the flags DOC (man, completion CMD, readme) lacks
missing_from() {
	local doc=$1 cmd=$2 flags=$3 f out='' got
	if [ "$doc" = completion ]; then
		got=$(offered "$cmd") || return 1
	fi
	for f in $flags; do
		case "$doc" in
		man) in_man "$f" || out="$out $f" ;;
		readme) in_readme "$cmd" "$f" || out="$out $f" ;;
		completion) printf '%s\n' "$got" | grep -qxF -- "$f" || out="$out $f" ;;
		esac
	done
	echo "${out# }"
}

# Every check below prints its line even when an input is missing.
why=
if [ ! -x "$ut" ]; then
	why="no $ut: run make umwait-trace"
else
	for doc in "$man" "$compl" "$readme"; do
		[ -r "$doc" ] || why="$why${why:+; }no $doc"
	done
fi
have_compl=1
[ -r /usr/share/bash-completion/bash_completion ] || have_compl=0

for cmd in "" $cmds; do
	name=${cmd:-umwait-trace}
	what="flags"
	[ -z "$cmd" ] && what="commands"
	if [ -n "$why" ]; then
		for c in "--help" "man page" "bash completion" "README.md"; do
			fail "$name: $c" "$why"
		done
		continue
	fi
	flags=$(help_flags "$cmd")
	n=$(printf '%s\n' "$flags" | grep -c .)
	is "$(words "$flags")" "$(words "$(usage_flags "$cmd")")" \
		"$name --help lists $n $what, the same as $([ -z "$cmd" ] && echo 'its unknown-command error' || echo '--usage'): $(words "$flags")"
	[ "$n" -gt 0 ] || flags="(none-read-from---help)"
	is "$(missing_from man "$cmd" "$flags")" "" \
		"$name: every one of its $what in the man page ($([ -z "$cmd" ] && echo '.SS CMD' || echo 'OPTIONS'))"
	if [ $have_compl -eq 1 ]; then
		if out=$(missing_from completion "$cmd" "$flags"); then
			is "$out" "" "$name: the bash completion offers every one of its $what"
		else
			fail "$name: the bash completion offers every one of its $what" \
				"the completion did not load: bash -c '. bash_completion; . $compl' failed"
		fi
	else
		fail "$name: the bash completion offers every one of its $what" \
			"package bash-completion is not installed (vm/setup-host)"
	fi
	is "$(missing_from readme "$cmd" "$flags")" "" \
		"$name: every one of its $what in tools/umwait-trace/README.md ($([ -z "$cmd" ] && echo 'a synopsis line and a heading each' || echo 'its synopsis'))"
done
done_testing

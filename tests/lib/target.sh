# tests/fixtures/ut-target in the guest tests (busybox sh): start one, read
# its own count of waits. Needs tests/lib/guest.sh (until_true).
#
#   target OUT CMD...   CMD (a ut-target) in the background, its output in
#                       OUT; back once it is ready (60 s at most), its PID in
#                       t_pid and its threads' IDs in t_tids
#   own OUT [TID]       the waits it counted, over its threads (or thread
#                       TID's alone), or its library's
#   run_to_end          SIGUSR1 to the ready target t_pid; back once it exited

target() {
	_tg_o=$1
	shift
	: >"$_tg_o"
	"$@" >"$_tg_o" 2>&1 &
	t_pid=$!
	until_true 60 grep -q '^ut-target: ready' "$_tg_o"
	t_tids=$(sed -n 's/^ut-target: ready pid=[0-9]* tids=//p' "$_tg_o" | tr ',' ' ')
}

own() {
	sed -n "s/^ut-target: ${2:+tid=$2 }.*waits=\([0-9]*\) .*/\1/p" "$1" 2>/dev/null |
		awk '{ s += $1 } END { print s + 0 }'
}

run_to_end() {
	kill -USR1 $t_pid
	wait $t_pid
}

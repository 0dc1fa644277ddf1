# The umwait_control sysfs ABI (Documentation/ABI/testing/sysfs-devices-system-cpu):
# every documented input of enable_c02 and max_time, the errno the kernel gives for
# each rejected one (kstrtobool/kstrtou32 in 6.1) and the state after each write.
. /lab/tests/lib/tap.sh
. /lab/tests/lib/state.sh
state_guard

d=/sys/devices/system/cpu/umwait_control
c02=$d/enable_c02
mt=$d/max_time

# state: both values on one line into $st, to compare before and after a
# write (read by this shell itself: the transcript below takes some 300
# states, and a cat, or a $(...), is a process each; where a file does not
# read, cat's error is its value)
state() {
	IFS= read -r _sc 2>/dev/null <$c02 || _sc=$(cat $c02 2>&1)
	IFS= read -r _sm 2>/dev/null <$mt || _sm=$(cat $mt 2>&1)
	st="enable_c02=$_sc max_time=$_sm"
}

# accepts FILE DATA WANT: one write(2) of DATA succeeds and FILE then reads WANT
accepts() {
	is "$(lab-write "$1" "$2")" OK "${1##*/} accepts '$2'"
	is "$(cat "$1")" "$3" "${1##*/} reads $3 after '$2'"
}

# rejects FILE DATA ERRNO: one write(2) of DATA fails with ERRNO and changes nothing
rejects() {
	state
	_before=$st
	is "$(lab-write "$1" "$2")" "$3" "${1##*/} rejects '$2' with $3"
	state
	is "$st" "$_before" "${1##*/}: nothing changed after '$2'"
}

check "umwait_control directory exists" test -d $d
is "$(stat -c %a $c02)" 644 "enable_c02 is mode 0644"
is "$(stat -c %a $mt)" 644 "max_time is mode 0644"
is "$(cat $c02)" 1 "enable_c02 defaults to 1"
is "$(cat $mt)" 100000 "max_time defaults to 100000"

# enable_c02: 'Yy1' or [oO][nN] enable, 'Nn0' or [oO][fF] disable
for v in y Y 1 on ON oN On; do
	lab-write $c02 0 >/dev/null
	accepts $c02 "$v" 1
done
for v in n N 0 off OFF oF Of; do
	lab-write $c02 1 >/dev/null
	accepts $c02 "$v" 0
done
lab-write $c02 0 >/dev/null
is "$(echo 1 2>&1 >$c02)" "" "echo 1 (with its newline) is accepted"
is "$(cat $c02)" 1 "enable_c02 reads 1 after echo 1"
accepts $c02 1 1
is "$(cat $c02)" 1 "writing the current value keeps it"

# kstrtobool: anything else is -EINVAL
for v in 2 x maybe -1 " 1" o ox O; do
	rejects $c02 "$v" EINVAL
done
is "$(lab-write -x $c02 0a)" EINVAL "enable_c02 rejects an empty line with EINVAL"
state
is "$st" "enable_c02=1 max_time=100000" "nothing changed after the empty line"
is "$(lab-write $c02 '')" OK "a zero-length write is a no-op (sysfs never calls store)"
state
is "$st" "enable_c02=1 max_time=100000" "nothing changed after the zero-length write"

# max_time: u32 in decimal, hex or octal, low two bits zero, 0 means no limit
accepts $mt 400000 400000
accepts $mt 0x30d40 200000
accepts $mt 0X30D44 200004
accepts $mt 01415200 400000
accepts $mt 0 0
accepts $mt 4294967292 4294967292
accepts $mt 0xfffffffc 4294967292
accepts $mt 4 4
is "$(echo 100000 2>&1 >$mt)" "" "echo 100000 (with its newline) is accepted"
is "$(cat $mt)" 100000 "max_time reads 100000 after echo 100000"
accepts $mt 100000 100000
is "$(cat $c02)" 1 "max_time writes leave enable_c02 alone"

# the store: bits 1:0 must be zero -> -EINVAL
for v in 1 2 3 100001 100002 100003 0x186a1 4294967295 0xffffffff; do
	rejects $mt "$v" EINVAL
done
# kstrtou32: values above u32 (and u64 overflow) -> -ERANGE
for v in 4294967296 0x100000000 18446744073709551615 99999999999999999999; do
	rejects $mt "$v" ERANGE
done
# kstrtou32: negative, garbage, trailing junk, bad digits -> -EINVAL
for v in -4 -0 abc 12abc 0x 0xg 08 1e5 " 100000" "100000 " 100000.0; do
	rejects $mt "$v" EINVAL
done
is "$(lab-write -x $mt 0a)" EINVAL "max_time rejects an empty line with EINVAL"
is "$(lab-write -x $mt 3130303030300a0a)" EINVAL "max_time rejects '100000' followed by two newlines"
is "$(lab-write $mt '')" OK "a zero-length write to max_time is a no-op"

# enable_c02 and max_time share one register value: each keeps the other
lab-write $mt 400000 >/dev/null
lab-write $c02 0 >/dev/null
state
is "$st" "enable_c02=0 max_time=400000" "enable_c02=0 keeps max_time"
lab-write $mt 200000 >/dev/null
state
is "$st" "enable_c02=0 max_time=200000" "max_time keeps enable_c02=0"
rejects $mt 200001 EINVAL
rejects $c02 x EINVAL

# The transcript: every input from a fixed state, the errno and the state after
# it, one "# sysfs-transcript:" line each. The same file runs on the kernel
# without the series (tests/guest-base), and tests/host/30-umwait-sysfs-abi.t
# requires the two transcripts to be identical.
# tr_one FILE LABEL C02 MT [-x] DATA: from enable_c02=C02 max_time=MT (set
# by the shell's own printf: valid values, and no process), write DATA
tr_one() {
	_f=$1 _label=$2
	printf %s "$3" >$c02
	printf %s "$4" >$mt
	state
	_from=$st
	shift 4
	if [ "$1" = -x ]; then
		_r=$(lab-write -x "$_f" "$2")
	else
		_r=$(lab-write "$_f" "$1")
	fi
	state
	echo "# sysfs-transcript: ${_f##*/} '$_label' from $_from -> $_r $st"
}
# tr_in FILE INPUT...: each printable INPUT, from two states
tr_in() {
	_f=$1
	shift
	for _in in "$@"; do
		tr_one "$_f" "$_in" 0 400000 "$_in"
		tr_one "$_f" "$_in" 1 100000 "$_in"
	done
}
# tr_hex FILE LABEL HEX: one input given as hex bytes, from two states
tr_hex() {
	tr_one "$1" "$2" 0 400000 -x "$3"
	tr_one "$1" "$2" 1 100000 -x "$3"
}
tr_in $c02 y Y n N t T f F on off On oN ON oFf OFF 1 0 yes no true false 1x 0x 2 -1 o x 10 01
tr_hex $c02 "" ""
tr_hex $c02 '\n' 0a
tr_hex $c02 '1\n' 310a
tr_hex $c02 '0\n' 300a
tr_hex $c02 '1\n\n' 310a0a
tr_hex $c02 ' 1' 2031
tr_hex $c02 '1 ' 3120
tr_hex $c02 '\t0' 0930
tr_hex $c02 '0\t' 3009
tr_hex $c02 'n\0' 6e00
tr_in $mt 0 4 400000 +400000 -400000 -0 +0 0x61a80 0X61A80 0x61A80 01415200 0o1415200 0b100 \
	4294967292 4294967295 4294967296 0xfffffffc 0xffffffff 0x100000000 \
	18446744073709551615 18446744073709551616 99999999999999999999 \
	1 2 3 100001 100002 100003 0x186a1 08 0x 0xg 1e5 100000.0 abc 400000x x400000
tr_hex $mt "" ""
tr_hex $mt '\n' 0a
tr_hex $mt '400000\n' 3430303030300a
tr_hex $mt '400000\n\n' 3430303030300a0a
tr_hex $mt ' 400000' 20343030303030
tr_hex $mt '400000 ' 34303030303020
tr_hex $mt '\t400000' 09343030303030
tr_hex $mt '400000\0' 34303030303000
n=$(lab-write $c02 1; lab-write $mt 100000)
is "$n" "OK
OK" "transcript done, back to the defaults"

# restore the defaults
lab-write $mt 100000 >/dev/null
lab-write $c02 1 >/dev/null
state
is "$st" "enable_c02=1 max_time=100000" "defaults restored"
done_testing

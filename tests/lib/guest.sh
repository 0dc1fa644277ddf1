# Helpers for guest tests beyond TAP (busybox sh).

# as_lab CMD...: CMD as the unprivileged user lab (uid 1000)
as_lab() {
	if setpriv --help 2>&1 | grep -q -- --reuid; then
		setpriv --reuid=1000 --regid=1000 --clear-groups "$@"
	else
		su lab -s /bin/sh -c "$*"	# busybox's setpriv cannot change uids
	fi
}

// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: the main loops' signals (Ctrl-C, SIGTERM, SIGUSR1) and clock.
 *
 * A loop that tests a flag and then sleeps loses a signal that lands between
 * the two: the sleep runs its whole timeout.  So the loops wait on an epoll
 * set that holds the ring buffer and a signalfd, with the signals blocked:
 * a signal that comes at any moment is pending on the signalfd and ends the
 * next wait at once.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "ut.h"

volatile sig_atomic_t exiting;
volatile sig_atomic_t dump_requested;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_requested = 1;
	else
		exiting = 1;
}

static void loop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGUSR1);
}

/*
 * Handlers for the signals, and the signals unblocked: a blocked mask is
 * inherited across exec, and a tracer started with SIGINT blocked would
 * otherwise never see Ctrl-C.  A loop_wait() blocks them again for its
 * signalfd.
 *
 * The commands that run until a signal install them (RESTART: system calls
 * go on) before they load and attach: a shell starts a background job with
 * SIGINT ignored, and a Ctrl-C or kill -INT that came while the tracer was
 * still attaching would be lost, the tracer then running forever.  With the
 * handler it sets "exiting", and the tracer ends as soon as it is attached.
 */
void install_signals(bool restart)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = restart ? SA_RESTART : 0 };
	sigset_t set;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	loop_signals(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

int loop_open(struct loop *l, struct ring_buffer *rb)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t set;

	*l = (struct loop){ .epfd = -1, .sfd = -1, .rb = rb };
	install_signals(false);
	loop_signals(&set);
	/* from here a signal waits on the signalfd, handled by loop_wait() */
	sigprocmask(SIG_BLOCK, &set, NULL);
	l->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->sfd < 0 || l->epfd < 0)
		goto fail;
	ev.data.fd = l->sfd;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->sfd, &ev))
		goto fail;
	if (rb) {
		ev.data.fd = ring_buffer__epoll_fd(rb);
		if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			goto fail;
	}
	return 0;
fail:
	loop_close(l);
	return -errno;
}

int loop_wait(struct loop *l, int ms)
{
	struct epoll_event evs[2];
	struct signalfd_siginfo si;
	int n, i, err;

	n = epoll_wait(l->epfd, evs, 2, ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		if (evs[i].data.fd != l->sfd)
			continue;
		while (read(l->sfd, &si, sizeof(si)) == sizeof(si))
			on_signal(si.ssi_signo);
	}
	/* whatever came, and what the ring buffer holds now: nothing waits unread */
	if (l->rb) {
		err = ring_buffer__consume(l->rb);
		if (err < 0 && err != -EINTR)
			return err;
	}
	return 0;
}

void loop_close(struct loop *l)
{
	sigset_t set;

	if (l->sfd >= 0)
		close(l->sfd);
	if (l->epfd >= 0)
		close(l->epfd);
	l->sfd = l->epfd = -1;
	loop_signals(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

// SPDX-License-Identifier: GPL-2.0
/* umwait-trace: the main loops' signals (Ctrl-C, SIGTERM, SIGUSR1) and clock. */
#include <signal.h>
#include <time.h>

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

/*
 * No SA_RESTART: a signal ends the main loop's sleep at once.  The signals
 * are unblocked too: a blocked mask is inherited across exec, and a tracer
 * started with SIGINT blocked would never see Ctrl-C.
 */
void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t set;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

// SPDX-License-Identifier: MIT
/*
 * A mutex that spins briefly before it sleeps (glibc's adaptive type), for
 * the locks that reactors on different CPUs take per I/O and hold for a few
 * hundred instructions: with a plain mutex, a lock found held costs a
 * futex wait and the holder's unlock a futex wake (two system calls and a
 * context switch; the write-back journal's cache and log locks, shared by
 * the connection's reactor and the destaging one, made ~0.7 of them per
 * 4 KiB write). A preempted holder still costs no spun timeslices: the spin
 * is bounded.
 */
#ifndef URAID_COMMON_ADAPTIVE_MUTEX_H
#define URAID_COMMON_ADAPTIVE_MUTEX_H

#include <pthread.h>

static inline int uraid_mutex_init_adaptive(pthread_mutex_t *m)
{
	pthread_mutexattr_t attr;
	int rc = pthread_mutexattr_init(&attr);

	if (rc)
		return -rc;
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	rc = pthread_mutex_init(m, &attr);
	pthread_mutexattr_destroy(&attr);
	return -rc;
}

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * The command lock: one flock outside bpffs, waited for at most --wait,
 * naming its holder when it cannot be had.
 */
#include <signal.h>
#include <errno.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <bpf/libbpf.h>
#include "base/errors.h"
#include "pins/internal.h"
#include "values/rate.h"

static int lock_file_open(void)
{
	struct stat sb;
	int dir, fd;

	dir = lock_dir_open(false);
	if (dir < 0)
		return dir;
	fd = openat(dir, SLUICE_LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		fd = errno == ELOOP ? -EPERM : -errno;
	} else if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_uid != 0 || (sb.st_mode & 022)) {
		close(fd);
		fd = -EPERM;
	}
	close(dir);
	return fd;
}

static uint64_t lock_wait_ns = STATE_WAIT_FOREVER;

static int lock_held_fd = -1;

static long lock_holder_pid; /* who held it when we gave up, 0: unknown */

void state_lock_wait(uint64_t ns)
{
	lock_wait_ns = ns;
}

bool state_lock_held(void)
{
	return lock_held_fd >= 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* flock(), giving up with -ETIMEDOUT after ns (STATE_WAIT_FOREVER: never). */
static int flock_within(int fd, int how, uint64_t ns)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old_sa;
	/* It repeats, so a tick that comes before flock() sleeps is not the last. */
	struct itimerval tick = { .it_interval = { .tv_usec = 10000 } }, none = {};
	uint64_t deadline = monotonic_ns() + ns;
	int err;

	if (!flock(fd, how | LOCK_NB))
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	if (ns == STATE_WAIT_FOREVER)
		return flock(fd, how) ? -errno : 0;
	tick.it_value.tv_sec = (time_t)(ns / NSEC_PER_SEC);
	tick.it_value.tv_usec = (suseconds_t)(ns % NSEC_PER_SEC / 1000) ?: 1;
	sigaction(SIGALRM, &sa, &old_sa); /* no SA_RESTART: a tick ends flock() */
	setitimer(ITIMER_REAL, &tick, NULL);
	for (;;) {
		if (!flock(fd, how)) {
			err = 0;
			break;
		}
		err = errno == EINTR ? -ETIMEDOUT : -errno;
		if (err != -ETIMEDOUT || monotonic_ns() >= deadline)
			break;
	}
	setitimer(ITIMER_REAL, &none, NULL);
	sigaction(SIGALRM, &old_sa, NULL);
	return err;
}

/* The pid holding fd's lock, from /proc/locks; 0 when unknown. */
static long lock_holder(int fd)
{
	unsigned int maj, min;
	unsigned long ino;
	char line[256];
	struct stat sb;
	long pid, found = 0;
	FILE *f;

	if (fstat(fd, &sb))
		return 0;
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		/* "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE ..."; "N: -> ..." waits. */
		if (sscanf(line, "%*d: FLOCK %*s %*s %ld %x:%x:%lu", &pid, &maj, &min, &ino) == 4 &&
		    ino == sb.st_ino && maj == major(sb.st_dev) && min == minor(sb.st_dev))
			found = pid;
	}
	fclose(f);
	return found;
}

int state_lock(int how)
{
	uint64_t quiet = lock_wait_ns < NSEC_PER_SEC ? lock_wait_ns : NSEC_PER_SEC;
	int fd, err;

	fd = lock_file_open();
	if (fd < 0)
		return fd;
	err = flock_within(fd, how, quiet);
	if (err == -ETIMEDOUT && lock_wait_ns > quiet) {
		fprintf(stderr, "sluice: waiting for another sluice command (pid %ld) to finish\n",
			lock_holder(fd));
		err = flock_within(fd, how,
				   lock_wait_ns == STATE_WAIT_FOREVER ? lock_wait_ns
								      : lock_wait_ns - quiet);
	}
	if (err) {
		lock_holder_pid = lock_holder(fd);
		close(fd);
		return err;
	}
	lock_held_fd = fd;
	return fd;
}

int state_lock_cmd(const char *cmd)
{
	int fd = state_lock(LOCK_EX);

	if (fd == -ETIMEDOUT)
		fail_runtime(cmd, 0,
			     "another sluice command (pid %ld) still holds %s/%s after --wait; "
			     "nothing changed",
			     lock_holder_pid, SLUICE_LOCK_DIR, SLUICE_LOCK_NAME);
	else if (fd == -EPERM)
		fail_runtime(cmd, 0,
			     "refusing the lock in %s: it must be root's own directory and file, "
			     "writable by root only, not a symlink",
			     SLUICE_LOCK_DIR);
	else if (fd < 0)
		fail_runtime(cmd, fd, "cannot lock %s/%s", SLUICE_LOCK_DIR, SLUICE_LOCK_NAME);
	return fd;
}

void state_unlock(int lock_fd)
{
	if (lock_fd < 0)
		return;
	if (lock_fd == lock_held_fd)
		lock_held_fd = -1;
	close(lock_fd); /* releases the flock */
}

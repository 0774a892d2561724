// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/vfs.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "table_hash.h"
#include "base/errors.h"
#include "pins/multiprog.h"
#include "pins/state.h"
#include "values/iface.h"
#include "values/rate.h"

#define BPFFS_ROOT "/sys/fs/bpf"

/*
 * Where the pins are reached: SLUICE_PIN_ROOT, or for a reader that cannot
 * pass /sys/fs/bpf (often 0700), the read-only bind mount of it that
 * attach --group makes (SLUICE_PIN_MIRROR).
 */
static const char *pin_root = SLUICE_PIN_ROOT;
/* Commands that only read open map pins BPF_F_RDONLY: file permission suffices. */
static bool pins_readonly;

void state_readonly(void)
{
	pins_readonly = true;
}

const char *state_pin_root(void)
{
	return pin_root;
}

/*
 * Every pin of an interface: its name, the map's name in the BPF object
 * (NULL for the link or, through libxdp, the program), and where struct
 * state keeps its fd.
 */
static const struct {
	const char *name;
	const char *obj_name;
	size_t offset;
} pins[] = {
	{ SLUICE_PIN_LINK, NULL, offsetof(struct state, link_fd) },
	{ SLUICE_PIN_PROG, NULL, offsetof(struct state, prog_fd) },
	{ SLUICE_MAP_BUCKETS, "buckets", offsetof(struct state, maps.buckets) },
	{ SLUICE_MAP_STATS, "stats", offsetof(struct state, stats_fd) },
	{ SLUICE_MAP_RULE_STATS, "rule_stats", offsetof(struct state, maps.rule_stats) },
	{ SLUICE_MAP_HOT, "hot", offsetof(struct state, maps.hot) },
	{ SLUICE_MAP_ADMISSION, "admission", offsetof(struct state, maps.admission) },
	{ SLUICE_MAP_AGGREGATES, "aggregates", offsetof(struct state, maps.aggregates) },
	{ SLUICE_MAP_CONFIG, "config", offsetof(struct state, maps.config) },
	{ SLUICE_MAP_GENERATION, ".data.generation", offsetof(struct state, maps.generation) },
	{ SLUICE_MAP_POLICIES, "policies", offsetof(struct state, maps.policies) },
	{ SLUICE_MAP_RULES_V4, "rules_v4", offsetof(struct state, maps.rules_v4) },
	{ SLUICE_MAP_RULES_V6, "rules_v6", offsetof(struct state, maps.rules_v6) },
	{ SLUICE_MAP_ALLOW_V4, "allow_v4", offsetof(struct state, maps.allow_v4) },
	{ SLUICE_MAP_ALLOW_V6, "allow_v6", offsetof(struct state, maps.allow_v6) },
	{ SLUICE_MAP_DENY_V4, "deny_v4", offsetof(struct state, maps.deny_v4) },
	{ SLUICE_MAP_DENY_V6, "deny_v6", offsetof(struct state, maps.deny_v6) },
	{ SLUICE_MAP_FLEET, ".data.fleet", offsetof(struct state, maps.fleet) },
	{ SLUICE_MAP_FLEET_RING, "fleet_ring", offsetof(struct state, fleet_ring_fd) },
	{ SLUICE_MAP_FLEET_USAGE, "fleet_usage", offsetof(struct state, fleet_usage_fd) },
	{ SLUICE_MAP_FILTER, "buckets_filter", offsetof(struct state, filter_fd) },
	{ SLUICE_MAP_PROVEN, "proven", offsetof(struct state, proven_fd) },
};

#define N_PINS (sizeof(pins) / sizeof(pins[0]))

static int *pin_fd(struct state *st, size_t i)
{
	return (int *)((char *)st + pins[i].offset);
}

static bool pin_is_link(size_t i)
{
	return pins[i].offset == offsetof(struct state, link_fd);
}

/*
 * Why the last directory check refused, for state_root_cmd(). Every
 * directory sluice pins in is checked on the way down, without following
 * symlinks: root's, and writable by root alone. Above the pin root a
 * sticky directory is fine too (bpffs mounted 1777): others cannot move or
 * remove root's entries there. With every directory so checked, nobody but
 * root can change what a path names, so libbpf may then pin by path.
 */
static char unsafe_why[PATH_MAX + 96];

static int dir_refuse(const char *path, const char *why)
{
	snprintf(unsafe_why, sizeof(unsafe_why), "refusing %s: %s", path, why);
	return -EPERM;
}

/* Opens parent/name, a directory that must be safe; -ENOENT if missing. */
static int dir_open_checked(int parent, const char *name, const char *path, bool sticky_ok)
{
	struct stat sb;
	int fd;

	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* A directory a reader may pass but not list (/run/sluice 0711): a path fd does. */
	if (fd < 0 && errno == EACCES)
		fd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOTDIR || errno == ELOOP)
			return dir_refuse(path, "not a directory (a symlink?)");
		return -errno;
	}
	if (fstat(fd, &sb)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (sb.st_uid != 0) {
		close(fd);
		return dir_refuse(path, "not owned by root (remove it, or chown it to root)");
	}
	if ((sb.st_mode & (S_IWGRP | S_IWOTH)) && !(sticky_ok && (sb.st_mode & S_ISVTX))) {
		close(fd);
		return dir_refuse(path, "writable by others than root (chmod go-w it)");
	}
	return fd;
}

/* Opens, checking each on the way, the pin root at root or (!itself) its parent. */
static int pin_root_walk_at(const char *root, bool itself)
{
	char path[PATH_MAX], *name, *next, *last;
	int fd, parent;

	snprintf(path, sizeof(path), "%s", root);
	last = strrchr(path, '/') + 1;
	unsafe_why[0] = '\0';
	fd = dir_open_checked(AT_FDCWD, "/", "/", true);
	for (name = path + 1; fd >= 0 && name; name = next) {
		if (name == last && !itself)
			break;
		next = strchr(name, '/');
		if (next)
			*next = '\0'; /* path is now the way so far, for messages */
		parent = fd;
		fd = dir_open_checked(parent, name, path, name != last);
		close(parent);
		if (next)
			*next++ = '/';
	}
	return fd;
}

static int pin_root_walk(bool itself)
{
	return pin_root_walk_at(SLUICE_PIN_ROOT, itself);
}

/*
 * The pin root, checked; -ENOENT when missing, -EPERM when unsafe. A
 * process that may not pass /sys/fs/bpf (-EACCES) reaches it through the
 * mirror, when there is one, and keeps to it from then on.
 */
static int pin_root_open(void)
{
	int fd = pin_root_walk_at(pin_root, true);

	if (fd == -EACCES && pin_root != (const char *)SLUICE_PIN_MIRROR) {
		int mirror = pin_root_walk_at(SLUICE_PIN_MIRROR, true);

		if (mirror == -ENOENT || mirror == -EACCES)
			return fd;
		pin_root = SLUICE_PIN_MIRROR;
		return mirror;
	}
	return fd;
}

int bpffs_ensure(void)
{
	struct statfs fs;
	int parent, fd;

	if (statfs(BPFFS_ROOT, &fs) || fs.f_type != BPF_FS_MAGIC) {
		if (mount("bpf", BPFFS_ROOT, "bpf", 0, "mode=0700"))
			return -errno;
	}
	parent = pin_root_walk(false);
	if (parent < 0)
		return parent;
	if (mkdirat(parent, strrchr(SLUICE_PIN_ROOT, '/') + 1, 0700) && errno != EEXIST) {
		int err = -errno;

		close(parent);
		return err;
	}
	close(parent);
	fd = pin_root_open();
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int state_root_cmd(const char *cmd)
{
	int fd = pin_root_open();

	if (fd == -ENOENT)
		return EXIT_OK;
	if (fd < 0)
		return state_fail_cmd(cmd, fd, NULL);
	close(fd);
	return EXIT_OK;
}

int state_fail_cmd(const char *cmd, int err, const char *ifname)
{
	if (err == -EPERM && unsafe_why[0])
		return fail_runtime(cmd, 0, "%s", unsafe_why);
	if (err == -EACCES)
		return fail_runtime(
			cmd, 0,
			"cannot read %s%s%s: permission denied (run it as root, or as a "
			"member of the group given to 'sluice attach --group')",
			SLUICE_PIN_ROOT, ifname ? "/" : "", ifname ? ifname : "");
	if (!ifname)
		return fail_runtime(cmd, err, "cannot open %s", SLUICE_PIN_ROOT);
	return fail_runtime(cmd, err, "cannot open the state of %s", ifname);
}

/*
 * The command lock lives outside bpffs, whose default mode lets anyone
 * create files there: in a directory only root may write, never reached
 * through a symlink.
 */
static int lock_dir_open(void)
{
	if (mkdir(SLUICE_LOCK_DIR, 0700) && errno != EEXIST)
		return -errno;
	/* The same checks as the pin directories', without sticky leniency. */
	return dir_open_checked(AT_FDCWD, SLUICE_LOCK_DIR, SLUICE_LOCK_DIR, false);
}

/* Is the mirror SLUICE_PIN_ROOT itself (the same directory)? */
static bool mirror_mounted(void)
{
	struct stat mirror, root;

	return !stat(SLUICE_PIN_MIRROR, &mirror) && !stat(SLUICE_PIN_ROOT, &root) &&
	       mirror.st_dev == root.st_dev && mirror.st_ino == root.st_ino;
}

/* fd's directory searchable (and, with what, more) by group and others. */
static int dir_grant(int fd, mode_t what)
{
	struct stat sb;

	if (fstat(fd, &sb))
		return -errno;
	if ((sb.st_mode & what) == what)
		return 0;
	return fchmod(fd, (sb.st_mode & 07777) | what) ? -errno : 0;
}

/*
 * A read-only bind mount of the pin root under /run/sluice (searchable by
 * all, root's): the group reaches the pins without passing /sys/fs/bpf.
 */
static int mirror_ensure(void)
{
	int run, err;

	run = lock_dir_open();
	if (run < 0)
		return run;
	err = dir_grant(run, S_IXGRP | S_IXOTH);
	if (!err && mkdirat(run, strrchr(SLUICE_PIN_MIRROR, '/') + 1, 0755) && errno != EEXIST)
		err = -errno;
	close(run);
	if (err || mirror_mounted())
		return err;
	if (mount(SLUICE_PIN_ROOT, SLUICE_PIN_MIRROR, NULL, MS_BIND, NULL) ||
	    mount(NULL, SLUICE_PIN_MIRROR, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL))
		return -errno;
	return 0;
}

int state_share_root(void)
{
	struct stat sb;
	int fd, err;

	fd = pin_root_open();
	if (fd < 0)
		return fd;
	/* Listing the pin root names interfaces, which ip link tells anyone. */
	err = dir_grant(fd, S_IRGRP | S_IXGRP | S_IROTH | S_IXOTH);
	close(fd);
	if (err)
		return err;
	if (!stat(BPFFS_ROOT, &sb) && (sb.st_mode & S_IXOTH))
		return 0;
	return mirror_ensure();
}

/*
 * With the last interface's state gone, the pin root attach made goes too,
 * so the machine is as before the first attach. Not a root shared with a
 * group (attach --group): a reader's bind mount of it, the mirror or the
 * exporter's (docs/operations.md), would go on showing the removed
 * directory, and the next attach's root would not reach that reader. Nor
 * what sluice would not have made: not a directory, or not root's.
 */
int state_remove_root(void)
{
	const char *name = strrchr(SLUICE_PIN_ROOT, '/') + 1;
	int parent, err = 0;
	struct stat sb;

	parent = pin_root_walk(false);
	if (parent < 0)
		return parent == -ENOENT ? 0 : parent;
	if (fstatat(parent, name, &sb, AT_SYMLINK_NOFOLLOW)) {
		err = errno == ENOENT ? 0 : -errno;
		goto out;
	}
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != 0 || (sb.st_mode & (S_IRWXG | S_IRWXO)) ||
	    mirror_mounted())
		goto out;
	/* ENOTEMPTY: something is pinned there, not through sluice (it holds the lock). */
	if (unlinkat(parent, name, AT_REMOVEDIR) && errno != ENOTEMPTY && errno != ENOENT)
		err = -errno;
out:
	close(parent);
	return err;
}

static int lock_file_open(void)
{
	struct stat sb;
	int dir, fd;

	dir = lock_dir_open();
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

#define STAGING_SUFFIX ":attaching"

/* An interface name, or one with the staging suffix: nothing else is a path. */
static bool state_name_valid(const char *name)
{
	char base[IF_NAMESIZE];
	const char *why, *colon = strchr(name, ':');
	size_t len = colon ? (size_t)(colon - name) : 0;

	if (!colon)
		return !ifname_check(name, &why);
	if (strcmp(colon, STAGING_SUFFIX) || len >= sizeof(base))
		return false;
	memcpy(base, name, len);
	base[len] = '\0';
	return !ifname_check(base, &why);
}

int state_path(const char *ifname, const char *name, char *buf, size_t len)
{
	int n;

	/* The last guard: a name that is no interface's never becomes a path. */
	if (!state_name_valid(ifname))
		return -EINVAL;
	if (name)
		n = snprintf(buf, len, "%s/%s/%s", pin_root, ifname, name);
	else
		n = snprintf(buf, len, "%s/%s", pin_root, ifname);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int state_staging_name(const char *ifname, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s" STAGING_SUFFIX, ifname);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * The directory of ifname (or a staging name) under the checked pin root,
 * itself checked; -ENOENT when missing. *root_fd, when asked for, keeps
 * the pin root open.
 */
static int state_dir_open(const char *ifname, int *root_fd)
{
	char path[PATH_MAX];
	int root, fd;

	fd = state_path(ifname, NULL, path, sizeof(path));
	if (fd)
		return fd;
	root = pin_root_open();
	if (root < 0)
		return root;
	fd = dir_open_checked(root, ifname, path, false);
	if (root_fd && fd >= 0)
		*root_fd = root;
	else
		close(root);
	return fd;
}

int state_mkdir(const char *ifname)
{
	int root, fd;

	root = pin_root_open();
	if (root < 0)
		return root;
	fd = state_name_valid(ifname) ? 0 : -EINVAL;
	if (!fd && mkdirat(root, ifname, 0700))
		fd = -errno;
	close(root);
	if (fd)
		return fd;
	fd = state_dir_open(ifname, NULL);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int state_publish(const char *staging, const char *ifname)
{
	int root, fd, err = 0;

	if (!state_name_valid(ifname))
		return -EINVAL;
	fd = state_dir_open(staging, &root);
	if (fd < 0)
		return fd;
	/* Never over an existing (even empty) directory of that name. */
	if (renameat2(root, staging, root, ifname, RENAME_NOREPLACE))
		err = -errno;
	close(fd);
	close(root);
	return err;
}

int state_remove_staged(const char *ifname)
{
	char staging[IF_NAMESIZE + 16];
	int err = state_staging_name(ifname, staging, sizeof(staging));

	return err ?: state_remove(staging);
}

/* 1 when the directory is there, 0 when not, or why it cannot be used. */
static int dir_exists(const char *name)
{
	int fd = state_dir_open(name, NULL);

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	close(fd);
	return 1;
}

int state_exists(const char *ifname)
{
	char staging[IF_NAMESIZE + 16];
	int err;

	err = dir_exists(ifname);
	if (err)
		return err;
	err = state_staging_name(ifname, staging, sizeof(staging));
	return err ?: dir_exists(staging);
}

/*
 * A pin of dir (checked by the caller), by path. A reader opens a map
 * BPF_F_RDONLY, which needs only read permission on the pin; the kernel
 * opens links and programs only read-write.
 */
static int pin_open(const char *dir, const char *name, bool map)
{
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = map && pins_readonly ? BPF_F_RDONLY : 0);
	char path[PATH_MAX];
	int fd, n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	fd = bpf_obj_get_opts(path, &opts);
	return fd < 0 ? -errno : fd;
}

/* dir_fd's entry name as a path, through /proc: it holds across a rename of the directory. */
static int path_at(char *buf, size_t len, int dir_fd, const char *name)
{
	int n = snprintf(buf, len, "/proc/self/fd/%d/%s", dir_fd, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int state_pin_open_at(int dir_fd, const char *name)
{
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = BPF_F_RDONLY);
	char path[64 + NAME_MAX];
	int fd, err;

	err = path_at(path, sizeof(path), dir_fd, name);
	if (err)
		return err;
	fd = bpf_obj_get_opts(path, &opts);
	return fd < 0 ? -errno : fd;
}

/* bpffs takes no '.' in a name: the staging suffix's ':' again. */
static void pin_staged_name(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s:new", name);
}

int state_pin_stage(int dir_fd, int fd, const char *name)
{
	char tmp[NAME_MAX], path[64 + NAME_MAX];
	int err;

	pin_staged_name(tmp, sizeof(tmp), name);
	err = path_at(path, sizeof(path), dir_fd, tmp);
	if (err)
		return err;
	unlinkat(dir_fd, tmp, 0); /* what a killed publish left */
	if (bpf_obj_pin(fd, path))
		return -errno;
	err = state_pin_share(dir_fd, tmp);
	if (err)
		unlinkat(dir_fd, tmp, 0);
	return err;
}

int state_pin_commit(int dir_fd, const char *name, bool keep)
{
	char tmp[NAME_MAX];

	pin_staged_name(tmp, sizeof(tmp), name);
	if (!keep)
		return unlinkat(dir_fd, tmp, 0) ? -errno : 0;
	return renameat(dir_fd, tmp, dir_fd, name) ? -errno : 0;
}

/*
 * A pin made in a directory shared with a group (attach --group: 0750
 * root:GROUP) is the group's to read: 0640 root:GROUP. Links and programs
 * stay 0600: the kernel opens them only read-write.
 */
int state_pin_share(int dir_fd, const char *name)
{
	struct stat sb;
	bool shared;

	if (fstat(dir_fd, &sb))
		return -errno;
	shared = sb.st_gid && (sb.st_mode & S_IRGRP);
	/* The mode while still the pinner's: once root's, changing it would take CAP_FOWNER. */
	if (fchmodat(dir_fd, name, shared ? 0640 : 0600, 0) ||
	    fchownat(dir_fd, name, 0, shared ? sb.st_gid : 0, AT_SYMLINK_NOFOLLOW))
		return -errno;
	return 0;
}

/* The pins already there follow the directory: the maps, and the live configuration. */
static int pins_reshare(int dir_fd)
{
	size_t i;
	int err = 0;

	for (i = 0; i < N_PINS && !err; i++)
		if (pins[i].obj_name && faccessat(dir_fd, pins[i].name, F_OK, 0) == 0)
			err = state_pin_share(dir_fd, pins[i].name);
	if (!err && faccessat(dir_fd, SLUICE_PIN_CONFIG_LIVE, F_OK, 0) == 0)
		err = state_pin_share(dir_fd, SLUICE_PIN_CONFIG_LIVE);
	return err;
}

int state_share(const char *ifname, gid_t group)
{
	bool shared = group != STATE_NO_GROUP;
	int fd = state_dir_open(ifname, NULL), err = 0;

	if (fd < 0)
		return fd;
	/* Never group-writable: the directory checks refuse that. */
	if (fchown(fd, 0, shared ? group : 0) || fchmod(fd, shared ? 0750 : 0700))
		err = -errno;
	if (!err)
		err = pins_reshare(fd);
	close(fd);
	return err;
}

gid_t state_group(const struct state *st)
{
	struct stat sb;

	if (st->maps.dir < 0 || fstat(st->maps.dir, &sb))
		return STATE_NO_GROUP;
	return sb.st_gid && (sb.st_mode & S_IRGRP) ? sb.st_gid : STATE_NO_GROUP;
}

/* Calls fn for the object's map of every pin that is a map. */
static int for_each_pinned_map(struct bpf_object *obj,
			       int (*fn)(struct bpf_map *map, size_t pin, void *arg), void *arg)
{
	struct bpf_map *map;
	size_t i;
	int err;

	for (i = 0; i < N_PINS; i++) {
		if (!pins[i].obj_name)
			continue;
		map = bpf_object__find_map_by_name(obj, pins[i].obj_name);
		if (!map)
			return -ENOENT;
		err = fn(map, i, arg);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Userspace makes each configuration's map without BTF (config_publish), so
 * the slot's template must have none either: Linux 6.1 compares the
 * BTF-derived timer offset of the two and refuses every update otherwise
 * (later kernels compare records, and take either). The template must stay
 * open until the object is loaded: the last one made is closed when the
 * next is, so a process keeps at most one.
 */
static int config_template = -1;

static int config_template_set(struct bpf_object *obj)
{
	struct bpf_map *config = bpf_object__find_map_by_name(obj, SLUICE_MAP_CONFIG);
	int fd, err;

	if (!config)
		return -ENOENT;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sluice_cfg_tpl", sizeof(__u32),
			    sizeof(struct sluice_config), 1, NULL);
	if (fd < 0)
		return -errno;
	err = bpf_map__set_inner_map_fd(config, fd);
	if (err) {
		close(fd);
		return err;
	}
	if (config_template >= 0)
		close(config_template);
	config_template = fd;
	return 0;
}

int state_prepare(struct bpf_object *obj, uint64_t max_sources)
{
	struct bpf_map *buckets = bpf_object__find_map_by_name(obj, "buckets");
	struct bpf_map *aggregates = bpf_object__find_map_by_name(obj, "aggregates");
	struct bpf_map *hot = bpf_object__find_map_by_name(obj, "hot");
	struct bpf_map *usage = bpf_object__find_map_by_name(obj, "fleet_usage");
	struct bpf_map *filter = bpf_object__find_map_by_name(obj, "buckets_filter");
	__u32 sets = table_sets_for(max_sources);
	int ncpu = libbpf_num_possible_cpus();
	int err;

	if (!buckets || !aggregates || !hot || !usage || !filter)
		return -ENOENT;
	if (ncpu < 0)
		return ncpu;
	err = bpf_map__set_max_entries(buckets, sets);
	if (!err)
		err = bpf_map__set_max_entries(filter, table_filter_entries_for(sets));
	if (!err)
		err = bpf_map__set_max_entries(usage, sets);
	if (!err)
		err = bpf_map__set_max_entries(aggregates, table_aggregate_sets_for(max_sources));
	/* The over-limit cache: one value per CPU, indexed by its number. */
	if (!err)
		err = bpf_map__set_max_entries(hot, (__u32)ncpu);
	return err ?: config_template_set(obj);
}

static int reuse_one(struct bpf_map *map, size_t pin, void *arg)
{
	return bpf_map__reuse_fd(map, *pin_fd(arg, pin));
}

int state_reuse(struct bpf_object *obj, struct state *st)
{
	return for_each_pinned_map(obj, reuse_one, st);
}

void state_from_object(struct bpf_object *obj, struct state *st)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < N_PINS; i++)
		*pin_fd(st, i) = pins[i].obj_name
					 ? bpf_object__find_map_fd_by_name(obj, pins[i].obj_name)
					 : -1;
	st->maps.dir = -1; /* not pinned yet */
}

struct pin_where {
	const char *ifname;
	int dir_fd;
};

static int pin_one(struct bpf_map *map, size_t pin, void *arg)
{
	const struct pin_where *w = arg;
	char path[PATH_MAX];
	int err;

	err = state_path(w->ifname, pins[pin].name, path, sizeof(path));
	if (!err)
		err = bpf_map__pin(map, path);
	return err ?: state_pin_share(w->dir_fd, pins[pin].name);
}

int state_pin(struct bpf_object *obj, const char *ifname)
{
	struct pin_where w = { .ifname = ifname, .dir_fd = state_dir_open(ifname, NULL) };
	int err;

	if (w.dir_fd < 0)
		return w.dir_fd;
	err = for_each_pinned_map(obj, pin_one, &w);
	close(w.dir_fd);
	return err;
}

int state_dir_fd(const char *ifname)
{
	return state_dir_open(ifname, NULL);
}

/* Which directory holds ifname's state: its own, else an interrupted attach's. */
static int state_dir_name(const char *ifname, struct state *st, char *name, size_t len)
{
	int err;

	snprintf(name, len, "%s", ifname);
	err = dir_exists(name);
	if (!err) {
		err = state_staging_name(ifname, name, len) ?: dir_exists(name);
		st->staged = err > 0;
	}
	if (err < 0)
		return err;
	if (!err)
		return -ENOENT;
	return state_path(name, NULL, st->dir, sizeof(st->dir));
}

int state_open(const char *ifname, struct state *st)
{
	char name[IF_NAMESIZE + 16];
	size_t i;
	int err;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < N_PINS; i++)
		*pin_fd(st, i) = -1;
	st->maps.dir = -1;
	snprintf(st->ifname, sizeof(st->ifname), "%s", ifname);
	err = state_dir_name(ifname, st, name, sizeof(name));
	if (err)
		return err;
	st->maps.dir = state_dir_open(name, NULL);
	if (st->maps.dir < 0)
		return st->maps.dir;

	/* A missing link or program is for state_health() to name; every map must be there. */
	for (i = 0; i < N_PINS; i++) {
		err = pin_open(st->dir, pins[i].name, pins[i].obj_name != NULL);
		if (err == -EACCES && !pins[i].obj_name && pins_readonly) {
			/* There, and root's alone: a reader judges health without it. */
			*(pin_is_link(i) ? &st->link_hidden : &st->prog_hidden) = true;
			continue;
		}
		*pin_fd(st, i) = err;
		if (err < 0 && pins[i].obj_name) {
			state_close(st);
			return err == -ENOENT ? -ESTALE : err;
		}
	}
	return 0;
}

void state_close(struct state *st)
{
	size_t i;

	for (i = 0; i < N_PINS; i++) {
		if (*pin_fd(st, i) >= 0)
			close(*pin_fd(st, i));
		*pin_fd(st, i) = -1;
	}
	if (st->maps.dir >= 0)
		close(st->maps.dir);
	st->maps.dir = -1;
}

/*
 * The link goes first, so that nothing filters while pins remain: unpinned
 * while this fd holds it, then detached; killed in between, the kernel
 * detaches it as this process's fds close. A state without its link pin is
 * what an interrupted detach leaves (state_health() says so).
 */
static int unpin_link(const char *ifname, int dir_fd)
{
	char path[PATH_MAX];
	int fd, err;

	err = state_path(ifname, SLUICE_PIN_LINK, path, sizeof(path));
	if (err)
		return err;
	fd = bpf_obj_get(path);
	if (fd < 0 && errno != ENOENT)
		return -errno;
	if (unlinkat(dir_fd, SLUICE_PIN_LINK, 0) && errno != ENOENT)
		err = -errno;
	if (fd >= 0 && bpf_link_detach(fd) && errno != ENOLINK && errno != EINVAL)
		err = err ?: -errno;
	if (fd >= 0)
		close(fd);
	return err;
}

static unsigned int prog_id_of(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (prog_fd < 0 || bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return 0;
	return info.id;
}

/* The ifindex of an interface or staging name ("IFACE:attaching"); 0 when gone. */
static int state_ifindex(const char *name)
{
	char ifname[IF_NAMESIZE];
	size_t len = strcspn(name, ":");

	if (len >= sizeof(ifname))
		return 0;
	memcpy(ifname, name, len);
	ifname[len] = '\0';
	return (int)if_nametoindex(ifname);
}

/*
 * Through libxdp, the program leaves the dispatcher before its pin goes:
 * killed in between, the pin of a program no longer running is what an
 * interrupted detach left. Should it fail, the pin stays, for a retry.
 */
static int unpin_prog(const char *ifname, int dir_fd)
{
	char path[PATH_MAX];
	int fd, ifindex, runs_on, err;

	err = state_path(ifname, SLUICE_PIN_PROG, path, sizeof(path));
	if (err)
		return err;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	ifindex = state_ifindex(ifname);
	/* Renamed, the interface still runs it: found by the program. */
	runs_on = mp_ifindex_of(prog_id_of(fd), ifindex);
	if (runs_on)
		ifindex = runs_on;
	err = ifindex ? mp_detach(fd, ifindex) : 0;
	close(fd);
	if (!err && unlinkat(dir_fd, SLUICE_PIN_PROG, 0) && errno != ENOENT)
		err = -errno;
	return err;
}

int state_remove(const char *ifname)
{
	int root, dir, err;
	size_t i;

	dir = state_dir_open(ifname, &root);
	if (dir < 0)
		return dir == -ENOENT ? 0 : dir;
	err = unpin_prog(ifname, dir);
	if (err) {
		close(dir);
		close(root);
		return err;
	}
	err = unpin_link(ifname, dir);
	for (i = 0; i < N_PINS; i++) {
		if (unlinkat(dir, pins[i].name, 0) && errno != ENOENT)
			err = err ?: -errno;
	}
	if (unlinkat(dir, SLUICE_PIN_CONFIG_LIVE, 0) && errno != ENOENT)
		err = err ?: -errno;
	unlinkat(dir, SLUICE_PIN_CONFIG_LIVE ":new", 0); /* what a killed publish left */
	close(dir);
	if (unlinkat(root, ifname, AT_REMOVEDIR) && errno != ENOENT)
		err = err ?: -errno;
	close(root);
	return err;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static bool name_listed(char (*names)[IF_NAMESIZE], int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

int state_list(char (*names)[IF_NAMESIZE], int max)
{
	char name[IF_NAMESIZE];
	struct dirent *de;
	size_t len;
	DIR *dir;
	int fd, n = 0;

	fd = pin_root_open();
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(dir)) && n < max) {
		if (!state_name_valid(de->d_name))
			continue;
		/* An interrupted attach is listed under its interface's name. */
		len = strcspn(de->d_name, ":"); /* shorter than IF_NAMESIZE: valid */
		memcpy(name, de->d_name, len);
		name[len] = '\0';
		if (!name_listed(names, n, name))
			memcpy(names[n++], name, strlen(name) + 1);
	}
	closedir(dir);
	qsort(names, (size_t)n, IF_NAMESIZE, name_cmp);
	return n;
}

const char *xdp_mode_name(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, opts);

	if (ifindex <= 0 || bpf_xdp_query(ifindex, 0, &opts))
		return "none";
	switch (opts.attach_mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "generic";
	case XDP_ATTACHED_HW:
		return "offload";
	case XDP_ATTACHED_MULTI:
		return "multi";
	default:
		return "none";
	}
}

unsigned int link_prog_id(int link_fd, unsigned int *ifindex)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);

	*ifindex = 0;
	if (link_fd < 0 || bpf_obj_get_info_by_fd(link_fd, &info, &len))
		return 0;
	*ifindex = info.xdp.ifindex;
	return info.prog_id;
}

int state_open_cmd(const char *cmd, const char *ifname, struct state *st)
{
	unsigned int prog_id;
	const char *health;
	int err;

	err = state_open(ifname, st);
	if (!err) {
		health = state_health(st, &prog_id);
		if (!strcmp(health, STATE_OK))
			return EXIT_OK;
		state_close(st);
	} else if (err == -ESTALE) {
		health = state_health(st, &prog_id);
	} else if (err == -ENOENT) {
		return fail_input(cmd, "%s is not attached", ifname);
	} else {
		return state_fail_cmd(cmd, err, ifname);
	}
	return state_stale_cmd(cmd, ifname, health);
}

int state_stale_cmd(const char *cmd, const char *ifname, const char *health)
{
	if (!strncmp(health, STATE_STALE, strlen(STATE_STALE)))
		health += strlen(STATE_STALE);
	return fail_runtime(cmd, 0, "%s: %s (run 'sluice detach %s')", ifname, health, ifname);
}

int state_open_locked(const char *cmd, const char *ifname, struct state *st, int *lock_fd)
{
	int ret;

	*lock_fd = -1;
	/* Says what is wrong without waiting for the lock, then checks again under it. */
	ret = state_open_cmd(cmd, ifname, st);
	if (ret)
		return ret;
	state_close(st);
	*lock_fd = state_lock_cmd(cmd);
	if (*lock_fd < 0)
		return EXIT_FAILURE_RUNTIME;
	ret = state_open_cmd(cmd, ifname, st);
	if (ret) {
		state_unlock(*lock_fd);
		*lock_fd = -1;
	}
	return ret;
}

/*
 * The link (or libxdp's dispatcher) follows its interface by index, so a
 * renamed interface goes on being limited: say where, as the old name no
 * longer reaches it.
 */
static const char *renamed_health(unsigned int link_ifindex)
{
	static __thread char health[IF_NAMESIZE + 64];
	char name[IF_NAMESIZE];

	if (!if_indextoname(link_ifindex, name))
		return STATE_STALE "interface was renamed";
	snprintf(health, sizeof(health),
		 STATE_STALE "interface was renamed to %s, where it still runs", name);
	return health;
}

/* Through libxdp: the pinned program must be one of the dispatcher's. */
static const char *multiprog_health(const struct state *st, unsigned int *prog_id)
{
	int ifindex, runs_on;

	*prog_id = prog_id_of(st->prog_fd);
	if (st->staged)
		return STATE_STALE "attach interrupted";
	ifindex = (int)if_nametoindex(st->ifname);
	runs_on = mp_ifindex_of(*prog_id, ifindex);
	if (runs_on && runs_on == ifindex)
		return STATE_OK;
	if (runs_on)
		return renamed_health((unsigned int)runs_on);
	if (!ifindex)
		return STATE_STALE "interface is gone";
	return STATE_STALE "program is not in the interface's XDP dispatcher";
}

bool state_multiprog(const struct state *st)
{
	return st->prog_fd >= 0 || st->prog_hidden;
}

/*
 * A reader that may not open the link (or program) pin sees it there, and
 * asks netlink what the interface runs: an XDP program, or none. It cannot
 * tell that program is sluice's (that takes CAP_SYS_ADMIN), so a renamed
 * or re-created interface that runs another program passes as ok.
 */
static const char *reader_health(const struct state *st, unsigned int *prog_id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, query);
	int ifindex = (int)if_nametoindex(st->ifname);

	*prog_id = 0;
	if (st->staged)
		return STATE_STALE "attach interrupted";
	if (!ifindex)
		return STATE_STALE "interface is gone";
	if (!bpf_xdp_query(ifindex, 0, &query))
		*prog_id = query.prog_id ?: query.drv_prog_id ?: query.skb_prog_id;
	return *prog_id ? STATE_OK : STATE_STALE "program is not attached";
}

const char *state_health(const struct state *st, unsigned int *prog_id)
{
	unsigned int ifindex, link_ifindex;

	if (st->link_hidden || st->prog_hidden)
		return reader_health(st, prog_id);
	if (state_multiprog(st))
		return multiprog_health(st, prog_id);
	*prog_id = link_prog_id(st->link_fd, &link_ifindex);
	if (st->staged)
		return STATE_STALE "attach interrupted";
	/* detach unpins the link first; maps without it are what it left. */
	if (st->link_fd < 0)
		return STATE_STALE "detach interrupted";
	ifindex = if_nametoindex(st->ifname);
	/* The kernel cuts the link of a deleted interface: ifindex 0. */
	if (!link_ifindex && *prog_id)
		return ifindex ? STATE_STALE "interface was deleted and created again"
			       : STATE_STALE "interface is gone";
	if (!ifindex)
		return link_ifindex ? renamed_health(link_ifindex)
				    : STATE_STALE "interface is gone";
	if (!*prog_id)
		return STATE_STALE "program is not attached";
	if (link_ifindex != ifindex)
		return renamed_health(link_ifindex);
	return STATE_OK;
}

int state_inspect(const char *ifname, const char **health)
{
	unsigned int prog_id;
	struct state st;
	int err;

	err = state_open(ifname, &st);
	if (err && err != -ESTALE)
		return err;
	*health = state_health(&st, &prog_id);
	state_close(&st);
	return strcmp(*health, STATE_OK) ? 1 : 0;
}

void layout_advice(char *buf, size_t len, const char *ifname, unsigned int running)
{
	/* The one wording of another layout, for every command and status. */
	if (!running || running == SLUICE_LAYOUT_VERSION)
		snprintf(buf, len,
			 "the pinned state of %s has another layout version than this sluice's "
			 "(%d), from another version of sluice: run 'sluice detach %s', then "
			 "attach and apply again (buckets start afresh)",
			 ifname, SLUICE_LAYOUT_VERSION, ifname);
	else
		snprintf(buf, len,
			 "the pinned state of %s has another layout version (%u) than this "
			 "sluice's (%d), from %s sluice: run 'sluice detach %s', then attach "
			 "and apply again (buckets start afresh)",
			 ifname, running, SLUICE_LAYOUT_VERSION,
			 running < SLUICE_LAYOUT_VERSION ? "an older" : "a newer", ifname);
}

int fail_state(const char *cmd, int err, const char *ifname, const char *doing)
{
	char advice[IF_NAMESIZE * 3 + 256];

	if (err == -EPROTO) {
		layout_advice(advice, sizeof(advice), ifname, 0);
		return fail_runtime(cmd, 0, "%s", advice);
	}
	return fail_runtime(cmd, err, "cannot %s of %s", doing, ifname);
}

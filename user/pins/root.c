// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* O_PATH, renameat2 */
/*
 * The pin root: where the pins are reached (SLUICE_PIN_ROOT, or its mirror
 * for a reader), the table of every pin, and the directory checks every
 * path sluice pins in passes.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/libbpf.h>
#include "base/errors.h"
#include "pins/internal.h"

/*
 * Where the pins are reached: SLUICE_PIN_ROOT, or for a reader that cannot
 * pass /sys/fs/bpf (often 0700), the read-only bind mount of it that
 * attach --group makes (SLUICE_PIN_MIRROR).
 */
const char *pin_root = SLUICE_PIN_ROOT;

/* Commands that only read open map pins BPF_F_RDONLY: file permission suffices. */
bool pins_readonly;

void state_readonly(void)
{
	pins_readonly = true;
}

const char *state_pin_root(void)
{
	return pin_root;
}

const struct pin_def pins[N_PINS] = {
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
	{ SLUICE_MAP_BANS, "bans", offsetof(struct state, maps.bans) },
	{ SLUICE_MAP_BAN_NOTES, "ban_notes", offsetof(struct state, ban_notes_fd) },
};

int *pin_fd(struct state *st, size_t i)
{
	return (int *)((char *)st + pins[i].offset);
}

bool pin_is_link(size_t i)
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
int dir_open_checked(int parent, const char *name, const char *path, bool sticky_ok)
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

int pin_root_walk(bool itself)
{
	return pin_root_walk_at(SLUICE_PIN_ROOT, itself);
}

/*
 * The pin root, checked; -ENOENT when missing, -EPERM when unsafe. A
 * process that may not pass /sys/fs/bpf (-EACCES) reaches it through the
 * mirror, when there is one, and keeps to it from then on.
 */
int pin_root_open(void)
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

const char *state_refusal(int err)
{
	return err == -EPERM && unsafe_why[0] ? unsafe_why : NULL;
}

int state_fail_cmd(const char *cmd, int err, const char *ifname)
{
	const char *refused = state_refusal(err);

	if (refused)
		return fail_runtime(cmd, 0, "%s", refused);
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
 * parent/name (path, for messages), a directory of sluice's own: made 0700
 * when missing, checked as the pin directories are (without sticky
 * leniency), then, if passable, made searchable by group and others.
 */
static int run_dir_make(int parent, const char *name, const char *path, bool passable)
{
	int fd, err;

	if (mkdirat(parent, name, 0700) && errno != EEXIST)
		return -errno;
	fd = dir_open_checked(parent, name, path, false);
	if (fd < 0 || !passable)
		return fd;
	err = dir_grant(fd, S_IXGRP | S_IXOTH);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * The command lock lives outside bpffs, whose default mode lets anyone
 * create files there: in a directory only root may write, never reached
 * through a symlink.
 */
int lock_dir_open(bool passable)
{
	return run_dir_make(AT_FDCWD, SLUICE_LOCK_DIR, SLUICE_LOCK_DIR, passable);
}

int run_dir_open(const char *name, bool passable)
{
	char path[PATH_MAX];
	int run, fd;

	run = lock_dir_open(passable);
	if (run < 0)
		return run;
	snprintf(path, sizeof(path), "%s/%s", SLUICE_LOCK_DIR, name);
	fd = run_dir_make(run, name, path, passable);
	close(run);
	return fd;
}

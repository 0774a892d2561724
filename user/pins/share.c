// SPDX-License-Identifier: GPL-2.0
/*
 * Sharing the pinned state with a group: the read-only mirror of the pin
 * root under /run/sluice, and the group's permissions on the pins.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "table_hash.h"
#include "pins/internal.h"

/* Is the mirror SLUICE_PIN_ROOT itself (the same directory)? */
static bool mirror_mounted(void)
{
	struct stat mirror, root;

	return !stat(SLUICE_PIN_MIRROR, &mirror) && !stat(SLUICE_PIN_ROOT, &root) &&
	       mirror.st_dev == root.st_dev && mirror.st_ino == root.st_ino;
}

int dir_grant(int fd, mode_t what)
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
	int run, err = 0;

	run = lock_dir_open(true);
	if (run < 0)
		return run;
	if (mkdirat(run, strrchr(SLUICE_PIN_MIRROR, '/') + 1, 0755) && errno != EEXIST)
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

// SPDX-License-Identifier: GPL-2.0
/*
 * Staging and publishing an interface's state: pins written under a
 * staging name, then renamed into place in one step.
 */
#define _GNU_SOURCE /* renameat2 */
#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pins/internal.h"
#include "values/iface.h"

#define STAGING_SUFFIX ":attaching"

/* An interface name, or one with the staging suffix: nothing else is a path. */
bool state_name_valid(const char *name)
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
int state_dir_open(const char *ifname, int *root_fd)
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
int dir_exists(const char *name)
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
int pin_open(const char *dir, const char *name, bool map)
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

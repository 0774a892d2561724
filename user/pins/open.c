// SPDX-License-Identifier: GPL-2.0
/*
 * Opening an interface's pinned state, and unpinning it; the list of
 * interfaces with state.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mount.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/errors.h"
#include "pins/multiprog.h"
#include "pins/internal.h"

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

unsigned int prog_id_of(int prog_fd)
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
	if (unlinkat(dir, SLUICE_PIN_LISTS_MIRRORED, 0) && errno != ENOENT)
		err = err ?: -errno;
	unlinkat(dir, SLUICE_PIN_LISTS_MIRRORED ":new", 0);
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

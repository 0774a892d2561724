// SPDX-License-Identifier: GPL-2.0
/*
 * sluice agent: one limit per source across many hosts (docs/fleet.md).
 * The command checks its options, reads the Redis password, takes the
 * interface's agent lock and runs the engine (fleet/agent.c) until a stop.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "base/errors.h"
#include "commands/commands.h"
#include "fleet/agent.h"

/* The first line of fd into buf (AGENT_PASSWORD_MAX bytes), reading no more than it needs. */
static int password_line(int fd, char *buf, const char **why)
{
	char line[AGENT_PASSWORD_MAX + 1];
	size_t got = 0, end;
	ssize_t n;

	while (got < sizeof(line) - 1) {
		n = read(fd, line + got, sizeof(line) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	line[got] = '\0';
	end = strcspn(line, "\r\n");
	if (!got) {
		*why = "cannot be read, or is empty";
		return -EIO;
	}
	if (end >= AGENT_PASSWORD_MAX) {
		*why = "has a first line longer than 255 bytes";
		return -EINVAL;
	}
	if (!end) {
		*why = "has an empty first line";
		return -EINVAL;
	}
	memcpy(buf, line, end);
	buf[end] = '\0';
	return 0;
}

/*
 * The password, FILE's first line: opened without blocking and refused
 * unless a regular file (a FIFO would hold the agent until a writer came,
 * a device might never end), or when others may read it.
 */
static int password_read(const char *path, char *buf, const char **why)
{
	struct stat sb;
	int fd, err;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		*why = "cannot be read";
		return -errno;
	}
	if (fstat(fd, &sb)) {
		*why = "cannot be read";
		err = -errno;
	} else if (!S_ISREG(sb.st_mode)) {
		*why = "is not a regular file";
		err = -EINVAL;
	} else if (sb.st_mode & S_IROTH) {
		*why = "is readable by every user (chmod o-r)";
		err = -EPERM;
	} else {
		err = password_line(fd, buf, why);
	}
	close(fd);
	return err;
}

static int agent_check(struct cli_args *a)
{
	char pw[AGENT_PASSWORD_MAX];
	const char *why = NULL;

	if (!a->given[OPT_REDIS])
		return fail_input("agent", "--redis HOST:PORT is required");
	if (a->given[OPT_REDIS_USER] && !a->given[OPT_REDIS_PASSWORD_FILE])
		return fail_input("agent", "--redis-user needs --redis-password-file");
	if (a->cmd.agent.password_file && password_read(a->cmd.agent.password_file, pw, &why))
		return fail_input("agent", "--redis-password-file %s: %s",
				  a->cmd.agent.password_file, why);
	return -1;
}

/* 0 when name in dir is still the file fd is; -EAGAIN when it went, or is another. */
static int lock_still_named(int fd, int dir, const char *name)
{
	struct stat held, named;

	if (fstat(fd, &held))
		return -errno;
	if (fstatat(dir, name, &named, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? -EAGAIN : -errno;
	return held.st_dev == named.st_dev && held.st_ino == named.st_ino ? 0 : -EAGAIN;
}

/* name in dir, opened (made if missing) and locked: its fd, or a negative errno. */
static int lock_take(int dir, const char *name)
{
	int fd, err;

	fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB))
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
	else
		err = lock_still_named(fd, dir, name);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * One agent per interface: a lock beside its report, which the agent
 * holding it removes as it ends (agent_unlock). A starter that opened the
 * file before that unlink locks a file no name leads to: it checks that
 * the name is still the file it locked, and tries again if not, so two
 * agents never both hold the interface's lock.
 */
static int agent_lock(const char *ifname)
{
	char name[32];
	int dir, fd;

	dir = fleet_dir_open(false);
	if (dir < 0)
		return dir;
	snprintf(name, sizeof(name), "%s.lock", ifname);
	do
		fd = lock_take(dir, name);
	while (fd == -EAGAIN);
	close(dir);
	return fd;
}

/* Removed while still held (see agent_lock), then let go. */
static void agent_unlock(const char *ifname, int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "%s/%s.lock", SLUICE_FLEET_DIR, ifname);
	unlink(path);
	close(fd);
}

/* Why agent_lock failed: another agent, or /run/sluice refused as unsafe. */
static int agent_lock_fail(const char *ifname, int err)
{
	if (err == -EBUSY)
		return fail_runtime("agent", 0, "%s: another agent runs for it", ifname);
	if (err == -EPERM)
		return state_fail_cmd("agent", err, ifname);
	return fail_runtime("agent", err, "cannot lock %s/%s.lock", SLUICE_FLEET_DIR, ifname);
}

static int agent_run(struct cli_args *a, struct state *unused)
{
	struct agent *ag = calloc(1, sizeof(*ag));
	int lock_fd, err, ret = EXIT_OK;

	(void)unused;
	if (!ag)
		return fail_runtime("agent", -ENOMEM, "out of memory");
	ag->stop_fd = -1;
	err = agent_signals(ag);
	if (err) {
		free(ag);
		return fail_runtime("agent", err, "cannot wait for signals");
	}
	err = state_open_cmd("agent", a->ifname, &ag->st);
	if (err) {
		close(ag->stop_fd);
		free(ag);
		return err;
	}
	lock_fd = agent_lock(a->ifname);
	if (lock_fd < 0) {
		ret = agent_lock_fail(a->ifname, lock_fd);
		goto out;
	}
	ag->ifname = a->ifname; /* for agent_stop, whatever fails */
	if (a->cmd.agent.password_file &&
	    password_read(a->cmd.agent.password_file, ag->password, &(const char *){ NULL }))
		err = -EACCES;
	err = err ?: agent_setup(ag, a->ifname, &a->cmd.agent);
	if (!err) {
		ret = agent_policies_supported(ag);
		if (ret >= 0)
			goto out;
		ret = EXIT_OK;
	}
	err = err ?: agent_hint_write(ag, true);
	if (!err)
		err = agent_loop(ag);
	agent_stop(ag);
	if (err == -ENODEV)
		ret = fail_runtime("agent", 0, "%s: detached, or attached anew: the agent stops",
				   a->ifname);
	else if (err == -EMEDIUMTYPE)
		ret = fail_runtime("agent", 0, "%s, so it stops", ag->stop_why);
	else if (err)
		ret = fail_runtime("agent", err, "%s: the fleet agent failed", a->ifname);
out:
	if (lock_fd >= 0)
		agent_unlock(a->ifname, lock_fd);
	agent_free(ag);
	free(ag);
	return ret;
}

const struct command cmd_agent = {
	.id = CMD_AGENT,
	.name = "agent",
	.summary = "share each source's limit with other hosts through Redis",
	.synopsis = "IFACE --redis HOST:PORT[,HOST:PORT...] [--period DURATION] [--fallback MODE] "
		    "[--hosts N] [--shadow] [--redis-user USER --redis-password-file FILE]",
	.description =
		"Run in the foreground until SIGINT, SIGTERM or SIGHUP (each a clean stop),\n"
		"syncing the usage of IFACE's heavy sources with every other host's through\n"
		"Redis (a single node or a Redis Cluster), so that a source gets its limit\n"
		"once across the fleet, not once per host. Packets never wait for Redis:\n"
		"each host meters locally and the agent moves a source's state forward every\n"
		"period. While Redis cannot be reached each host keeps its own limit\n"
		"(--fallback local) or a 1/N share of it (split), and says so in status and\n"
		"the exporter. See docs/fleet.md.",
	.iface = IFACE_REQUIRED,
	.caps = CAPS_LOAD,
	.state = USE_DAEMON,
	.check = agent_check,
	.run = agent_run,
};

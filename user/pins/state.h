/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pinned state under SLUICE_PIN_ROOT/<ifname>/: creating, opening,
 * locking, reading and removing it. Every command goes through here.
 */
#ifndef SLUICE_PINS_STATE_H
#define SLUICE_PINS_STATE_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "sluice.h"

struct sync_prog;

/* Every pinned map a policy lives in. */
struct policy_maps {
	int config, generation, policies;
	int rules_v4, rules_v6;
	int allow_v4, allow_v6, deny_v4, deny_v6;
	int rule_stats; /* per-slot counters, cleared when a set is rewritten */
	int admission;	/* per rule id: reset when an id is given to a new rule */
	int bans;	/* the penalty box: moved to a rule's new id, dropped with its rule */
	/* The set tables: a retired rule id is given again only once neither holds its buckets. */
	int buckets, aggregates;
	/* The per-CPU over-limit caches; their seeds come with the first configuration. */
	int hot;
	/* The fleet hint (.data.fleet), which the agent writes: a change's rebase keeps what it
	 * owes. */
	int fleet;
	/* The state's directory, where config_write pins each configuration; -1: not pinned yet. */
	int dir;
	/*
	 * The sync program (pins/sync.h), through which a change caps its
	 * buckets' debt; NULL: the datapath caps it at each source's next packet.
	 */
	const struct sync_prog *sync;
	/*
	 * The datapath's clock, to find the buckets in debt; NULL:
	 * CLOCK_MONOTONIC, which bpf_ktime_get_ns reads. Tests give theirs.
	 */
	uint64_t (*now_ns)(void);
};

struct state {
	char ifname[IF_NAMESIZE];
	char dir[PATH_MAX];
	int link_fd;
	int prog_fd; /* attached through libxdp's dispatcher: the program, and no link */
	int stats_fd;
	int fleet_ring_fd;  /* the fleet's candidates, which the agent reads */
	int fleet_usage_fd; /* each source way's usage this period, the datapath's own */
	int filter_fd;	    /* the source table's filter, the datapath's own */
	int proven_fd;	    /* sources that proved their address (--prove), for top */
	int ban_notes_fd;   /* the audit's notes of bans: which were written (outputs/audit.h) */
	struct policy_maps maps;
	bool staged; /* opened from what an interrupted attach left */
	/* A reader found the link (or program) pin there, but only root may open it. */
	bool link_hidden, prog_hidden;
};

/*
 * Readers (commands that need no capability) call this first: every map
 * pin is then opened BPF_F_RDONLY, which read permission on the pin allows.
 */
void state_readonly(void);
/* Where the pins are reached: SLUICE_PIN_ROOT or its mirror. */
const char *state_pin_root(void);
/*
 * attach --group mounts SLUICE_PIN_ROOT here too, read-only, so that its
 * group reaches the pins where /sys/fs/bpf lets nobody but root pass (a
 * 0700 bpffs, as systemd mounts it); readers fall back to it.
 */
#define SLUICE_PIN_MIRROR "/run/sluice/pins"
/*
 * Lets group read ifname's state: its directory 0750 root:group. Pins made
 * in it afterwards are 0640 root:group (state_pin_share), but the link and
 * program, which the kernel opens only read-write.
 */
int state_share(const char *ifname, gid_t group);
int state_pin_share(int dir_fd, const char *name);
/*
 * Makes a shared state reachable: the pin root readable and searchable
 * by all (it names interfaces only), and, when /sys/fs/bpf is not
 * searchable by all, the mirror. -EPERM without CAP_SYS_ADMIN to mount.
 */
int state_share_root(void);
/* The group that may read the state (its directory's), STATE_NO_GROUP when none. */
#define STATE_NO_GROUP ((gid_t)-1)
gid_t state_group(const struct state *st);
/* The map pinned as name in the directory dir_fd, opened BPF_F_RDONLY. */
int state_pin_open_at(int dir_fd, const char *name);
/*
 * Pins fd as name in the directory dir_fd in two steps, replacing what was
 * pinned there: staged under a temporary name, shared as the directory is
 * (a failure leaves nothing), then renamed over name (keep) or dropped. A
 * reader opens the old object or the new, never none.
 */
int state_pin_stage(int dir_fd, int fd, const char *name);
int state_pin_commit(int dir_fd, const char *name, bool keep);
/* A checked fd of an interface's (or staging name's) directory. */
int state_dir_fd(const char *ifname);

/*
 * Mounts bpffs on /sys/fs/bpf when nothing is mounted there and creates
 * SLUICE_PIN_ROOT (0700). Every directory on the way to a pin is checked
 * (no symlink, root's, writable by root alone); -EPERM when one is not.
 */
int bpffs_ensure(void);
/* For commands: EXIT_OK, or one line saying which directory is unsafe. */
int state_root_cmd(const char *cmd);
/* One line for err from a state_* call: which directory is unsafe, or else. */
int state_fail_cmd(const char *cmd, int err, const char *ifname);
/* Why a directory was refused as unsafe, when err (-EPERM) says one was; else NULL. */
const char *state_refusal(int err);
/*
 * The lock that serialises commands changing pinned state: a file in a
 * root-only directory outside bpffs (checked: root's, not group- or
 * world-writable, no symlink; else -EPERM).
 */
#define SLUICE_LOCK_DIR	   "/run/sluice"
#define SLUICE_LOCK_NAME   "lock"
#define STATE_WAIT_FOREVER UINT64_MAX
/* How long state_lock() waits (--wait); by default as long as it takes. */
void state_lock_wait(uint64_t ns);
/*
 * Takes the lock, exclusive (LOCK_EX) or shared (LOCK_SH), and returns a fd
 * for state_unlock(). After a second it says on stderr that it waits, and
 * for whom; -ETIMEDOUT when the --wait bound runs out.
 */
int state_lock(int how);
/* The exclusive lock for command cmd, printing why on failure (then < 0). */
int state_lock_cmd(const char *cmd);
void state_unlock(int lock_fd);
/* Does this process hold the lock? */
bool state_lock_held(void);
/*
 * A checked fd of SLUICE_LOCK_DIR/name, a directory of sluice's own beside
 * the lock (the fleet agent's reports): it and SLUICE_LOCK_DIR made 0700
 * when missing, as sluice(8) says, and both refused as the lock's is.
 * passable: both made searchable by all too (0711), for a group's reader
 * of a file in name that is the group's; never taken back, as another
 * interface's group may still read there.
 */
int run_dir_open(const char *name, bool passable);

int state_path(const char *ifname, const char *name, char *buf, size_t len);
/*
 * attach builds an interface's state in a hidden directory of this name
 * ("IFACE:attaching": no interface name has a ':', and bpffs allows no
 * '.'; state_list skips it), pins the link last, and
 * renames it into place in one step: killed at any moment, it leaves either
 * a whole state or a hidden one, which the next attach or detach removes
 * (its link detaches with it). Every state_* call takes it as an ifname.
 */
int state_staging_name(const char *ifname, char *buf, size_t len);
int state_publish(const char *staging, const char *ifname);
/* Makes the (checked, 0700) directory of an interface or staging name. */
int state_mkdir(const char *ifname);
/* Removes what an attach of ifname killed before it finished left, if anything. */
int state_remove_staged(const char *ifname);
/*
 * 1 when anything is pinned for ifname (its state, or what an interrupted
 * attach left), 0 when not, negative when its directory cannot be trusted.
 */
int state_exists(const char *ifname);
struct bpf_object;
/* The fds of a loaded (unpinned) object's maps, as state_open() would give. */
void state_from_object(struct bpf_object *obj, struct state *st);
/*
 * Readies an opened (not yet loaded) object: sizes its tables for
 * max_sources sources and gives its config slot a template the
 * configurations userspace makes will match.
 */
int state_prepare(struct bpf_object *obj, uint64_t max_sources);
/* Makes an opened (not yet loaded) object use the pinned maps of st. */
int state_reuse(struct bpf_object *obj, struct state *st);
/* Pins every map of a loaded object under the interface's directory. */
int state_pin(struct bpf_object *obj, const char *ifname);
/* Pins the program prog_fd there (SLUICE_PIN_PROG): what attach --multiprog keeps. */
int state_pin_prog(int prog_fd, const char *ifname);
/* Attaches prog_fd to ifindex through a new link, pinned there (SLUICE_PIN_LINK). */
int state_pin_link(int prog_fd, int ifindex, uint32_t xdp_flags, const char *ifname);
/*
 * -ENOENT when the interface has no sluice state; else opens it, or what an
 * interrupted attach left (st->staged); -ESTALE when a map pin is missing
 * (st->ifname and st->staged are still set, for state_health()).
 */
int state_open(const char *ifname, struct state *st);
void state_close(struct state *st);
/* Removes every pin, the link first, and the directory; missing pins are fine. */
int state_remove(const char *ifname);
/*
 * Once no interface is left: removes the pin root, unless it was shared
 * with a group (attach --group) or anything is in it; 0 then too.
 */
int state_remove_root(void);
/* Names of every interface with pinned state; returns the count. */
int state_list(char (*names)[IF_NAMESIZE], int max);

/*
 * For commands: the same, printing one line and returning an exit status
 * (EXIT_OK on success): 2 when nothing is attached, 1 when the state is
 * stale (pointing to 'sluice detach'). _locked also takes the lock
 * (released by state_unlock), for commands that change the state.
 */
int state_open_cmd(const char *cmd, const char *ifname, struct state *st);
int state_open_locked(const char *cmd, const char *ifname, struct state *st, int *lock_fd);
/* "IFACE: why (run 'sluice detach IFACE')" for a stale state; EXIT_FAILURE_RUNTIME. */
int state_stale_cmd(const char *cmd, const char *ifname, const char *health);

/* "native", "generic" or "none" for what is attached to ifindex. */
const char *xdp_mode_name(int ifindex);
/* Program id of the pinned link, 0 when unknown. */
unsigned int link_prog_id(int link_fd, unsigned int *ifindex);

#define STATE_OK    "ok"
#define STATE_STALE "stale: "
/*
 * STATE_OK when the pinned link runs the program on the interface, else
 * STATE_STALE and why; *prog_id is the program's id, 0 when unknown. The
 * one judge of an interface's state: every command says what it says.
 */
const char *state_health(const struct state *st, unsigned int *prog_id);
/* Attached through libxdp's dispatcher (attach --multiprog)? */
bool state_multiprog(const struct state *st);
/* 0: attached and ok; 1: stale (*health says why); -ENOENT: nothing pinned. */
int state_inspect(const char *ifname, const char **health);

/*
 * What to do about state of another layout than this sluice's, in one line
 * (the one wording, for fail_state and status): running is the state's
 * layout version, 0 when unknown.
 */
void layout_advice(char *buf, size_t len, const char *ifname, unsigned int running);
/*
 * A failed read of IFACE's pinned state ("cannot DOING of IFACE: ..."), with
 * advice when the state has another layout (-EPROTO); EXIT_FAILURE_RUNTIME.
 */
int fail_state(const char *cmd, int err, const char *ifname, const char *doing);

#endif /* SLUICE_PINS_STATE_H */

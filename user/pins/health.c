// SPDX-License-Identifier: GPL-2.0
/*
 * Whether pinned state is whole and its program runs where it should, and
 * the one message for state of another layout.
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include "base/errors.h"
#include "pins/multiprog.h"
#include "pins/internal.h"

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

// SPDX-License-Identifier: GPL-2.0
/* The sync program on pinned maps (sync.h). */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
/* sluice.h before the skeleton: the fleet hint's type */
#include "sluice.h"
#include "sluice.skel.h"
#include "pins/datapath.h"
#include "pins/sync.h"

int sync_open(struct state *st, struct sync_prog *sp)
{
	int err;

	memset(sp, 0, sizeof(*sp));
	sp->skel = datapath_open_here();
	if (!sp->skel)
		return -errno;
	bpf_program__set_autoload(sp->skel->progs.sluice_xdp, false);
	err = state_prepare(sp->skel->obj, SLUICE_DEFAULT_MAX_SOURCES) ?:
	      state_reuse(sp->skel->obj, st) ?: sluice__load(sp->skel);
	if (err) {
		sync_close(sp);
		return err;
	}
	sp->prog_fd = bpf_program__fd(sp->skel->progs.sluice_fleet_sync);
	sp->batch_fd = bpf_map__fd(sp->skel->maps.fleet_batch);
	return 0;
}

int sync_run(const struct sync_prog *sp, struct sluice_fleet_batch *b)
{
	unsigned char frame[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = frame, .data_size_in = sizeof(frame),
		    .repeat = 1);
	__u32 zero = 0;

	if (bpf_map_update_elem(sp->batch_fd, &zero, b, 0) ||
	    bpf_prog_test_run_opts(sp->prog_fd, &run) ||
	    bpf_map_lookup_elem(sp->batch_fd, &zero, b))
		return -errno;
	return 0;
}

void sync_close(struct sync_prog *sp)
{
	sluice__destroy(sp->skel);
	memset(sp, 0, sizeof(*sp));
}

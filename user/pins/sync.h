/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The datapath's sync program (bpf/fleet.h) on an interface's pinned maps:
 * the steps on a bucket userspace cannot take itself, since only BPF may
 * compare-and-swap a value of a map that holds a spin lock. The fleet
 * agent syncs through it; a change caps debt through it (docs/design.md).
 */
#ifndef SLUICE_PINS_SYNC_H
#define SLUICE_PINS_SYNC_H

#include "sluice.h"
#include "pins/state.h"

struct sluice;

struct sync_prog {
	struct sluice *skel; /* NULL when the fds belong to someone else (tests) */
	int prog_fd, batch_fd;
};

/* Loads the sync program alone (the XDP program stays unloaded) on st's maps. */
int sync_open(struct state *st, struct sync_prog *sp);
/* Runs b's entries, in place: their results fill b. */
int sync_run(const struct sync_prog *sp, struct sluice_fleet_batch *b);
void sync_close(struct sync_prog *sp);

#endif /* SLUICE_PINS_SYNC_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sharing an interface through libxdp's dispatcher (attach --multiprog):
 * sluice's program runs as one of the dispatcher's programs, beside
 * xdp-filter or anything else loaded through libxdp. sluice pins its maps
 * and its program (SLUICE_PIN_PROG) under its own directory as always; the
 * dispatcher and the links into it are libxdp's, under /sys/fs/bpf/xdp/.
 */
#ifndef SLUICE_PINS_MULTIPROG_H
#define SLUICE_PINS_MULTIPROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/bpf.h>

/*
 * sluice's place in the dispatcher: libxdp runs lower numbers first, and
 * programs without a run config of their own get 50. xdp-filter takes 10,
 * so its stateless drops come first and spend no bucket; sluice comes
 * before every default-priority program, which may end the chain with
 * XDP_TX or XDP_REDIRECT. Only XDP_PASS goes on to the next program.
 */
#define MP_RUN_PRIO 20

/* One XDP program on an interface: a dispatcher's component, or the only one. */
struct mp_prog {
	char name[BPF_OBJ_NAME_LEN];
	unsigned int id;
	unsigned int prio; /* 0 outside a dispatcher */
};

/*
 * 0 when this kernel runs libxdp's dispatcher: it takes extension programs
 * (freplace). Else negative: -EPERM where the kernel refuses them.
 */
int mp_supported(void);
struct bpf_object;
/*
 * Hands the opened (not loaded) object to libxdp, which loads it as an
 * extension of a new dispatcher and swaps that dispatcher in. The object's
 * maps are then loaded as for sluice__load().
 */
int mp_attach(struct bpf_object *obj, const char *prog_name, int ifindex, uint32_t xdp_flags);
/* Takes the program prog_fd out of ifindex's dispatcher; 0 when it was not in it. */
int mp_detach(int prog_fd, int ifindex);
/*
 * The id of the XDP program on ifindex in any mode, its name in name ("?"
 * when unknown); 0 when none runs or the query fails.
 */
unsigned int xdp_prog_on(int ifindex, char *name, size_t len);
/*
 * What runs on ifindex: *dispatcher tells whether it is libxdp's; then the
 * dispatcher's programs, else the one program. Returns the count (0: none).
 */
int mp_programs(int ifindex, bool *dispatcher, struct mp_prog *progs, int max);
/* 1 when program prog_id runs in ifindex's dispatcher, 0 when not. */
int mp_runs(int ifindex, unsigned int prog_id);
/*
 * The interface whose dispatcher runs prog_id: first when it does (as
 * mp_runs says), else another that does (a renamed interface; prog_id 0
 * matches none); 0 when none.
 */
int mp_ifindex_of(unsigned int prog_id, int first);
/*
 * Takes the programs called name out of ifindex's dispatcher: what an
 * attach --multiprog killed before it pinned its program left. Returns
 * how many.
 */
int mp_remove_named(int ifindex, const char *name);

#endif /* SLUICE_PINS_MULTIPROG_H */

// SPDX-License-Identifier: GPL-2.0
/* The per-CPU counter arrays: an entry summed over every CPU, or cleared on all. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "maps/percpu.h"

int stats_read_at(int fd, __u32 index, struct sluice_stats *sum)
{
	struct sluice_stats *percpu;
	int ncpu, cpu, i, err = 0;

	ncpu = libbpf_num_possible_cpus();
	if (ncpu < 0)
		return ncpu;
	percpu = calloc((size_t)ncpu, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &index, percpu)) {
		err = -errno;
		goto out;
	}
	memset(sum, 0, sizeof(*sum));
	for (cpu = 0; cpu < ncpu; cpu++) {
		for (i = 0; i < SLUICE_CNT_MAX; i++) {
			sum->c[i].packets += percpu[cpu].c[i].packets;
			sum->c[i].bytes += percpu[cpu].c[i].bytes;
		}
	}
out:
	free(percpu);
	return err;
}

int stats_read(int stats_fd, struct sluice_stats *sum)
{
	return stats_read_at(stats_fd, 0, sum);
}

int stats_clear_at(int fd, __u32 index)
{
	struct sluice_stats *zero;
	int ncpu, err = 0;

	ncpu = libbpf_num_possible_cpus();
	if (ncpu < 0)
		return ncpu;
	zero = calloc((size_t)ncpu, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(fd, &index, zero, BPF_ANY))
		err = -errno;
	free(zero);
	return err;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-jit-lines: where a loaded BPF program spends a profile's samples,
 * by source line. Reads sampled instruction addresses (`perf script -F ip`)
 * on stdin and maps each to the source line whose JIT code holds it, with
 * the program's jited line info: what `perf annotate` would show with
 * libbfd, which Debian's perf and bpftool are built without.
 *
 *   sluice-jit-lines PROG_ID [LINES] < addresses
 *
 * Prints the LINES (default 25) busiest lines, each as a share of all the
 * addresses read, so that they compare with `perf report`'s shares.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

struct jit_line {
	__u64 addr;	  /* where its JIT code starts */
	__u32 line;	  /* index into the program's line info */
	unsigned samples; /* of the line info entry */
};

struct prog_lines {
	struct bpf_prog_info info;
	struct bpf_line_info *line_info;
	__u64 *jited_line_info;
	__u64 *ksyms;
	__u32 *func_lens;
	struct btf *btf;
};

static int fetch_info(int fd, struct prog_lines *p)
{
	__u32 len = sizeof(p->info);
	__u32 lines, funcs;

	memset(&p->info, 0, sizeof(p->info));
	if (bpf_obj_get_info_by_fd(fd, &p->info, &len))
		return -errno;
	lines = p->info.nr_line_info;
	funcs = p->info.nr_jited_ksyms;
	if (!lines || p->info.nr_jited_line_info != lines)
		return -ENODATA;
	p->line_info = calloc(lines, sizeof(*p->line_info));
	p->jited_line_info = calloc(lines, sizeof(__u64));
	p->ksyms = calloc(funcs, sizeof(__u64));
	p->func_lens = calloc(funcs, sizeof(__u32));
	if (!p->line_info || !p->jited_line_info || !p->ksyms || !p->func_lens)
		return -ENOMEM;
	memset(&p->info, 0, sizeof(p->info));
	p->info.nr_line_info = lines;
	p->info.line_info_rec_size = sizeof(*p->line_info);
	p->info.line_info = (__u64)(unsigned long)p->line_info;
	p->info.nr_jited_line_info = lines;
	p->info.jited_line_info_rec_size = sizeof(__u64);
	p->info.jited_line_info = (__u64)(unsigned long)p->jited_line_info;
	p->info.nr_jited_ksyms = funcs;
	p->info.jited_ksyms = (__u64)(unsigned long)p->ksyms;
	p->info.nr_jited_func_lens = funcs;
	p->info.jited_func_lens = (__u64)(unsigned long)p->func_lens;
	len = sizeof(p->info);
	if (bpf_obj_get_info_by_fd(fd, &p->info, &len))
		return -errno;
	p->btf = btf__load_from_kernel_by_id(p->info.btf_id);
	return p->btf ? 0 : -errno;
}

static int by_addr(const void *a, const void *b)
{
	const struct jit_line *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_samples(const void *a, const void *b)
{
	const struct jit_line *x = a, *y = b;

	return (y->samples > x->samples) - (y->samples < x->samples);
}

/* Whether addr is in one of the program's functions (the main one or a global one). */
static int in_program(const struct prog_lines *p, __u64 addr)
{
	__u32 f;

	for (f = 0; f < p->info.nr_jited_ksyms; f++)
		if (addr >= p->ksyms[f] && addr < p->ksyms[f] + p->func_lens[f])
			return 1;
	return 0;
}

/* The line whose code holds addr: the last one starting at or before it. */
static struct jit_line *line_of(struct jit_line *lines, __u32 n, __u64 addr)
{
	__u32 lo = 0, hi = n;

	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (lines[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &lines[lo - 1] : NULL;
}

/* Several line info entries may name one source line: print each source line once. */
static void print_top(const struct prog_lines *p, struct jit_line *lines, __u32 n,
		      unsigned long total, unsigned long inside, unsigned top)
{
	unsigned printed = 0;
	__u32 i, j;

	printf("%5.1f%% of %lu samples in the program\n", total ? 100.0 * inside / total : 0.0,
	       total);
	for (i = 0; i < n; i++) /* merge entries of one source line into the first */
		for (j = i + 1; j < n && lines[i].samples; j++) {
			const struct bpf_line_info *a = &p->line_info[lines[i].line];
			const struct bpf_line_info *b = &p->line_info[lines[j].line];

			if (a->file_name_off == b->file_name_off &&
			    BPF_LINE_INFO_LINE_NUM(a->line_col) ==
				    BPF_LINE_INFO_LINE_NUM(b->line_col)) {
				lines[i].samples += lines[j].samples;
				lines[j].samples = 0;
			}
		}
	qsort(lines, n, sizeof(*lines), by_samples);
	for (i = 0; i < n && printed < top && lines[i].samples; i++, printed++) {
		const struct bpf_line_info *li = &p->line_info[lines[i].line];
		const char *file = btf__name_by_offset(p->btf, li->file_name_off);
		const char *text = btf__name_by_offset(p->btf, li->line_off);
		const char *base = file ? strrchr(file, '/') : NULL;

		while (text && (*text == ' ' || *text == '\t'))
			text++;
		printf("%5.1f%%  %s:%u  %.70s\n", 100.0 * lines[i].samples / total,
		       base   ? base + 1
		       : file ? file
			      : "?",
		       BPF_LINE_INFO_LINE_NUM(li->line_col), text ? text : "");
	}
}

/* A whole decimal number below 2^32, else -1. */
static long long number_of(const char *s)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno || *end || v > 0xffffffffULL ? -1 : (long long)v;
}

int main(int argc, char **argv)
{
	unsigned long total = 0, inside = 0;
	struct prog_lines p = { 0 };
	struct jit_line *lines, *l;
	long long id, top = 25;
	char buf[128];
	__u32 i, n;
	int fd, err;

	id = argc > 1 ? number_of(argv[1]) : -1;
	if (argc == 3)
		top = number_of(argv[2]);
	if (argc < 2 || argc > 3 || id < 0 || top < 0) {
		fprintf(stderr, "usage: sluice-jit-lines PROG_ID [LINES] < addresses\n");
		return 2;
	}
	fd = bpf_prog_get_fd_by_id((__u32)id);
	err = fd < 0 ? -errno : fetch_info(fd, &p);
	if (err) {
		fprintf(stderr, "sluice-jit-lines: program %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	n = p.info.nr_line_info;
	lines = calloc(n, sizeof(*lines));
	if (!lines)
		return 1;
	for (i = 0; i < n; i++)
		lines[i] = (struct jit_line){ .addr = p.jited_line_info[i], .line = i };
	qsort(lines, n, sizeof(*lines), by_addr);
	while (fgets(buf, sizeof(buf), stdin)) {
		__u64 addr = strtoull(buf, NULL, 16);

		total++;
		if (!in_program(&p, addr) || !(l = line_of(lines, n, addr)))
			continue;
		l->samples++;
		inside++;
	}
	print_top(&p, lines, n, total, inside, (unsigned)top);
	return 0;
}

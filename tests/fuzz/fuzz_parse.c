// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the datapath parser (bpf/parse.h, built as plain C)
 * on arbitrary bytes, under ASan and UBSan, must agree with the reference
 * parser on the class of every frame and on everything the limiter keys
 * and classifies on. Any difference aborts with both answers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "../../bpf/parse.h"
#include "reference.h"

static void disagree(const char *what, const uint8_t *d, size_t len)
{
	size_t i;

	fprintf(stderr, "parse.h and the reference disagree on %s for this %zu-byte frame:\n", what,
		len);
	for (i = 0; i < len; i++)
		fprintf(stderr, "%02x%s", d[i], i % 16 == 15 ? "\n" : " ");
	fputc('\n', stderr);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ref_packet ref;
	struct packet pkt;
	enum ref_class want;
	uint8_t *copy;
	int got;

	/*
	 * An exact-size copy, so ASan catches a read one byte past the end. The
	 * frame starts 2 bytes in, as drivers place it (NET_IP_ALIGN), which
	 * aligns the IP header; UBSan checks alignment too.
	 */
	copy = malloc(size + 2);
	if (!copy)
		return 0;
	memcpy(copy + 2, data, size);
	memset(&pkt, 0, sizeof(pkt));
	got = parse_frame(copy + 2, copy + 2 + size, &pkt);
	want = ref_parse(copy + 2, size, &ref);
	if ((want == REF_IP) != (got == PARSE_IP) || (want == REF_NON_IP) != (got == PARSE_NON_IP))
		disagree("the class", data, size);
	if (got == PARSE_IP) {
		if (pkt.family != ref.family ||
		    memcmp(pkt.addr, ref.addr, ref.family == 4 ? 4 : 16))
			disagree("the source", data, size);
		if (pkt.proto != ref.proto || pkt.dport != ref.dport || pkt.tcp_syn != ref.syn)
			disagree("the L4 class", data, size);
	}
	free(copy);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Which CIDRs of a list the bans overlap (user/maps/bans.c, deny del):
 * found through an index in address order, against the definition tried
 * pair by pair here, one CIDR holding the other, on lists dense enough
 * in a small space that most keys overlap some and some overlap many.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "unit.h"
#include "maps/bans.h"

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint32_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* An address of 10.0.0.0/20 or 2001:db8::/116 (its last 12 bits random), a /26 to a /32 or a /122
 * to a /128. */
static void random_cidr(struct cidr *c, bool v6)
{
	unsigned int len = v6 ? 122 + next_random() % 7 : 26 + next_random() % 7;
	uint32_t low = next_random() & 0xfff;
	int i, keep;

	memset(c, 0, sizeof(*c));
	c->family = v6 ? SLUICE_FAMILY_IPV6 : SLUICE_FAMILY_IPV4;
	c->len = (uint8_t)len;
	if (v6) {
		c->addr[0] = htonl(0x20010db8);
		c->addr[3] = htonl(low);
	} else {
		c->addr[0] = htonl(0x0a000000 | low);
	}
	for (i = 0; i < 4; i++) {
		keep = (int)len - 32 * i;
		c->addr[i] &= keep <= 0 ? 0 : keep >= 32 ? ~0U : htonl(~0U << (32 - keep));
	}
}

static void key_of(struct sluice_key *k, const struct cidr *c)
{
	memset(k, 0, sizeof(*k));
	k->family = c->family;
	k->prefix_len = c->len;
	k->policy = 1;
	memcpy(k->addr, c->addr, sizeof(k->addr));
}

/* One list and one set of bans: the index's counts against the pairs'. */
static int round_wrong(size_t cidrs, size_t keys, int *overlapping)
{
	struct ban_entry bans[64];
	struct ban_list bl = { .items = bans, .count = keys };
	struct list_entry items[128];
	struct cidr_list l = { .items = items, .count = cidrs };
	int got[128], want, wrong = 0;
	struct cidr k;
	size_t i, j;

	for (i = 0; i < cidrs; i++) {
		memset(&items[i], 0, sizeof(items[i]));
		/* Some twice: each place in the list counts. */
		if (i && next_random() % 8 == 0)
			items[i].cidr = items[next_random() % i].cidr;
		else
			random_cidr(&items[i].cidr, next_random() % 4 == 0);
	}
	for (j = 0; j < keys; j++) {
		random_cidr(&k, next_random() % 4 == 0);
		key_of(&bans[j].key, &k);
	}
	if (bans_overlapping(&bl, &l, got))
		return -1;
	for (i = 0; i < cidrs; i++) {
		want = 0;
		for (j = 0; j < keys; j++) {
			ban_key_cidr(&bans[j].key, &k);
			want += cidr_contains(&k, &items[i].cidr) ||
				cidr_contains(&items[i].cidr, &k);
		}
		wrong += got[i] != want;
		*overlapping += want > 0;
	}
	return wrong;
}

static void test_overlapping(void)
{
	int r, wrong = 0, overlapping = 0, n = 0;

	for (r = 0; r < 400; r++) {
		wrong += round_wrong(128, 64, &overlapping);
		n += 128;
	}
	check(!wrong && overlapping > n / 10 && overlapping < n * 9 / 10,
	      "deny del: the CIDRs each ban overlaps, found by address, are those tried pair by pair",
	      "%d of %d counts wrong; %d overlap a ban", wrong, n, overlapping);
}

void suite_bans(void)
{
	test_overlapping();
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The penalty box (issue 36.3, bpf/ban.h) through BPF_PROG_TEST_RUN under
 * the test clock: a key is banned once its own bucket refused more than N
 * packets in the period, not before (the over-limit cache's refusals
 * counted when they reach the bucket); a ban holds while the bucket would
 * pass, then expires; a repeat within --ban-memory escalates, up to
 * --ban-max; a source under its limit is never banned, even while forged
 * sources flood the rule's overflow bucket, nor one refused only by that
 * bucket; an allowed source is never banned; IPv6 keys ban by prefix.
 */
#include <linux/bpf.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "maps/bans.h"
#include "maps/config.h"
#include "suites.h"

#define T0 (1000 * NSEC_PER_SEC)
#define MS (NSEC_PER_SEC / 1000)

static int send_from(struct fixture *fx, const char *src, int n)
{
	struct frame_spec spec = { .family = strchr(src, ':') ? 6 : 4, .payload = 18, .src = src };

	return fixture_passes(fx, &spec, n);
}

/* The ban entry whose key holds src (its prefix), in force or not; false when none. */
static bool ban_of(struct fixture *fx, const char *src, struct sluice_ban *out)
{
	struct cidr c = { 0 };
	struct ban_list l;
	bool found = false;
	size_t i;

	c.family = strchr(src, ':') ? SLUICE_FAMILY_IPV6 : SLUICE_FAMILY_IPV4;
	c.len = c.family == SLUICE_FAMILY_IPV6 ? 128 : 32;
	inet_pton(c.family == SLUICE_FAMILY_IPV6 ? AF_INET6 : AF_INET, src, c.addr);
	if (bans_read(fx->st.maps.bans, 1, &l))
		return false;
	for (i = 0; i < l.count && !found; i++) {
		struct cidr k;

		ban_key_cidr(&l.items[i].key, &k);
		if (cidr_contains(&k, &c)) {
			*out = l.items[i].ban;
			found = true;
		}
	}
	ban_list_free(&l);
	return found;
}

static bool banned_at(struct fixture *fx, const char *src, uint64_t now)
{
	struct sluice_ban b;

	return ban_of(fx, src, &b) && now < b.banned_until_ns;
}

/*
 * A key refused 4 times since its last pass, most refusals answered by the
 * over-limit cache: a second later its next packet brings them to the
 * bucket, passes, and the key is banned from then on. Returns what passed.
 */
static int offend(struct fixture *fx, const char *src, uint64_t *t)
{
	int passed = send_from(fx, src, 4);

	fixture_set_clock(fx, *t += NSEC_PER_SEC);
	return passed + send_from(fx, src, 1);
}

/* Bans after more than 3 refusals, not at 3; holds, expires, escalates, caps; both families. */
static void case_ban_escalate(const char *src, const char *label)
{
	struct fixture fx;
	struct sluice_ban b = { 0 };
	int p1, p2, p3;
	uint64_t t = T0;

	if (fixture_open_conf(&fx,
			      "default rate 1000/s\n"
			      "rule 10.0.0.0/8 rate 1/s burst 1 ban-after 3/10s ban-for 5s "
			      "ban-escalate 2 ban-memory 1m ban-max 15s\n"
			      "rule 2001:db8::/32 rate 1/s burst 1 ban-after 3/10s ban-for 5s "
			      "ban-escalate 2 ban-memory 1m ban-max 15s\n",
			      1024, T0)) {
		check(false, label, "cannot load");
		return;
	}
	/* 1 passes, 3 refused (the cache answers two: counted when they reach the bucket). */
	p1 = send_from(&fx, src, 4);
	fixture_set_clock(&fx, t += NSEC_PER_SEC);
	/* Refilled: it passes, and brings the cache's 2 refusals: 3 in all, not more than 3. */
	p2 = send_from(&fx, src, 1);
	check(p1 == 1 && p2 == 1 && !ban_of(&fx, src, &b) &&
		      fixture_counter(&fx, SLUICE_CNT_BANS) == 0,
	      label, "3 refusals in the period ban nobody (passed %d, %d; bans %llu)", p1, p2,
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_BANS));
	/* The 4th refusal (cached) bans when it reaches the bucket, a second later. */
	p3 = send_from(&fx, src, 1);
	fixture_set_clock(&fx, t += NSEC_PER_SEC);
	p3 += send_from(&fx, src, 1);
	check(p3 == 1 && ban_of(&fx, src, &b) && b.level == 1 && b.refused == 4 &&
		      b.banned_until_ns == t + 5 * NSEC_PER_SEC &&
		      b.period_ns == 10 * NSEC_PER_SEC &&
		      fixture_counter(&fx, SLUICE_CNT_BANS) == 1,
	      label, "the 4th refusal bans for 5s (level %u, refused %llu, for %llu ms)", b.level,
	      (unsigned long long)b.refused, (unsigned long long)(b.length_ns / MS));
	/* Banned: the refilled bucket would pass it; the ban drops it. */
	fixture_set_clock(&fx, t + 4 * NSEC_PER_SEC);
	p1 = send_from(&fx, src, 3);
	check(p1 == 0 && fixture_counter(&fx, SLUICE_CNT_BANNED) == 3, label,
	      "a banned key is dropped though its bucket refilled (passed %d, banned %llu)", p1,
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_BANNED));
	/* Expired: it passes again. */
	fixture_set_clock(&fx, t += 5 * NSEC_PER_SEC);
	p1 = send_from(&fx, src, 1);
	check(p1 == 1 && !banned_at(&fx, src, t), label, "the ban expires after 5s (passed %d)",
	      p1);
	/* A repeat within the memory: 10s, then 15s (the cap, not 20s). */
	p1 = offend(&fx, src, &t);
	check(p1 == 1 && banned_at(&fx, src, t) && ban_of(&fx, src, &b) && b.level == 2 &&
		      b.length_ns == 10 * NSEC_PER_SEC,
	      label, "a repeat within --ban-memory lasts twice as long (level %u, %llu ms)",
	      b.level, (unsigned long long)(b.length_ns / MS));
	fixture_set_clock(&fx, t += 10 * NSEC_PER_SEC);
	p1 = send_from(&fx, src, 1);
	p1 += offend(&fx, src, &t);
	check(p1 == 2 && ban_of(&fx, src, &b) && b.level == 3 && b.length_ns == 15 * NSEC_PER_SEC,
	      label, "the next repeat is capped at --ban-max 15s (level %u, %llu ms, passed %d)",
	      b.level, (unsigned long long)(b.length_ns / MS), p1);
	/* Past the memory: a first ban again. */
	fixture_set_clock(&fx, t += 15 * NSEC_PER_SEC + 61 * NSEC_PER_SEC);
	p1 = send_from(&fx, src, 1);
	p1 += offend(&fx, src, &t);
	check(p1 == 2 && ban_of(&fx, src, &b) && b.level == 1 && b.length_ns == 5 * NSEC_PER_SEC &&
		      fixture_counter(&fx, SLUICE_CNT_BANS) == 4,
	      label, "a ban past --ban-memory is a first one again (level %u, %llu ms)", b.level,
	      (unsigned long long)(b.length_ns / MS));
	fixture_close(&fx);
}

/* Forged sources flooding the overflow bucket ban nobody; a source under its limit neither. */
static void case_spoof_never_bans(void)
{
	const char *real = "10.9.0.1", *late = "10.9.0.2";
	struct fixture fx;
	struct sluice_ban b;
	char addr[32];
	int i, s, passed = 0, late_passed = 0;
	uint64_t t = T0;

	if (fixture_open_conf(&fx,
			      "default rate 1000/s\n"
			      "rule 10.0.0.0/8 rate 5/s burst 5 new-sources 1/s overflow-rate 1/s "
			      "ban-after 2/10s ban-for 1m\n",
			      1024, T0)) {
		check(false, "ban spoof", "cannot load");
		return;
	}
	passed += send_from(&fx, real, 1); /* the real source's bucket, before the flood */
	for (s = 0; s < 10; s++) {
		fixture_set_clock(&fx, t += NSEC_PER_SEC);
		for (i = 0; i < 200; i++) {
			snprintf(addr, sizeof(addr), "10.%d.%d.%d", 50 + s, i / 250, i % 250 + 1);
			send_from(&fx, addr, 3);
		}
		/* The real source stays under its 5/s; a late one finds no budget left. */
		passed += send_from(&fx, real, 4);
		late_passed += send_from(&fx, late, 20);
	}
	check(passed == 41 && !ban_of(&fx, real, &b) && !ban_of(&fx, late, &b) &&
		      fixture_counter(&fx, SLUICE_CNT_BANS) == 0 &&
		      fixture_counter(&fx, SLUICE_CNT_OVERFLOW_DROPPED) > 1000,
	      "ban spoof",
	      "forged sources flooding the overflow bucket ban nobody: the real source under its "
	      "limit passes (%d of 41), one refused only by the overflow bucket is not banned "
	      "(passed %d; bans %llu, overflow drops %llu)",
	      passed, late_passed, (unsigned long long)fixture_counter(&fx, SLUICE_CNT_BANS),
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_OVERFLOW_DROPPED));
	fixture_close(&fx);
}

/* An allowed source is never metered, so never banned. */
static void case_allow_never_banned(void)
{
	struct policy_doc doc;
	struct fixture fx;
	struct sluice_ban b;
	struct cidr c;
	bool host_bits;
	const char *why;
	int passed;

	if (doc_from_conf_text("default rate 1000/s\n"
			       "rule 10.0.0.0/8 rate 1/s burst 1 ban-after 1/10s\n",
			       &doc) ||
	    parse_cidr("10.7.0.1/32", &c, &host_bits, &why) || cidr_list_add(&doc.allow, &c) ||
	    fixture_open_policy(&fx, &doc, 1024)) {
		check(false, "ban allow", "cannot load");
		return;
	}
	doc_free(&doc);
	fixture_set_clock(&fx, T0);
	passed = send_from(&fx, "10.7.0.1", 50);
	check(passed == 50 && !ban_of(&fx, "10.7.0.1", &b) &&
		      fixture_counter(&fx, SLUICE_CNT_BANS) == 0,
	      "ban allow",
	      "an allowed source far over the rule's limit is never banned (passed %d)", passed);
	fixture_close(&fx);
}

/*
 * This CPU's cache's entries of IPv4 source src: how many, and with
 * SLUICE_HOT_BANNED how many, and their pending refusals; -1 when unreadable.
 */
static int cached_bans(struct fixture *fx, int cpu, const char *src, int *banned, uint64_t *pending)
{
	struct sluice_hot *c = fixture_hot(fx, cpu);
	__u32 addr = 0;
	int i, w, n = 0;

	*banned = 0;
	*pending = 0;
	if (!c)
		return -1;
	inet_pton(AF_INET, src, &addr);
	for (i = 0; i < SLUICE_HOT_SETS; i++)
		for (w = 0; w < 2; w++) {
			const struct sluice_hot_way *e = &c->line[i].way[w];

			if (!(e->flags & SLUICE_HOT_IPV4) || e->addr != addr)
				continue;
			n++;
			*banned += !!(e->flags & SLUICE_HOT_BANNED);
			*pending += SLUICE_HOT_PENDING(e->count);
		}
	free(c);
	return n;
}

/* Lifts the bans of src (one address) as deny del does: the entry, then a new generation. */
static int lift_ban(struct fixture *fx, const char *src)
{
	struct cidr_list l = { 0 };
	struct cidr c;
	bool host_bits;
	const char *why;
	int n;

	if (parse_cidr(src, &c, &host_bits, &why) || cidr_list_add(&l, &c))
		return -EINVAL;
	n = bans_lift(fx->st.maps.bans, &l);
	free(l.items);
	return n < 0 ? n : config_republish(&fx->st.maps) ?: n;
}

/* Refusals past ban-after 3 (offend's three, and one more): the source is banned. */
static void earn_ban(struct fixture *fx, const char *src, uint64_t *t)
{
	offend(fx, src, t);
	send_from(fx, src, 1);
	fixture_set_clock(fx, *t += NSEC_PER_SEC);
	send_from(fx, src, 1);
}

/*
 * A banned source's flood is answered by the over-limit cache, as a
 * source over its limit is: the refusal that bans it, or else one packet
 * that finds the ban, stores it, and the rest find the cache's entry,
 * counted banned, none pending for the bucket; the entry ends with the
 * ban, and at once when deny del lifts it.
 */
static void case_ban_cached(int cpu)
{
	const char *src = "10.4.5.6", *name = "ban cached";
	uint64_t t = T0, pending, banned_before;
	struct sluice_ban b;
	struct fixture fx;
	int n, banned, p;

	if (fixture_open_conf(&fx,
			      "default rate 1000/s\n"
			      "rule 10.0.0.0/8 rate 1/s burst 1 ban-after 3/10s ban-for 5s\n",
			      1024, T0)) {
		check(false, name, "cannot load");
		return;
	}
	earn_ban(&fx, src, &t);
	check(banned_at(&fx, src, t), name, "the source is banned");
	/* At once: the refusal that banned it stored the ban, not its bucket's moment. */
	banned_before = fixture_counter(&fx, SLUICE_CNT_BANNED);
	p = send_from(&fx, src, 5);
	n = cached_bans(&fx, cpu, src, &banned, &pending);
	check(p == 0 && n == 1 && banned == 1 && pending == 0 &&
		      fixture_counter(&fx, SLUICE_CNT_BANNED) - banned_before == 5,
	      name,
	      "the refusal that bans caches the ban: the packets right after it are counted "
	      "banned, none pending (passed %d, entries %d, banned ones %d, pending %llu, "
	      "banned count %llu)",
	      p, n, banned, (unsigned long long)pending,
	      (unsigned long long)(fixture_counter(&fx, SLUICE_CNT_BANNED) - banned_before));
	/* A second on, its bucket would pass a packet: the ban refuses all 20. */
	fixture_set_clock(&fx, t += NSEC_PER_SEC);
	banned_before = fixture_counter(&fx, SLUICE_CNT_BANNED);
	p = send_from(&fx, src, 20);
	n = cached_bans(&fx, cpu, src, &banned, &pending);
	check(p == 0 && n == 1 && banned == 1 &&
		      fixture_counter(&fx, SLUICE_CNT_BANNED) - banned_before == 20,
	      name,
	      "a banned source's packets after the first are answered by one cache entry, "
	      "counted banned (passed %d, entries %d, banned ones %d, banned count %llu)",
	      p, n, banned,
	      (unsigned long long)(fixture_counter(&fx, SLUICE_CNT_BANNED) - banned_before));
	check(pending == 0, name,
	      "the cache keeps no refusals of a ban for its bucket (%llu pending)",
	      (unsigned long long)pending);
	/* The ban ends: the entry ends with it. */
	ban_of(&fx, src, &b);
	fixture_set_clock(&fx, b.banned_until_ns - 1);
	p = send_from(&fx, src, 1);
	fixture_set_clock(&fx, b.banned_until_ns);
	p += 2 * send_from(&fx, src, 1);
	check(p == 2, name, "refused until the ban's end, passed at its end (%d)", p);
	/* Banned again (a repeat), then lifted by deny del: the next packet passes. */
	fixture_set_clock(&fx, t = b.banned_until_ns + NSEC_PER_SEC);
	earn_ban(&fx, src, &t);
	fixture_set_clock(&fx, t += NSEC_PER_SEC);
	p = send_from(&fx, src, 5);
	n = cached_bans(&fx, cpu, src, &banned, &pending);
	check(banned_at(&fx, src, t) && p == 0 && banned == 1, name,
	      "banned again, and cached (passed %d, banned entries %d)", p, banned);
	fixture_set_clock(&fx, t += NSEC_PER_SEC);
	n = lift_ban(&fx, src);
	p = send_from(&fx, src, 1);
	check(n == 1 && p == 1, name,
	      "deny del lifts the ban: the next packet passes (%d, lifted %d)", p, n);
	fixture_close(&fx);
}

/* A rule without a ban never writes the map. */
static void case_no_ban_no_entries(void)
{
	struct fixture fx;
	struct ban_list l = { 0 };

	if (fixture_open_conf(&fx, "default rate 1/s burst 1\n", 1024, T0)) {
		check(false, "ban none", "cannot load");
		return;
	}
	send_from(&fx, "10.8.0.1", 50);
	fixture_set_clock(&fx, T0 + NSEC_PER_SEC);
	send_from(&fx, "10.8.0.1", 50);
	check(!bans_read(fx.st.maps.bans, 1, &l) && l.count == 0, "ban none",
	      "a rule without --ban-after keeps no ban state (%zu entries)", l.count);
	ban_list_free(&l);
	fixture_close(&fx);
}

void suite_ban(void)
{
	int cpu = stay_on_this_cpu();

	if (cpu < 0)
		check(false, "ban cached", "cannot stay on one CPU");
	else
		case_ban_cached(cpu);
	back_to_every_cpu();
	case_ban_escalate("10.1.2.3", "ban IPv4");
	case_ban_escalate("2001:db8:1:2::5", "ban IPv6");
	case_spoof_never_bans();
	case_allow_never_banned();
	case_no_ban_no_entries();
}

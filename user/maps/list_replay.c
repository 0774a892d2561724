// SPDX-License-Identifier: GPL-2.0
/*
 * Both sets of the list tries kept equal (left-right), so a change costs its
 * own entries, not the list: it is replayed on the idle set, published (one
 * flip, a new generation), then replayed on the set it replaced.
 *
 * The pin lists_mirrored says the sets are equal. A writer removes it before
 * it touches the idle set and pins it again once both sets agree, so a
 * writer killed in between (or state written before this scheme) leaves it
 * absent, and the next writer first copies the live set over the idle one
 * whole (lists_mirror), in time linear in the lists.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "base/clock.h"
#include "base/fault.h"
#include "maps/config.h"
#include "maps/lists.h"
#include "maps/tries.h"

bool lists_mirrored(const struct policy_maps *m)
{
	struct stat st;

	return m->dir >= 0 && !fstatat(m->dir, SLUICE_PIN_LISTS_MIRRORED, &st, 0);
}

int lists_unmirror(const struct policy_maps *m)
{
	if (m->dir < 0 || !unlinkat(m->dir, SLUICE_PIN_LISTS_MIRRORED, 0) || errno == ENOENT)
		return 0;
	return -errno;
}

/* The pin is a second name of the generation map: any object would do. */
int lists_mirror_mark(const struct policy_maps *m)
{
	int err;

	if (m->dir < 0)
		return 0;
	err = state_pin_stage(m->dir, m->generation, SLUICE_PIN_LISTS_MIRRORED);
	return err ?: state_pin_commit(m->dir, SLUICE_PIN_LISTS_MIRRORED, true);
}

/* The other set of one trie made equal to set from: emptied, then each entry copied. */
static int trie_copy(int fd, __u32 from)
{
	struct key_vec src = { 0 }, dst = { 0 };
	struct sluice_deny value; /* the larger of the two list values */
	union lpm_key to;
	size_t i;
	int err;

	err = trie_walk(fd, from, &src, &dst);
	for (i = 0; !err && i < dst.n; i++)
		if (bpf_map_delete_elem(fd, &dst.keys[i]) && errno != ENOENT)
			err = -errno;
	for (i = 0; !err && i < src.n; i++) {
		to = src.keys[i];
		to.v4.set = !from;
		if (bpf_map_lookup_elem(fd, &src.keys[i], &value) ||
		    bpf_map_update_elem(fd, &to, &value, BPF_ANY))
			err = -errno;
	}
	free(src.keys);
	free(dst.keys);
	return err;
}

int lists_mirror(const struct policy_maps *m, __u32 live_set)
{
	int fds[] = { m->allow_v4, m->allow_v6, m->deny_v4, m->deny_v6 };
	size_t i;
	int err = lists_unmirror(m);

	for (i = 0; !err && i < sizeof(fds) / sizeof(fds[0]); i++)
		err = trie_copy(fds[i], live_set);
	return err ?: lists_mirror_mark(m);
}

int lists_repair(const struct policy_maps *m)
{
	struct sluice_config cfg;
	int err = config_load(m, &cfg);

	return err ?: lists_mirror(m, cfg.list_set);
}

/* One entry's part of a change: its key (in the idle set), and its new value or its removal. */
struct list_step {
	int fd;
	bool remove;
	union lpm_key key;
	struct sluice_deny value;
};

/* A change as steps, and what it does to the configuration's counts and trie bits. */
struct list_plan {
	struct list_step *steps;
	size_t n;
	long added;
	__u32 lists;
	uint64_t now_ns;
};

/* What a lookup of a key found: nothing, the longest entry enclosing it, or the key itself. */
enum list_match { MATCH_NONE, MATCH_OUTER, MATCH_EXACT };

/*
 * The value of the longest match of key, and whether it is key's own: an
 * update that must find key itself (BPF_EXIST) says so. It writes back
 * what was read, on the idle set, which no reader reads.
 */
static int exact_lookup(int fd, const union lpm_key *key, struct sluice_deny *value,
			enum list_match *match)
{
	*match = MATCH_NONE;
	memset(value, 0, sizeof(*value));
	if (bpf_map_lookup_elem(fd, key, value))
		return errno == ENOENT ? 0 : -errno;
	*match = MATCH_OUTER;
	if (bpf_map_update_elem(fd, key, value, BPF_EXIST))
		return errno == ENOENT ? 0 : -errno;
	*match = MATCH_EXACT;
	return 0;
}

/*
 * The denied_until of the longest entry enclosing key, folded with
 * expires_ns (deny_write). The lookup of key found it already, unless it
 * found key itself.
 */
static int deny_fold(int fd, const union lpm_key *key, enum list_match match,
		     const struct sluice_deny *found, __u64 expires_ns, __u64 *until)
{
	union lpm_key up = *key;
	struct sluice_deny outer;

	*until = expires_ns;
	if (match == MATCH_OUTER)
		*until = expiry_later(found->denied_until_ns, expires_ns);
	if (match != MATCH_EXACT || up.v4.prefixlen == 32) /* a /0 has nothing around it */
		return 0;
	up.v4.prefixlen--;
	if (bpf_map_lookup_elem(fd, &up, &outer))
		return errno == ENOENT ? 0 : -errno;
	*until = expiry_later(outer.denied_until_ns, expires_ns);
	return 0;
}

static int plan_push(struct list_plan *p, const struct list_step *s)
{
	struct list_step *grown;

	if (!(p->n & (p->n + 1))) { /* n is 0 or 2^k - 1: grow to 2^(k+1) */
		grown = realloc(p->steps, (2 * p->n + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		p->steps = grown;
	}
	p->steps[p->n++] = *s;
	return 0;
}

/* An allow entry's value is one byte, 1, at the start of the step's value. */
static void allow_value(struct sluice_deny *value)
{
	memset(value, 0, sizeof(*value));
	*(__u8 *)value = 1;
}

/*
 * Item idx as a step, as cidr_list_merge would have it: removing one not
 * on the list (an expired one counts as absent) is -ENOENT; adding one that
 * is keeps the later expiry, and is no step if that changes nothing.
 */
static int plan_item(const struct policy_maps *m, struct list_change *c, size_t idx, __u32 idle,
		     struct list_plan *p)
{
	const struct list_entry *e = &c->items->items[idx];
	struct list_step s = { .fd = list_fd(m, c->deny, &e->cidr), .remove = !c->add };
	struct list_entry old = { .cidr = e->cidr };
	struct sluice_deny was;
	enum list_match match;
	bool found, live;
	int err;

	lpm_key_of(&s.key, &e->cidr, idle);
	err = exact_lookup(s.fd, &s.key, &was, &match);
	if (err)
		return err;
	found = match == MATCH_EXACT;
	old.expires_ns = c->deny ? was.expires_ns : 0;
	live = found && !entry_expired(&old, p->now_ns);
	if (!c->add && !live) {
		c->missing = idx;
		return -ENOENT;
	}
	s.value.expires_ns = live ? expiry_later(old.expires_ns, e->expires_ns) : e->expires_ns;
	if (c->add && live && s.value.expires_ns == old.expires_ns)
		return 0;
	if (c->add && c->deny)
		err = deny_fold(s.fd, &s.key, match, &was, s.value.expires_ns,
				&s.value.denied_until_ns);
	else if (!c->deny)
		allow_value(&s.value);
	p->added += c->add ? !found : -1;
	p->lists |= list_bit(c->deny, &e->cidr);
	return err ?: plan_push(p, &s);
}

/* A deny entry shorter than a host encloses others, whose denied_until it changes. */
static bool encloses_others(const struct cidr *c)
{
	return c->len < (c->family == SLUICE_FAMILY_IPV4 ? 32 : 128);
}

/*
 * Can the change be replayed, and is it sure to fit? Sure when the list's
 * entries of both families (cfg's count, which may still count expired
 * ones) plus the new ones fit each trie's set; else -EAGAIN, and the whole
 * list is written again, which checks exactly.
 */
static int plan_fits(const struct policy_maps *m, const struct list_change *c,
		     const struct sluice_config *cfg, const struct list_plan *p)
{
	int fds[2] = { c->deny ? m->deny_v4 : m->allow_v4, c->deny ? m->deny_v6 : m->allow_v6 };
	__u32 entries[2] = { 0 };
	long n = (long)(c->deny ? cfg->deny_count : cfg->allow_count) + p->added;
	int err = map_entries(fds[0], &entries[0]) ?: map_entries(fds[1], &entries[1]);

	if (err)
		return err;
	return n <= entries[0] / 2 && n <= entries[1] / 2 ? 0 : -EAGAIN;
}

static int plan_make(const struct policy_maps *m, struct list_change *c,
		     const struct sluice_config *cfg, struct list_plan *p)
{
	size_t i;
	int err = 0;

	for (i = 0; c->deny && i < c->items->count; i++)
		if (encloses_others(&c->items->items[i].cidr))
			return -EAGAIN;
	p->now_ns = monotonic_ns();
	for (i = 0; !err && i < c->items->count; i++)
		err = plan_item(m, c, i, !cfg->list_set, p);
	return err ?: plan_fits(m, c, cfg, p);
}

/* One step in set. The second replay finds what the first did: nothing is missing. */
static int step_apply(const struct list_step *s, __u32 set)
{
	union lpm_key key = s->key;

	key.v4.set = set;
	if (s->remove)
		return bpf_map_delete_elem(s->fd, &key) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(s->fd, &key, &s->value, BPF_ANY) ? -errno : 0;
}

static int plan_apply(const struct list_plan *p, __u32 set)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < p->n; i++)
		err = step_apply(&p->steps[i], set);
	return err;
}

/* The configuration after the change: counted, its tries' bits, the other set live. */
static void plan_config(const struct list_change *c, const struct list_plan *p,
			struct sluice_config *cfg)
{
	__u32 *count = c->deny ? &cfg->deny_count : &cfg->allow_count;
	__u32 both = c->deny ? SLUICE_LIST_DENY_V4 | SLUICE_LIST_DENY_V6
			     : SLUICE_LIST_ALLOW_V4 | SLUICE_LIST_ALLOW_V6;

	*count = (__u32)((long)*count + p->added);
	/* An emptied list skips its tries; one merely shrunk keeps its bits (a lookup more). */
	cfg->lists |= p->lists;
	if (!*count)
		cfg->lists &= ~both;
	cfg->list_set = !cfg->list_set;
}

/* The plan on the idle set, the flip, the plan on the old set; mirrored again at the end. */
static int plan_publish(const struct policy_maps *m, const struct list_change *c,
			const struct list_plan *p, struct sluice_config *cfg)
{
	__u32 old_set = cfg->list_set;
	int err = lists_unmirror(m);

	if (!err)
		err = plan_apply(p, !old_set);
	if (err)
		return lists_mirror(m, old_set) ?: err;
	plan_config(c, p, cfg);
	/* Failed, it may have flipped or not: the next writer mirrors whichever is live. */
	err = config_write(m, cfg);
	if (err)
		return err;
	fault_point(FAULT_LISTS_AFTER_FLIP, SIGKILL);
	err = plan_apply(p, old_set);
	return err ?: lists_mirror_mark(m);
}

int list_replay(const struct policy_maps *m, struct list_change *c)
{
	struct list_plan p = { 0 };
	struct sluice_config cfg;
	int err;

	err = config_load(m, &cfg);
	if (!err && !lists_mirrored(m))
		err = lists_mirror(m, cfg.list_set);
	if (!err)
		err = plan_make(m, c, &cfg, &p);
	/* Adding only what is there already, as long, changes nothing: no new generation. */
	if (!err && p.n)
		err = plan_publish(m, c, &p, &cfg);
	free(p.steps);
	return err;
}

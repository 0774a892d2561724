// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's candidates: the sources the datapath hands over (fleet_ring),
 * found by key, named in Redis, and dropped when gone or idle; the live
 * policies they are metered by.
 */
#include <bpf/bpf.h>
#include "base/errors.h"
#include "fleet/agent.h"
#include "maps/policy_maps.h"
#include "text/conf.h"

/* FNV-1a: the same name on every host for the same bytes. */
static uint32_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static uint32_t key_hash(const struct sluice_key *k)
{
	return hash_bytes(k, sizeof(*k));
}

static int index_slot(const struct agent *ag, const struct sluice_key *k)
{
	uint32_t size = 2 * AGENT_CANDIDATES_MAX, i = key_hash(k) & (size - 1);

	while (ag->index[i] >= 0 && memcmp(&ag->cands[ag->index[i]].key, k, sizeof(*k)))
		i = (i + 1) & (size - 1);
	return (int)i;
}

void candidates_index_rebuild(struct agent *ag)
{
	int i;

	for (i = 0; i < 2 * AGENT_CANDIDATES_MAX; i++)
		ag->index[i] = -1;
	for (i = 0; i < ag->n; i++)
		ag->index[index_slot(ag, &ag->cands[i].key)] = i;
}

/* The policy a key's id names in the live set, or NULL. */
static const struct sluice_policy *policy_of(const struct agent *ag, __u16 id)
{
	int i;

	for (i = 0; i < SLUICE_MAX_POLICIES; i++)
		if (ag->policies[i].interval && ag->policies[i].id == id)
			return &ag->policies[i];
	return NULL;
}

static bool policy_syncable(const struct sluice_policy *p)
{
	return p->meter == SLUICE_METER_GCRA && !(p->flags & SLUICE_POL_BYTES);
}

/*
 * The source's name in Redis, the same on every host with the same policy:
 * its prefix, and its rule by what it matches (a rule's id is the host's
 * own). Hash tags spread sources over AGENT_TAGS slots, whatever the keys.
 */
static void candidate_name(struct candidate *c, const struct sluice_policy *p, bool shadow)
{
	struct {
		__u32 cidr[4];
		__u8 family, len, proto, dflt;
		__u16 lo, hi;
	} match = { .family = p->family,
		    .len = p->cidr_len,
		    .proto = p->proto,
		    .dflt = p->family == SLUICE_FAMILY_ANY,
		    .lo = p->dport_lo,
		    .hi = p->dport_hi };
	const struct sluice_key *k = &c->key;
	uint32_t rule, where;

	struct {
		__u32 flags;
		__u16 sport_lo, sport_hi, len_lo, len_hi;
		__u8 tcp_mask, tcp_flags, icmp_type, icmp_code;
		__u32 dst[4];
		__u32 dst_len;
	} classes = { .flags = p->flags & SLUICE_POL_MATCH_CLASS,
		      .sport_lo = p->sport_lo,
		      .sport_hi = p->sport_hi,
		      .len_lo = p->len_lo,
		      .len_hi = p->len_hi,
		      .tcp_mask = p->tcp_flags_mask,
		      .tcp_flags = p->tcp_flags,
		      .icmp_type = p->icmp_type,
		      .icmp_code = p->icmp_code,
		      .dst_len = p->dst_len };

	memcpy(match.cidr, p->cidr, sizeof(match.cidr));
	memcpy(classes.dst, p->dst, sizeof(classes.dst));
	/* The default's id changes with its algorithm; its name does not. */
	rule = match.dflt ? 0 : hash_bytes(&match, sizeof(match));
	/* A rule with match classes: they name it too (one without keeps its name). */
	if (classes.flags)
		rule ^= hash_bytes(&classes, sizeof(classes));
	where = key_hash(
		&(struct sluice_key){ .family = k->family,
				      .prefix_len = k->prefix_len,
				      .addr = { k->addr[0], k->addr[1], k->addr[2], k->addr[3] } });
	c->tag = (uint16_t)(where % AGENT_TAGS);
	/* A destination or pair key says so ("4-dst"), so it never names a source's bucket. */
	snprintf(c->rkey, sizeof(c->rkey), "%s:{s:%02u}:%u%s%s:%08x%08x%08x%08x/%u:%08x",
		 shadow ? "sluice-shadow" : "sluice", c->tag, SLUICE_KEY_FAMILY(k->family),
		 k->family & SLUICE_KEY_KINDS ? "-" : "",
		 k->family & SLUICE_KEY_KINDS ? key_kind_name(k) : "", k->addr[0], k->addr[1],
		 k->addr[2], k->addr[3], k->prefix_len, rule);
}

/* A source the datapath handed over: new ones start from what passed before its share. */
int agent_on_candidate(void *arg, void *data, size_t len)
{
	const struct sluice_fleet_candidate *ev = data;
	struct agent *ag = arg;
	const struct sluice_policy *p;
	struct candidate *c;
	uint64_t before;
	int slot;

	if (len < sizeof(*ev))
		return 0;
	slot = index_slot(ag, &ev->key);
	if (ag->index[slot] >= 0)
		return 0;
	p = policy_of(ag, ev->key.policy);
	if (!p || !policy_syncable(p))
		return 0;
	if (ag->n == AGENT_CANDIDATES_MAX) {
		ag->rep.lost++;
		return 0;
	}
	c = &ag->cands[ag->n];
	memset(c, 0, sizeof(*c));
	c->key = ev->key;
	c->cost = p->interval;
	c->limit = p->limit;
	before = fleet_units_packets(&ag->hint, ev->units, ev->cost);
	c->last_passed = ev->passed > before ? ev->passed - before : 0;
	c->pushed_ns = monotonic_ns() - ag->opt.period_ns; /* what passed before: this period */
	candidate_name(c, p, ag->opt.shadow);
	ag->index[slot] = ag->n++;
	return 0;
}

/* Candidates gone from the table, or idle with no debt, are dropped. */
void candidates_prune(struct agent *ag)
{
	int i, kept = 0;

	for (i = 0; i < ag->n; i++) {
		struct candidate *c = &ag->cands[i];

		if (c->gone || (c->idle >= AGENT_IDLE_ROUNDS && !c->unpushed))
			continue;
		if (kept != i)
			ag->cands[kept] = *c;
		kept++;
	}
	if (kept != ag->n) {
		ag->n = kept;
		candidates_index_rebuild(ag);
	}
}

/* A changed policy (set, apply) costs its sources' packets anew; a gone one drops them. */
static void candidates_repolicy(struct agent *ag)
{
	const struct sluice_policy *p;
	int i;

	for (i = 0; i < ag->n; i++) {
		struct candidate *c = &ag->cands[i];

		p = policy_of(ag, c->key.policy);
		if (!p || !policy_syncable(p)) {
			c->gone = true;
			continue;
		}
		c->cost = p->interval;
		c->limit = p->limit;
	}
}

/* Policies of the live set, reread once a second: a changed policy is picked up. */
int agent_policies_read(struct agent *ag)
{
	__u32 i, key;
	int err = config_read(&ag->st.maps, &ag->cfg);

	if (err)
		return err;
	memset(ag->policies, 0, sizeof(ag->policies));
	for (i = 0; i < SLUICE_MAX_POLICIES; i++) {
		key = ag->cfg.policy_set * SLUICE_MAX_POLICIES + i;
		bpf_map_lookup_elem(ag->st.maps.policies, &key, &ag->policies[i]);
	}
	candidates_repolicy(ag);
	return 0;
}

/*
 * The name status, stats and rule list give the policy with this id: "the
 * default", or "rule" and its CIDR and class ("rule 10.0.0.0/8 proto udp").
 */
static void policy_label(const struct agent *ag, __u16 id, char *buf, size_t len)
{
	struct policy_doc *doc = calloc(1, sizeof(*doc));
	char name[320];

	if (!doc || policy_load(&ag->st.maps, doc, false))
		snprintf(name, sizeof(name), "replaced-%u", id);
	else
		rule_name(doc, id, name, sizeof(name));
	if (doc)
		doc_free(doc);
	free(doc);
	snprintf(buf, len, "%s%s", strcmp(name, "default") ? "rule " : "the ", name);
}

/*
 * Whether a live rule is one the agent cannot sync: then *why says which
 * and why ("IFACE: rule 10.5.0.0/16 uses a window algorithm; ...").
 */
bool agent_policy_unsyncable(struct agent *ag, char *why, size_t len)
{
	char name[336];
	int i;

	for (i = 0; i < SLUICE_MAX_POLICIES; i++) {
		const struct sluice_policy *p = &ag->policies[i];

		if (!p->interval || policy_syncable(p))
			continue;
		policy_label(ag, p->id, name, sizeof(name));
		snprintf(why, len, "%s: %s %s; the agent syncs packet rates under gcra only",
			 ag->ifname, name,
			 p->meter == SLUICE_METER_FIXED_WINDOW ||
					 p->meter == SLUICE_METER_SLIDING_WINDOW
				 ? "uses a window algorithm"
			 : p->meter == SLUICE_METER_WARMUP ? "has a warm-up"
							   : "limits bandwidth");
		return true;
	}
	return false;
}

/* Every live rule must be one the agent can sync: -1, or exit 2 after one line. */
int agent_policies_supported(struct agent *ag)
{
	return agent_policy_unsyncable(ag, ag->stop_why, sizeof(ag->stop_why))
		       ? fail_input("agent", "%s", ag->stop_why)
		       : -1;
}

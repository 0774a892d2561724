// SPDX-License-Identifier: GPL-2.0
/*
 * The penalty box's settings (--ban-after, --ban-for, --ban-escalate,
 * --ban-memory, --ban-max): checked and compiled into a policy's ban_*
 * fields, and read back as typed (sluice_policy.ban_typed).
 */
#include <errno.h>
#include <stdio.h>
#include "policy/policy.h"
#include "values/rate.h"

static int ban_refuse(int err, const char **why, const char *msg)
{
	*why = msg;
	return err;
}

/* A setting that needs --ban-after, or none. */
static const char *ban_orphan(const struct settings *s)
{
	if (s->ban_after.count)
		return NULL;
	if (s->ban_for_ns)
		return "--ban-for needs --ban-after";
	if (s->ban_escalate_milli)
		return "--ban-escalate needs --ban-after";
	if (s->ban_memory_ns)
		return "--ban-memory needs --ban-after";
	if (s->ban_max_ns)
		return "--ban-max needs --ban-after";
	return NULL;
}

int ban_build(struct sluice_policy *p, const struct settings *s, const char **why)
{
	const char *orphan = ban_orphan(s);

	if (orphan)
		return ban_refuse(-EINVAL, why, orphan);
	if (!s->ban_after.count)
		return 0;
	/* An aggregate's refusals are not the key's own: they must not ban it. */
	if (s->n_aggregates)
		return ban_refuse(
			-EINVAL, why,
			"--ban-after does not combine with --aggregate: a ban counts only "
			"refusals of the key's own bucket");
	/*
	 * A ban is a source's: a destination's would drop every packet to the
	 * address the rule protects, and a deny entry names a source.
	 */
	if (s->key_kind != KEY_SRC)
		return ban_refuse(-EINVAL, why,
				  "--ban-after needs --key src: a ban drops a source, and a "
				  "destination's would drop every packet to the address");
	p->flags |= SLUICE_POL_BAN;
	p->ban_after = s->ban_after.count;
	p->ban_period_ns = s->ban_after.period_ns ?: BAN_PERIOD_DEFAULT_NS;
	p->ban_for_ns = s->ban_for_ns ?: BAN_FOR_DEFAULT_NS;
	p->ban_escalate_milli = s->ban_escalate_milli ?: BAN_ESCALATE_DEFAULT;
	p->ban_memory_ns = s->ban_memory_ns ?: BAN_MEMORY_DEFAULT_NS;
	p->ban_max_ns = s->ban_max_ns ?: BAN_MAX_DEFAULT_NS;
	if (p->ban_max_ns < p->ban_for_ns)
		return ban_refuse(-EINVAL, why,
				  s->ban_max_ns ? "--ban-max must be at least --ban-for"
						: "--ban-for is longer than the default --ban-max "
						  "(1d): give --ban-max too");
	p->ban_typed = (s->ban_after.period_ns ? SLUICE_BAN_TYPED_PERIOD : 0) |
		       (s->ban_for_ns ? SLUICE_BAN_TYPED_FOR : 0) |
		       (s->ban_escalate_milli ? SLUICE_BAN_TYPED_ESCALATE : 0) |
		       (s->ban_memory_ns ? SLUICE_BAN_TYPED_MEMORY : 0) |
		       (s->ban_max_ns ? SLUICE_BAN_TYPED_MAX : 0);
	return 0;
}

void ban_settings(const struct sluice_policy *p, struct settings *s)
{
	uint32_t t = p->ban_typed;

	if (!(p->flags & SLUICE_POL_BAN))
		return;
	s->ban_after.count = p->ban_after;
	s->ban_after.period_ns = t & SLUICE_BAN_TYPED_PERIOD ? p->ban_period_ns : 0;
	s->ban_for_ns = t & SLUICE_BAN_TYPED_FOR ? p->ban_for_ns : 0;
	s->ban_escalate_milli = t & SLUICE_BAN_TYPED_ESCALATE ? p->ban_escalate_milli : 0;
	s->ban_memory_ns = t & SLUICE_BAN_TYPED_MEMORY ? p->ban_memory_ns : 0;
	s->ban_max_ns = t & SLUICE_BAN_TYPED_MAX ? p->ban_max_ns : 0;
}

bool ban_settings_equal(const struct settings *a, const struct settings *b)
{
	return a->ban_after.count == b->ban_after.count &&
	       a->ban_after.period_ns == b->ban_after.period_ns && a->ban_for_ns == b->ban_for_ns &&
	       a->ban_escalate_milli == b->ban_escalate_milli &&
	       a->ban_memory_ns == b->ban_memory_ns && a->ban_max_ns == b->ban_max_ns;
}

// SPDX-License-Identifier: GPL-2.0
/* The agent's Lua scripts (script.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "fleet/script.h"

const char fleet_gcra_script[] = "local t = redis.call('TIME')\n"
				 "local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
				 "local shadow = ARGV[1] == 'shadow'\n"
				 "local debt_max = tonumber(ARGV[2])\n"
				 "local slack = tonumber(ARGV[3])\n"
				 "local out = {}\n"
				 "for i, key in ipairs(KEYS) do\n"
				 "  local used = tonumber(ARGV[4 * i])\n"
				 "  local cost = tonumber(ARGV[4 * i + 1])\n"
				 "  local limit = tonumber(ARGV[4 * i + 2])\n"
				 "  local span = tonumber(ARGV[4 * i + 3])\n"
				 "  local tat = tonumber(redis.call('GET', key) or 0)\n"
				 "  local from = now - span - slack\n"
				 "  if tat < from then tat = from end\n"
				 "  local refused = 0\n"
				 "  if shadow then\n"
				 "    local room = math.floor((now + limit - tat) / cost + 1e-9)\n"
				 "    if room < 0 then room = 0 end\n"
				 "    if room < used then refused = used - room; used = room end\n"
				 "  end\n"
				 "  tat = tat + used * cost\n"
				 "  if tat < now then tat = now end\n"
				 "  if tat - now > debt_max then tat = now + debt_max end\n"
				 "  redis.call('SET', key, string.format('%.3f', tat), 'PX',\n"
				 "             math.ceil((tat - now) / 1000) + 1000)\n"
				 "  out[2 * i - 1] = math.floor(tat - now)\n"
				 "  out[2 * i] = refused\n"
				 "end\n"
				 "return out\n";

const char fleet_heartbeat_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"redis.call('ZADD', KEYS[1], now, ARGV[1])\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))\n"
	"redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)\n"
	"return redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[3]))\n";

int fleet_heartbeat_hosts(const redisReply *r, const char *self, unsigned int max)
{
	size_t i, len = strlen(self);
	bool seen = false;

	if (r->type != REDIS_REPLY_ARRAY || r->elements > (size_t)max + 1)
		return -EPROTO;
	for (i = 0; i < r->elements; i++) {
		const redisReply *m = r->element[i];

		if (m->type != REDIS_REPLY_STRING)
			return -EPROTO;
		seen |= m->len == len && !memcmp(m->str, self, len);
	}
	if (!seen)
		return -EPROTO;
	return r->elements > max ? (int)max : (int)r->elements;
}

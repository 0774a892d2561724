// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "values/classes.h"
#include "values/number.h"

/* The TCP flags byte's bits, lowest first (RFC 9293, RFC 3168). */
static const char *const tcp_flag_names[8] = { "FIN", "SYN", "RST", "PSH",
					       "ACK", "URG", "ECE", "CWR" };

/* One comma-separated list of flag names, up to end, into *bits. */
static int parse_flag_list(const char *s, size_t n, uint8_t *bits, const char **why)
{
	size_t w;
	int i;

	*bits = 0;
	if (n == 3 && !strncasecmp(s, "ALL", 3)) {
		*bits = 0xff;
		return 0;
	}
	if (n == 4 && !strncasecmp(s, "NONE", 4))
		return 0;
	while (n) {
		w = strcspn(s, ",");
		if (w > n)
			w = n;
		for (i = 0; i < 8; i++)
			if (w == 3 && !strncasecmp(s, tcp_flag_names[i], 3))
				break;
		if (i == 8) {
			*why = "expected TCP flag names FIN SYN RST PSH ACK URG ECE CWR (or ALL, "
			       "NONE), comma-separated";
			return -EINVAL;
		}
		*bits |= (uint8_t)(1U << i);
		s += w;
		n -= w;
		if (n) { /* the comma */
			s++;
			n--;
			if (!n) {
				*why = "a flag list ends with a comma";
				return -EINVAL;
			}
		}
	}
	return 0;
}

int parse_tcp_flags(const char *s, struct tcp_flags_match *f, const char **why)
{
	const char *slash = strchr(s, '/');
	int err;

	if (!slash) {
		*why = "expected MASK/FLAGS, such as SYN,ACK/SYN";
		return -EINVAL;
	}
	err = parse_flag_list(s, (size_t)(slash - s), &f->mask, why);
	if (!err)
		err = parse_flag_list(slash + 1, strlen(slash + 1), &f->value, why);
	if (err)
		return err;
	if (!f->mask) {
		*why = "the mask names no flag: it would match every packet";
		return -EINVAL;
	}
	if (f->value & ~f->mask) {
		*why = "a flag outside the mask: only flags of the mask can be required";
		return -EINVAL;
	}
	return 0;
}

static void format_flag_list(char *buf, size_t len, uint8_t bits)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	if (bits == 0xff || !bits) {
		snprintf(buf, len, "%s", bits ? "ALL" : "NONE");
		return;
	}
	for (i = 0; i < 8 && used < len; i++)
		if (bits & (1U << i))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
						 tcp_flag_names[i]);
}

void format_tcp_flags(char *buf, size_t len, const struct tcp_flags_match *f)
{
	char mask[40], value[40];

	format_flag_list(mask, sizeof(mask), f->mask);
	format_flag_list(value, sizeof(value), f->value);
	snprintf(buf, len, "%s/%s", mask, value);
}

int parse_icmp_type(const char *s, struct icmp_match *m, const char **why)
{
	uint64_t type, code = 0;
	int err;

	memset(m, 0, sizeof(*m));
	err = parse_digits(&s, &type, why);
	if (!err && *s == '/') {
		s++;
		err = parse_digits(&s, &code, why);
		m->code_given = true;
	}
	if (err)
		return err;
	if (*s) {
		*why = "expected TYPE or TYPE/CODE, such as 8 or 3/4";
		return -EINVAL;
	}
	if (type > 255 || code > 255) {
		*why = "an ICMP type and code are 0-255";
		return -ERANGE;
	}
	m->type = (uint8_t)type;
	m->code = (uint8_t)code;
	m->type_given = true;
	return 0;
}

void format_icmp_type(char *buf, size_t len, const struct icmp_match *m)
{
	if (m->code_given)
		snprintf(buf, len, "%u/%u", m->type, m->code);
	else
		snprintf(buf, len, "%u", m->type);
}

int parse_length_range(const char *s, uint16_t *lo, uint16_t *hi, const char **why)
{
	return parse_u16_range(s, lo, hi, "expected LEN or LOW-HIGH, in bytes",
			       "frame lengths are 1-65535 bytes, low to high", why);
}

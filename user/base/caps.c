// SPDX-License-Identifier: GPL-2.0
/* Effective capabilities, read with capget(2): no libcap needed. */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/caps.h"
#include "base/errors.h"

/* Only the capabilities some command needs have names here. */
static const struct {
	int cap;
	const char *name;
} cap_names[] = {
	{ CAP_BPF, "CAP_BPF" },
	{ CAP_NET_ADMIN, "CAP_NET_ADMIN" },
	{ CAP_PERFMON, "CAP_PERFMON" },
	{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
	{ CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE" },
	{ CAP_CHOWN, "CAP_CHOWN" },
};

#define N_CAP_NAMES (sizeof(cap_names) / sizeof(cap_names[0]))

uint64_t caps_effective(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	/* glibc has no wrapper; the raw call fills both 32-bit halves. */
	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return (uint64_t)data[1].effective << 32 | data[0].effective;
}

void caps_format(char *buf, size_t len, uint64_t caps)
{
	size_t i, n = 0, left = (size_t)__builtin_popcountll(caps);
	const char *sep;

	buf[0] = '\0';
	for (i = 0; i < N_CAP_NAMES && n < len; i++) {
		if (!(caps & CAP_BIT(cap_names[i].cap)))
			continue;
		left--;
		sep = !left ? "" : left == 1 ? " and " : ", ";
		n += (size_t)snprintf(buf + n, len - n, "%s%s", cap_names[i].name, sep);
	}
}

/*
 * What the kernel grants: CAP_SYS_ADMIN stands in for CAP_BPF and
 * CAP_PERFMON (bpf_capable(), perfmon_capable()), so a process that has it,
 * such as a unit whose bounding set names CAP_SYS_ADMIN but not
 * CAP_PERFMON, is not refused what the kernel would allow.
 */
static uint64_t caps_granted(uint64_t effective)
{
	if (effective & CAP_BIT(CAP_SYS_ADMIN))
		effective |= CAP_BIT(CAP_BPF) | CAP_BIT(CAP_PERFMON);
	return effective;
}

int require_caps(const char *cmd, uint64_t need)
{
	uint64_t missing = need & ~caps_granted(caps_effective());
	char needs[128], lacks[128];

	if (!missing)
		return 0;
	caps_format(needs, sizeof(needs), need);
	caps_format(lacks, sizeof(lacks), missing);
	error_line(cmd, "needs %s (missing %s): run it as root, or give it those capabilities",
		   needs, lacks);
	return EXIT_FAILURE_RUNTIME;
}

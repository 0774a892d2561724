/* SPDX-License-Identifier: GPL-2.0 */
/* Whether this kernel can run --prove (bpf/prove.h), asked once, and the program opened for it. */
#ifndef SLUICE_PINS_COOKIES_H
#define SLUICE_PINS_COOKIES_H

#include <stdbool.h>
#include "policy/policy.h"

/* The SYN cookie helpers for XDP: Linux 6.0+ built with CONFIG_SYN_COOKIES. */
bool syn_cookies_supported(void);

/* -EOPNOTSUPP and *why when doc proves on a kernel that cannot, else 0. */
int prove_refusal(const struct policy_doc *doc, const char **why);

struct sluice;
/*
 * The datapath's skeleton, opened with what this kernel can run switched
 * on in its read-only data (the cookie helpers); NULL and errno on failure.
 */
struct sluice *sluice_open_here(void);

#endif /* SLUICE_PINS_COOKIES_H */

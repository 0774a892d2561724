/* SPDX-License-Identifier: GPL-2.0 */
/* The exporter's live page and the JSON it polls (page.c). */
#ifndef SLUICE_COMMANDS_PAGE_H
#define SLUICE_COMMANDS_PAGE_H

#include <stdbool.h>
#include "outputs/http.h"

/* Fills r and returns true for /, /if/IFACE and /api/stats; false for any other path. */
bool page_route(const char *path, struct http_reply *r);

#endif /* SLUICE_COMMANDS_PAGE_H */

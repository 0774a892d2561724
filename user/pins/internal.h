/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of pins/ share between them; other layers use state.h.
 */
#ifndef SLUICE_PINS_INTERNAL_H
#define SLUICE_PINS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "pins/state.h"

#define BPFFS_ROOT "/sys/fs/bpf"

/* SLUICE_PIN_ROOT, or for a reader that cannot pass /sys/fs/bpf, its mirror (root.c). */
extern const char *pin_root;
/* Commands that only read open map pins BPF_F_RDONLY: file permission suffices. */
extern bool pins_readonly;

/*
 * Every pin of an interface: its name, the map's name in the BPF object
 * (NULL for the link or, through libxdp, the program), and where struct
 * state keeps its fd.
 */
struct pin_def {
	const char *name;
	const char *obj_name;
	size_t offset;
};

#define N_PINS 24
extern const struct pin_def pins[N_PINS];

int *pin_fd(struct state *st, size_t i);
bool pin_is_link(size_t i);
int dir_open_checked(int parent, const char *name, const char *path, bool sticky_ok);
int pin_root_walk(bool itself);
int pin_root_open(void);
/* SLUICE_LOCK_DIR, checked, made 0700 when missing; passable: searchable by all too (0711). */
int lock_dir_open(bool passable);
/* Adds what (S_IXGRP, S_IROTH...) to fd's directory's mode, unless it has it all. */
int dir_grant(int fd, mode_t what);
bool state_name_valid(const char *name);
int state_dir_open(const char *ifname, int *root_fd);
int dir_exists(const char *name);
int pin_open(const char *dir, const char *name, bool map);
unsigned int prog_id_of(int prog_fd);

#endif /* SLUICE_PINS_INTERNAL_H */

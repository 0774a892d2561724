# SPDX-License-Identifier: GPL-2.0
# sluice: build everything into build/ (git-ignored).

OUTPUT     := build
# A plain `make` builds everything, whatever rule comes first below.
.DEFAULT_GOAL := all
CLANG      ?= clang
CC         ?= gcc
BPFTOOL    ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
# Expanded when a recipe runs, not when make starts: `make demo` installs the
# compiler first, and -dumpmachine before that would give -I/usr/include/.
ARCH_INC    = /usr/include/$(shell $(CC) -dumpmachine)

# Debian packages the build, the tests and the demo need (ethtool: GRO on a
# veth peer, so the generator's frames reach a stack with no XDP program;
# nftables: the generator test counts IPv6 and TCP frames per source;
# procps: sysctl in the veth lab).
# scdoc: the man pages; bash-completion, zsh, fish: the completion tests; man-db and
# groff-base: the man pages' render check; libclang-rt-14-dev: the libFuzzer
# target, built only for `make fuzz` and `make test`.
# libxdp-dev, pkg-config: attach --multiprog; xdp-tools: its test (xdp-filter,
# xdp-loader) and the libxdp dispatcher object. systemd: systemd-analyze
# checks the units; build-essential (dpkg-buildpackage requires it), debhelper,
# dpkg-dev and lintian: the Debian package and its test (docs/operations.md).
# python3: the syslog listener that reads the audit trail back (test_audit.sh),
# and the fleet test's sampler, delay relay and checks (test_fleet.sh).
# libhiredis-dev: the fleet agent's Redis client; redis-server and redis-tools:
# the fleet test's Redis node and cluster (redis-cli --cluster create).
# fail2ban: the fail2ban action's test (test_fail2ban.sh runs a private server).
# chromium: the exporter's live page driven headless (test_page.sh).
# python3-yaml: test_dashboards.sh reads the alert rules and their tests.
DEB_PACKAGES := clang llvm gcc make libbpf-dev libelf-dev zlib1g-dev bpftool \
		linux-libc-dev libclang-rt-14-dev iproute2 jq util-linux libmicrohttpd-dev \
		prometheus curl ethtool nftables procps scdoc bash-completion zsh fish man-db groff-base \
		libxdp-dev xdp-tools pkg-config systemd build-essential debhelper dpkg-dev lintian \
		python3 redis-server redis-tools libhiredis-dev fail2ban chromium \
		python3-yaml
BENCH_PACKAGES := iptables nftables ethtool gnuplot-nox bpftool jq util-linux iproute2

# Quiet by default, as libbpf-bootstrap: `make V=1` shows every command.
ifeq ($(V),1)
Q       :=
msg     :=
else
Q       := @
msg      = @printf '  %-8s %s\n' "$(1)" "$(2)";
MAKEFLAGS += --no-print-directory
endif

BPF_CFLAGS  = -g -O2 -target bpf -mcpu=v3 -Wall -Wextra -Werror \
	      -Iinclude -I$(OUTPUT) -I$(ARCH_INC)
CFLAGS     ?= -O2 -g
# The caller's CPPFLAGS and LDFLAGS (Debian's hardening flags, say) are kept.
ALL_CFLAGS  = $(CPPFLAGS) $(CFLAGS) -Wall -Wextra -Werror -Iinclude -I$(OUTPUT) -Iuser -MMD -MP \
	      $(XDP_CFLAGS) $(HIREDIS_CFLAGS)
# Expanded when a recipe runs, after `make deps` installed libxdp-dev.
XDP_CFLAGS  = $(shell pkg-config --cflags libxdp 2>/dev/null)
XDP_LIBS    = $(shell pkg-config --libs libxdp 2>/dev/null || echo -lxdp)
# hiredis (libhiredis-dev, hiredis.pc): the fleet agent's Redis client.
HIREDIS_CFLAGS = $(shell pkg-config --cflags hiredis 2>/dev/null)
HIREDIS_LIBS   = $(shell pkg-config --libs hiredis 2>/dev/null || echo -lhiredis)
LDLIBS      = $(XDP_LIBS) $(HIREDIS_LIBS) -lmicrohttpd -lbpf -lelf -lz -lpthread -lm

# user/ is layered (docs/design.md): each directory includes only those below it.
USER_LAYERS := base values policy text pins maps reads outputs fleet commands
USER_LIB   := $(foreach d,$(filter-out commands,$(USER_LAYERS)),$(basename $(wildcard user/$(d)/*.c)))
USER_CMDS  := user/main $(basename $(wildcard user/commands/*.c))
# The command table without main(): what sluice-docgen reads.
CMD_TABLE_OBJS = $(filter-out $(OUTPUT)/user/main.o,$(CMD_OBJS))
LIB_OBJS   := $(USER_LIB:user/%=$(OUTPUT)/user/%.o)
# The exporter's live page (user/commands/page.html), embedded as bytes.
CMD_OBJS   := $(USER_CMDS:user/%=$(OUTPUT)/user/%.o) $(OUTPUT)/page_html.o

# BPF objects: the datapath, its build for Linux 6.1 (bpf/frame.h), its
# test-clock twin, and the tools' programs.
BPF_OBJS   := sluice sluice_compat sluice_test flood bench floor
SKELETONS  := $(BPF_OBJS:%=$(OUTPUT)/%.skel.h)

TOOLS      := $(OUTPUT)/sluice-flood $(OUTPUT)/xdp_pass.bpf.o $(OUTPUT)/sluice-sink $(OUTPUT)/sluice-bench \
	      $(OUTPUT)/sluice-bench-multiprog $(OUTPUT)/sluice-replay $(OUTPUT)/sluice-jit-lines
TESTS      := $(OUTPUT)/test-unit $(OUTPUT)/test-conf $(OUTPUT)/test-datapath \
	      $(OUTPUT)/test-model $(OUTPUT)/fuzz-datapath
# libFuzzer needs libclang-rt: not part of a plain build.
FUZZERS    := $(OUTPUT)/fuzz-parse $(OUTPUT)/fuzz-reply
DOCS       := $(OUTPUT)/sluice.8 $(OUTPUT)/sluice.conf.5 $(OUTPUT)/sluice.bash \
	      $(OUTPUT)/_sluice $(OUTPUT)/sluice.fish

# sluice_commit.h's rule comes first below: plain `make` means all.
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
# The commit sluice --version names: rewritten only when it changes, so
# main.o is rebuilt exactly then ("unknown" outside a git checkout).
$(OUTPUT)/sluice_commit.h: FORCE | $(OUTPUT)
	$(Q)c=$$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown); \
	printf '#define SLUICE_COMMIT "%s"\n' "$$c" > $@.tmp; \
	cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(OUTPUT)/user/main.o: $(OUTPUT)/sluice_commit.h

# Objects and skeletons are intermediates make would otherwise delete.
.SECONDARY:
.PHONY: FORCE all deps bench-deps test test-fleet demo bench bench-compare fuzz fuzzers clean bench-spoof algorithms-plot \
	bench-multiprog install uninstall

all: $(OUTPUT)/sluice $(DOCS) $(TOOLS) $(TESTS)

fuzzers: $(FUZZERS)

# Installs the Debian packages of list $(1) that are missing, in one apt-get.
define install_missing
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call install_missing,$(DEB_PACKAGES))

# What make bench-compare and bench-spoof use, the commands
# tools/bench/run.sh checks for (it points here when one is missing).
# perf (linux-perf) only for run.sh --perf.
bench-deps:
	$(call install_missing,$(BENCH_PACKAGES))

$(OUTPUT) $(OUTPUT)/user $(OUTPUT)/tools $(OUTPUT)/tests:
	@mkdir -p $@

$(OUTPUT)/sluice.bpf.o: bpf/sluice.bpf.c bpf/*.h include/*.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/sluice_compat.bpf.o: bpf/sluice.bpf.c bpf/*.h include/*.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DSLUICE_FRAME_LEN_HELPER -c $< -o $@

# The twin loads on 6.1 too (tools/vm-check.sh), so it reads the length as 6.1 does.
$(OUTPUT)/sluice_test.bpf.o: bpf/sluice.bpf.c bpf/*.h include/*.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DSLUICE_TEST_CLOCK -DSLUICE_FRAME_LEN_HELPER -c $< -o $@

$(OUTPUT)/flood.bpf.o: tools/flood/flood.bpf.c tools/flood/*.h include/*.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

BENCH_BPF := $(OUTPUT)/bench.bpf.o $(OUTPUT)/floor.bpf.o $(OUTPUT)/xdp_pass.bpf.o
$(BENCH_BPF): $(OUTPUT)/%.bpf.o: tools/bench/%.bpf.c tools/bench/*.h include/*.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The floors reuse the datapath's parser, clock and key.
$(OUTPUT)/floor.bpf.o: bpf/*.h

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $* > $@

$(OUTPUT)/user/%.o: user/%.c $(OUTPUT)/sluice.skel.h $(OUTPUT)/sluice_compat.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# page.html as a C array, with od and sed alone: the page stays a real file to
# read and edit, and the exporter serves it from the binary, needing nothing
# on disk.
$(OUTPUT)/page_html.c: user/commands/page.html | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q){ echo '#include <stddef.h>'; \
	  echo 'const unsigned char page_html[] = {'; \
	  od -An -v -tx1 $< | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; \
	  echo 'const size_t page_html_len = sizeof(page_html);'; } > $@

$(OUTPUT)/page_html.o: $(OUTPUT)/page_html.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# tools/<program>/ and the library they share, tools/lib/ (which tests use too).
$(OUTPUT)/tools/%.o: tools/%.c $(SKELETONS) | $(OUTPUT)/tools
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itools/lib -c $< -o $@

# The replay library and tool read the test-clock build through the fixture.
$(OUTPUT)/tools/lib/%.o $(OUTPUT)/tools/replay/replay.o: ALL_CFLAGS += -Wno-missing-field-initializers

FRAMES_OBJ := $(OUTPUT)/tools/lib/frames.o
TOOLS_LIB  := $(FRAMES_OBJ) $(OUTPUT)/tools/lib/fixture.o $(OUTPUT)/tools/lib/replay.o
TEST_LIB   := $(OUTPUT)/tests/harness.o $(TOOLS_LIB)

TEST_SKELS := $(OUTPUT)/sluice.skel.h $(OUTPUT)/sluice_compat.skel.h $(OUTPUT)/sluice_test.skel.h
# Case tables leave trailing fields of error cases unset on purpose.
TEST_CFLAGS = $(ALL_CFLAGS) -Itests/lib -Itools/lib -Wno-missing-field-initializers

$(OUTPUT)/tests/%.o: tests/unit/%.c $(TEST_SKELS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/%.o: tests/datapath/%.c $(TEST_SKELS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/%.o: tests/fuzz/%.c $(TEST_SKELS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/%.o: tests/lib/%.c $(TEST_SKELS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@

# The man pages and the bash, zsh and fish completion, from the option and command tables.
DOCGEN_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(wildcard user/docgen/*.c))
$(OUTPUT)/sluice-docgen: $(DOCGEN_OBJS) $(CMD_TABLE_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/%.scd: docs/%.scd.in $(OUTPUT)/sluice-docgen
	$(call msg,GEN,$@)
	$(Q)$(OUTPUT)/sluice-docgen man $< > $@

$(OUTPUT)/sluice.8 $(OUTPUT)/sluice.conf.5: $(OUTPUT)/%: $(OUTPUT)/%.scd
	$(call msg,SCDOC,$@)
	$(Q)scdoc < $< > $@

$(OUTPUT)/sluice.bash: $(OUTPUT)/sluice-docgen
	$(call msg,GEN,$@)
	$(Q)$(OUTPUT)/sluice-docgen completion > $@

$(OUTPUT)/_sluice: $(OUTPUT)/sluice-docgen
	$(call msg,GEN,$@)
	$(Q)$(OUTPUT)/sluice-docgen completion zsh > $@

$(OUTPUT)/sluice.fish: $(OUTPUT)/sluice-docgen
	$(call msg,GEN,$@)
	$(Q)$(OUTPUT)/sluice-docgen completion fish > $@

# Only the CLI serves HTTP.
$(OUTPUT)/sluice: $(CMD_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

FLOOD_OBJS := $(patsubst %,$(OUTPUT)/tools/flood/%.o,flood flood_args flood_frame flood_dev flood_packet)

$(OUTPUT)/sluice-flood: $(FLOOD_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/sluice-sink: $(OUTPUT)/tools/sink/sink.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/sluice-bench: $(OUTPUT)/tools/bench/bench.o $(FRAMES_OBJ) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# A profile's samples by source line of a loaded program (tools/bench/run.sh --perf).
$(OUTPUT)/sluice-jit-lines: $(OUTPUT)/tools/bench/jit_lines.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The algorithms' patterns through the datapath under the test clock (docs/algorithms.md).
$(OUTPUT)/sluice-replay: $(OUTPUT)/tools/replay/replay.o $(TOOLS_LIB) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# libxdp's dispatcher object, where Debian's libxdp1 installs it.
$(OUTPUT)/tools/bench/bench_multiprog.o: ALL_CFLAGS += \
	-DXDP_OBJECT_DIR='"/usr/lib/$(shell $(CC) -print-multiarch)/bpf"'

$(OUTPUT)/sluice-bench-multiprog: $(OUTPUT)/tools/bench/bench_multiprog.o $(FRAMES_OBJ) \
		$(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/test-unit: $(OUTPUT)/tests/test_args.o $(OUTPUT)/tests/test_output.o \
		$(OUTPUT)/tests/test_options.o $(OUTPUT)/tests/test_fleet.o \
		$(OUTPUT)/tests/test_placement.o $(OUTPUT)/tests/test_jiffy.o \
		$(OUTPUT)/tests/test_report.o $(OUTPUT)/tests/test_bans.o \
		$(OUTPUT)/tests/harness.o $(OUTPUT)/user/commands/top.o \
		$(OUTPUT)/user/commands/status.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/test-conf: $(OUTPUT)/tests/test_conf.o $(OUTPUT)/tests/harness.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/test-datapath: $(OUTPUT)/tests/test_datapath.o $(OUTPUT)/tests/test_meter.o \
		$(OUTPUT)/tests/test_policy.o $(OUTPUT)/tests/test_match.o $(OUTPUT)/tests/test_keys.o \
		$(OUTPUT)/tests/test_counts.o \
		$(OUTPUT)/tests/test_pressure.o $(OUTPUT)/tests/test_aggregate.o \
		$(OUTPUT)/tests/test_concurrency.o $(OUTPUT)/tests/test_table.o \
		$(OUTPUT)/tests/test_algorithms.o $(OUTPUT)/tests/test_fleet_datapath.o \
		$(OUTPUT)/tests/test_prove.o $(OUTPUT)/tests/test_ban.o \
		$(OUTPUT)/tests/datapath_main.o \
		$(TEST_LIB) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/fuzz-datapath: $(OUTPUT)/tests/fuzz_datapath.o $(OUTPUT)/tests/reference.o \
		$(OUTPUT)/tests/ref_rules.o \
		$(TEST_LIB) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The datapath against the reference model (tests/fuzz/model.c), on random sequences.
$(OUTPUT)/test-model: $(OUTPUT)/tests/test_model.o $(OUTPUT)/tests/model.o \
		$(TEST_LIB) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The datapath parser built natively, under libFuzzer, ASan and UBSan.
$(OUTPUT)/fuzz-parse: tests/fuzz/fuzz_parse.c tests/fuzz/reference.c bpf/parse.h include/*.h
	$(call msg,FUZZER,$@)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-Wall -Wextra -Werror -Iinclude -I$(ARCH_INC) tests/fuzz/fuzz_parse.c \
		tests/fuzz/reference.c -o $@

# The fleet agent's reply parsing (user/fleet/resp.c) against hiredis's
# reader, and the agent's readers of replies, under libFuzzer, ASan and UBSan.
FUZZ_REPLY_SRCS := tests/fuzz/fuzz_reply.c user/fleet/resp.c user/fleet/slots.c \
		   user/fleet/script.c user/values/endpoint.c
$(OUTPUT)/fuzz-reply: $(FUZZ_REPLY_SRCS) user/fleet/*.h user/values/endpoint.h | $(OUTPUT)
	$(call msg,FUZZER,$@)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-Wall -Wextra -Werror -Iinclude -Iuser $(HIREDIS_CFLAGS) $(FUZZ_REPLY_SRCS) \
		$(HIREDIS_LIBS) -o $@

# make fuzz [FUZZ_SECONDS=N]: the fuzz targets, N seconds each (CI: 30 each;
# make test runs the reply target for 10).
FUZZ_SECONDS ?= 30
fuzz: all fuzzers
	tests/fuzz/run.sh $(FUZZ_SECONDS)

# Root is needed: BPF_PROG_TEST_RUN, veth pairs and namespaces.
test:
	$(MAKE) deps
	$(MAKE) all fuzzers
	tests/run.sh

# The fleet alone (docs/fleet.md): three simulated hosts and real Redis,
# about 9 minutes (a Redis Cluster failover included); make test runs them too.
test-fleet: all
	tests/e2e/test_fleet.sh
	tests/e2e/test_fleet_failover.sh

# deps before the build starts, even under -j.
demo:
	$(MAKE) deps
	$(MAKE) all
	tools/demo.sh

# One core, so the figures are not the scheduler's.
bench: all
	taskset -c $$(( $$(nproc) - 1 )) $(OUTPUT)/sluice-bench

# Side by side with iptables, nftables and bare XDP_DROP over a veth pair;
# about 25 minutes. Installs what it needs (bench-deps) before the build,
# even under -j; writes tools/bench/results.{csv,md} and pps.png.
bench-compare:
	$(MAKE) deps
	$(MAKE) bench-deps
	$(MAKE) all
	tools/bench/run.sh $(BENCH_ARGS)

# The algorithms' replay table and picture (docs/algorithms.md): root for
# BPF_PROG_TEST_RUN, gnuplot (Debian gnuplot-nox) for the PNG. The outputs
# are committed, so neither the build nor the tests need gnuplot.
algorithms-plot: $(OUTPUT)/sluice-replay
	$(OUTPUT)/sluice-replay --plot docs/algorithms > docs/algorithms/replay.md
	gnuplot -e "datadir='docs/algorithms'; outfile='docs/algorithms.png'" docs/algorithms/plot.gp

bench-spoof:
	$(MAKE) deps
	$(MAKE) bench-deps
	$(MAKE) all
	bash tools/bench/spoof.sh

# libxdp's dispatcher against a direct attach, per packet (BPF_PROG_TEST_RUN).
bench-multiprog: all
	taskset -c $$(( $$(nproc) - 1 )) $(OUTPUT)/sluice-bench-multiprog

clean:
	rm -rf $(OUTPUT)

# make install [PREFIX=/usr/local] [DESTDIR=]: the command, its man pages and
# completion, the systemd units and the fail2ban action (their paths filled in
# for this PREFIX), the Grafana dashboard and Prometheus alert rules, and an
# example config. The BPF object is inside the binary (the skeleton), so
# nothing else is needed at run time.
PREFIX         ?= /usr/local
SBINDIR        ?= $(PREFIX)/sbin
DATADIR        ?= $(PREFIX)/share
MANDIR         ?= $(DATADIR)/man
BASHCOMPDIR    ?= $(DATADIR)/bash-completion/completions
# zsh looks in vendor-completions under /usr (packages) but in site-functions
# under /usr/local (the fpath of Debian's zsh; site-functions is upstream's).
ZSHCOMPDIR     ?= $(DATADIR)/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)
FISHCOMPDIR    ?= $(DATADIR)/fish/vendor_completions.d
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# A contrib path: fail2ban users copy or link it into /etc/fail2ban/action.d/.
FAIL2BANDIR    ?= $(DATADIR)/sluice/fail2ban
# Contrib paths too: imported into Grafana, listed in Prometheus's rule_files.
GRAFANADIR     ?= $(DATADIR)/sluice/grafana
PROMETHEUSDIR  ?= $(DATADIR)/sluice/prometheus
SYSCONFDIR     ?= /etc
UNITS          := sluice@.service sluice-exporter.service sluice-agent@.service
INSTALL        ?= install

install: $(OUTPUT)/sluice $(DOCS)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) \
		$(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(FAIL2BANDIR) $(DESTDIR)$(GRAFANADIR) \
		$(DESTDIR)$(PROMETHEUSDIR)
	$(Q)$(INSTALL) -m 0755 $(OUTPUT)/sluice $(DESTDIR)$(SBINDIR)/sluice
	$(Q)$(INSTALL) -m 0644 $(OUTPUT)/sluice.8 $(DESTDIR)$(MANDIR)/man8/sluice.8
	$(Q)$(INSTALL) -m 0644 $(OUTPUT)/sluice.conf.5 $(DESTDIR)$(MANDIR)/man5/sluice.conf.5
	$(Q)$(INSTALL) -m 0644 $(OUTPUT)/sluice.bash $(DESTDIR)$(BASHCOMPDIR)/sluice
	$(Q)$(INSTALL) -m 0644 $(OUTPUT)/_sluice $(DESTDIR)$(ZSHCOMPDIR)/_sluice
	$(Q)$(INSTALL) -m 0644 $(OUTPUT)/sluice.fish $(DESTDIR)$(FISHCOMPDIR)/sluice.fish
	$(Q)for u in $(UNITS); do \
		sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
			tools/systemd/$$u > $(DESTDIR)$(SYSTEMDUNITDIR)/$$u.tmp && \
		chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u.tmp && \
		mv $(DESTDIR)$(SYSTEMDUNITDIR)/$$u.tmp $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; \
	done
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' contrib/fail2ban/sluice.conf \
		> $(DESTDIR)$(FAIL2BANDIR)/sluice.conf.tmp && \
		chmod 0644 $(DESTDIR)$(FAIL2BANDIR)/sluice.conf.tmp && \
		mv $(DESTDIR)$(FAIL2BANDIR)/sluice.conf.tmp $(DESTDIR)$(FAIL2BANDIR)/sluice.conf
	$(Q)$(INSTALL) -m 0644 contrib/grafana/sluice-dashboard.json \
		$(DESTDIR)$(GRAFANADIR)/sluice-dashboard.json
	$(Q)$(INSTALL) -m 0644 contrib/prometheus/sluice-alerts.yml \
		$(DESTDIR)$(PROMETHEUSDIR)/sluice-alerts.yml
	$(Q)$(INSTALL) -d $(DESTDIR)$(SYSCONFDIR)/sluice
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/sluice/example.conf ] || \
		$(INSTALL) -m 0644 tools/example.conf $(DESTDIR)$(SYSCONFDIR)/sluice/example.conf

# Removes what install put there, but no config an operator may have edited:
# example.conf only if unchanged, /etc/sluice only if nothing is left in it.
uninstall:
	$(call msg,UNINST,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/sluice $(DESTDIR)$(MANDIR)/man8/sluice.8 \
		$(DESTDIR)$(MANDIR)/man5/sluice.conf.5 $(DESTDIR)$(BASHCOMPDIR)/sluice \
		$(DESTDIR)$(ZSHCOMPDIR)/_sluice $(DESTDIR)$(FISHCOMPDIR)/sluice.fish \
		$(UNITS:%=$(DESTDIR)$(SYSTEMDUNITDIR)/%) $(DESTDIR)$(FAIL2BANDIR)/sluice.conf \
		$(DESTDIR)$(GRAFANADIR)/sluice-dashboard.json $(DESTDIR)$(PROMETHEUSDIR)/sluice-alerts.yml
	$(Q)rmdir $(DESTDIR)$(FAIL2BANDIR) $(DESTDIR)$(GRAFANADIR) $(DESTDIR)$(PROMETHEUSDIR) \
		$(DESTDIR)$(DATADIR)/sluice 2>/dev/null || true
	$(Q)! cmp -s tools/example.conf $(DESTDIR)$(SYSCONFDIR)/sluice/example.conf || \
		rm -f $(DESTDIR)$(SYSCONFDIR)/sluice/example.conf
	$(Q)rmdir $(DESTDIR)$(SYSCONFDIR)/sluice 2>/dev/null || true

# make print-VAR: a variable's value, for scripts (tests/build/).
print-%:
	@echo '$($*)'

-include $(wildcard $(OUTPUT)/*/*.d $(OUTPUT)/user/*/*.d)

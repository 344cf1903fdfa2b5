# corral: a container cluster manager in which everything is a file.
# `make` builds, `make check` installs what is missing, builds and runs every
# test, `make asan` does the same under AddressSanitizer + UBSan.

CC ?= cc
PKGS := fuse3 yaml-0.1 inih libgit2 lmdb jansson libcrypto zlib libcurl
B ?= build
PREFIX ?= /usr/local
CFLAGS ?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -iquote lib -MMD -MP \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread
TEST_LDLIBS := $(shell pkg-config --libs cmocka 2>/dev/null)
# corral-noded signs service-account tokens with libcrypto (noded/token.c):
# it alone links it, with its unit tests and the tools that link its objects.
CRYPTO_LDLIBS := $(shell pkg-config --libs libcrypto 2>/dev/null)
# corral-noded serves its node's logs over HTTPS with libmicrohttpd, whose
# TLS is GnuTLS (noded/serve.c checks the client's certificate with it).
SERVE_CFLAGS := $(shell pkg-config --cflags libmicrohttpd gnutls 2>/dev/null)
SERVE_LDLIBS := $(shell pkg-config --libs libmicrohttpd gnutls 2>/dev/null)
# corral-noded makes each pod's veth, address and route over rtnetlink with
# libmnl (noded/rtnl.c).
MNL_CFLAGS := $(shell pkg-config --cflags libmnl 2>/dev/null)
MNL_LDLIBS := $(shell pkg-config --libs libmnl 2>/dev/null)

LIB_SRC := $(wildcard lib/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(B)/tests/tools/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)

# The daemons: folder D holds D/main.c and one file pair per concern;
# corral-D links them all, and D's unit tests (tests/unit/test_D_*.c) link
# all but main.o. The programs are one main.c each.
DAEMONS := fs ctrl sched noded dns
PROGRAMS := pause shim exec
BINS := $(DAEMONS:%=$(B)/corral-%) $(PROGRAMS:%=$(B)/corral-%) $(B)/corral-runas
# Every C folder, for `make format` and the format check of `make check`.
C_DIRS := lib $(DAEMONS) $(PROGRAMS) tests/unit tests/tools tests/fuzz bench

.PHONY: all deps check unit integration asan fuzz bench install up down lint format format-check clean

all: $(BINS) $(UNIT_BIN) $(TOOL_BIN)

deps:
	@scripts/deps.sh

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/libcorral.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

define daemon_rules
$(1)_OBJ := $$(patsubst %.c,$$(B)/%.o,$$(filter-out $(1)/main.c,$$(wildcard $(1)/*.c)))
$$(B)/corral-$(1): $$(B)/$(1)/main.o $$($(1)_OBJ) $$(B)/libcorral.a
	$$(CC) $$(CFLAGS) -o $$@ $$^ $$(LDLIBS)
$$(B)/tests/test_$(1)_%: tests/unit/test_$(1)_%.c $$($(1)_OBJ) $$(B)/libcorral.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) -iquote $(1) -o $$@ $$< $$($(1)_OBJ) $$(B)/libcorral.a $$(LDLIBS) $$(TEST_LDLIBS)
endef
$(foreach d,$(DAEMONS),$(eval $(call daemon_rules,$(d))))
$(B)/corral-noded $(B)/tests/tools/proxy-run $(B)/tests/test_noded_%: LDLIBS += $(CRYPTO_LDLIBS) $(SERVE_LDLIBS) $(MNL_LDLIBS)
$(B)/noded/serve.o: override CFLAGS += $(SERVE_CFLAGS)
$(B)/noded/rtnl.o: override CFLAGS += $(MNL_CFLAGS)

$(PROGRAMS:%=$(B)/corral-%): $(B)/corral-%: $(B)/%/main.o $(B)/libcorral.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# corral-runas runs inside containers, over any image's libc or none: it is
# linked statically, so without the sanitizers (whose runtimes cannot be).
$(B)/corral-runas: shim/runas.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -static -o $@ $<

# lib's unit tests (tests/unit/test_<module>.c) link the library alone.
$(B)/tests/test_%: tests/unit/test_%.c $(B)/libcorral.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(B)/libcorral.a $(LDLIBS) $(TEST_LDLIBS)

# proxy-run drives noded's service proxy alone: it links noded's objects.
$(B)/tests/tools/proxy-run: tests/tools/proxy-run.c $(noded_OBJ) $(B)/libcorral.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -iquote noded -o $@ $< $(noded_OBJ) $(B)/libcorral.a $(LDLIBS)

$(B)/tests/tools/%: tests/tools/%.c $(B)/libcorral.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(B)/libcorral.a $(LDLIBS)

check: deps
	$(MAKE) -j2 all
	@tests/run.sh $(B)

unit: all
	@tests/run.sh --unit $(B)

integration: all
	@tests/run.sh --integration $(B)

asan:
	$(MAKE) B=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" check

fuzz:
	@scripts/fuzz.sh

bench: all
	@bench/run.sh $(B)
	@bench/sched.sh $(B)
	@bench/ctrl.sh $(B)
	@bench/daemonset.sh $(B)
	@bench/statefulset.sh $(B)
	@bench/cronjob.sh $(B)
	@bench/services.sh $(B)
	@bench/pods.sh $(B)
	@bench/dns.sh $(B)
	@bench/svclat.sh $(B)
	@bench/jobs.sh $(B)
	@bench/namespace.sh $(B)
	@bench/storage.sh $(B)
	@bench/failover.sh $(B)
	@bench/quota.sh $(B)
	@bench/hpa.sh $(B)
	@bench/images.sh $(B)
	@bench/etcd.sh $(B)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man5 \
		$(DESTDIR)$(PREFIX)/share/man/man7 $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 755 $(BINS) tools/corral $(DESTDIR)$(PREFIX)/bin/
	for m in man/*.[578]; do install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man$${m##*.}/; done

up: deps
	$(MAKE) -j2 all
	tools/corral up

down:
	tools/corral down

lint:
	mandoc -Tlint -Wwarning man/*.[578]

format:
	clang-format -i $(wildcard $(C_DIRS:%=%/*.[ch]))

# Fails, naming each file, where a source is not as .clang-format writes it.
format-check:
	@clang-format --dry-run -Werror $(wildcard $(C_DIRS:%=%/*.[ch]))

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(B) -name '*.d' 2>/dev/null)

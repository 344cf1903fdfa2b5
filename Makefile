# corral: a container cluster manager in which everything is a file.
# `make` builds, `make check` installs what is missing, builds and runs every
# test, `make asan` does the same under AddressSanitizer + UBSan.

CC ?= cc
PKGS := fuse3 yaml-0.1 inih libgit2 lmdb
B ?= build
PREFIX ?= /usr/local
CFLAGS ?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -iquote lib -MMD -MP \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread
TEST_LDLIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

LIB_SRC := $(wildcard lib/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
FS_SRC := $(filter-out fs/main.c,$(wildcard fs/*.c))
FS_OBJ := $(FS_SRC:%.c=$(B)/%.o)
SCHED_SRC := $(filter-out sched/main.c,$(wildcard sched/*.c))
SCHED_OBJ := $(SCHED_SRC:%.c=$(B)/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(B)/tests/tools/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)

BINS := $(B)/corral-fs
ifneq ($(wildcard ctrl/main.c),)
BINS += $(B)/corral-ctrl
endif
ifneq ($(wildcard sched/main.c),)
BINS += $(B)/corral-sched
endif
ifneq ($(wildcard noded/main.c),)
BINS += $(B)/corral-noded
endif
ifneq ($(wildcard dns/main.c),)
BINS += $(B)/corral-dns
endif
BINS += $(B)/corral-pause $(B)/corral-shim

.PHONY: all deps check unit integration asan fuzz bench install up down lint format clean

all: $(BINS) $(UNIT_BIN) $(TOOL_BIN)

deps:
	@scripts/deps.sh

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/libcorral.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/corral-fs: $(B)/fs/main.o $(FS_OBJ) $(B)/libcorral.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/corral-%: $(B)/%/main.o $(B)/libcorral.a
	$(CC) $(CFLAGS) -o $@ $(filter %.o,$^) $(patsubst %.c,$(B)/%.o,$(filter-out $*/main.c,$(wildcard $*/*.c))) $(B)/libcorral.a $(LDLIBS)

# corral-sched: the pattern rule above would link sched/*.o without building
# them; its unit tests (test_sched_*) link them too, all but main.o.
$(B)/corral-sched: $(B)/sched/main.o $(SCHED_OBJ) $(B)/libcorral.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/test_sched_%: tests/unit/test_sched_%.c $(SCHED_OBJ) $(B)/libcorral.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -iquote sched -o $@ $< $(SCHED_OBJ) $(B)/libcorral.a $(LDLIBS) $(TEST_LDLIBS)

# corral-fs's unit tests (test_fs_*) link its objects, all but main.o;
# the other plain test_* test lib/ and link libcorral.a alone.
$(B)/tests/test_fs_%: tests/unit/test_fs_%.c $(FS_OBJ) $(B)/libcorral.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -iquote fs -o $@ $< $(FS_OBJ) $(B)/libcorral.a $(LDLIBS) $(TEST_LDLIBS)

$(B)/tests/test_%: tests/unit/test_%.c $(B)/libcorral.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(B)/libcorral.a $(LDLIBS) $(TEST_LDLIBS)

# corral-noded: the pattern rule above links noded/*.o without building
# them, so its objects are named here; its unit tests (test_noded_*) link
# them too, all but main.o.
NODED_OBJ := $(patsubst %.c,$(B)/%.o,$(filter-out noded/main.c,$(wildcard noded/*.c)))
$(B)/corral-noded: $(B)/noded/main.o $(NODED_OBJ) $(B)/libcorral.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/test_noded_%: tests/unit/test_noded_%.c $(NODED_OBJ) $(B)/libcorral.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -iquote noded -o $@ $< $(NODED_OBJ) $(B)/libcorral.a $(LDLIBS) $(TEST_LDLIBS)

# proxy-run drives noded's service proxy alone: it links noded's objects.
$(B)/tests/tools/proxy-run: tests/tools/proxy-run.c $(NODED_OBJ) $(B)/libcorral.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -iquote noded -o $@ $< $(NODED_OBJ) $(B)/libcorral.a $(LDLIBS)

# corral-ctrl: the same for ctrl/; its unit tests (test_ctrl_*) link its
# objects, all but main.o.
CTRL_OBJ := $(patsubst %.c,$(B)/%.o,$(filter-out ctrl/main.c,$(wildcard ctrl/*.c)))
$(B)/corral-ctrl: $(B)/ctrl/main.o $(CTRL_OBJ) $(B)/libcorral.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/test_ctrl_%: tests/unit/test_ctrl_%.c $(CTRL_OBJ) $(B)/libcorral.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -iquote ctrl -o $@ $< $(CTRL_OBJ) $(B)/libcorral.a $(LDLIBS) $(TEST_LDLIBS)

# corral-dns: the same for dns/; its unit tests (test_dns_*) link its
# objects, all but main.o.
DNS_OBJ := $(patsubst %.c,$(B)/%.o,$(filter-out dns/main.c,$(wildcard dns/*.c)))
$(B)/corral-dns: $(B)/dns/main.o $(DNS_OBJ) $(B)/libcorral.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/test_dns_%: tests/unit/test_dns_%.c $(DNS_OBJ) $(B)/libcorral.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -iquote dns -o $@ $< $(DNS_OBJ) $(B)/libcorral.a $(LDLIBS) $(TEST_LDLIBS)

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
	@bench/services.sh $(B)
	@bench/pods.sh $(B)
	@bench/dns.sh $(B)
	@bench/svclat.sh $(B)

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
	clang-format -i lib/*.[ch] fs/*.[ch] noded/*.[ch] pause/*.c shim/*.c tests/unit/*.c

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(B) -name '*.d' 2>/dev/null)

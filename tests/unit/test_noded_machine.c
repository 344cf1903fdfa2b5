/* test_noded_machine.c: what corral-noded reads about the machine —
 * /proc/meminfo and /etc/os-release parsing, Go architecture names, the
 * kubelet's allocatable, pressure from the numbers, and the real readers
 * giving sane values on this machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "machine.h"

static const char meminfo[] = "MemTotal:       16318656 kB\n"
			      "MemFree:         1000000 kB\n"
			      "MemAvailable:     102400 kB\n"
			      "Buffers:          123456 kB\n"
			      "HugePages_Total:       0\n";

static void test_machine_meminfo__fields_in_bytes(void **state)
{
	(void)state;
	int64_t v;
	assert_int_equal(machine_meminfo_field(meminfo, "MemTotal", &v), 0);
	assert_int_equal(v, 16318656LL * 1024);
	assert_int_equal(machine_meminfo_field(meminfo, "MemAvailable", &v), 0);
	assert_int_equal(v, 102400LL * 1024);
	/* no unit: taken as is */
	assert_int_equal(machine_meminfo_field(meminfo, "HugePages_Total", &v), 0);
	assert_int_equal(v, 0);
	/* a prefix of a field is not the field */
	assert_int_equal(machine_meminfo_field(meminfo, "Mem", &v), -1);
	assert_int_equal(machine_meminfo_field(meminfo, "SwapTotal", &v), -1);
	assert_int_equal(machine_meminfo_field("MemTotal: lots\n", "MemTotal", &v), -1);
	assert_int_equal(machine_meminfo_field("", "MemTotal", &v), -1);
}

static void test_machine_os_image__pretty_name(void **state)
{
	(void)state;
	char *s = machine_os_image("NAME=\"Debian GNU/Linux\"\n"
				   "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
				   "ID=debian\n");
	assert_string_equal(s, "Debian GNU/Linux 12 (bookworm)");
	free(s);
	s = machine_os_image("PRETTY_NAME=Alpine\n");
	assert_string_equal(s, "Alpine");
	free(s);
	s = machine_os_image("ID=x\n");
	assert_string_equal(s, "Linux");
	free(s);
	s = machine_os_image(NULL);
	assert_string_equal(s, "Linux");
	free(s);
}

static void test_machine_go_arch__kubernetes_names(void **state)
{
	(void)state;
	assert_string_equal(machine_go_arch("x86_64"), "amd64");
	assert_string_equal(machine_go_arch("aarch64"), "arm64");
	assert_string_equal(machine_go_arch("armv7l"), "arm");
	assert_string_equal(machine_go_arch("i686"), "386");
	assert_string_equal(machine_go_arch("ppc64le"), "ppc64le");
	assert_string_equal(machine_go_arch("s390x"), "s390x");
	assert_string_equal(machine_go_arch("riscv64"), "riscv64");
}

static void test_machine_allocatable__eviction_thresholds(void **state)
{
	(void)state;
	struct machine_resources cap = {
	    .cpu = 4000,
	    .memory = 8LL * 1024 * 1024 * 1024 * 1000,
	    .ephemeral_storage = 1000LL * 1000,
	    .pods = 110000,
	};
	struct machine_resources a;
	machine_allocatable(&cap, 100LL * 1024 * 1024, &a);
	assert_int_equal(a.cpu, 4000);
	assert_int_equal(a.pods, 110000);
	assert_int_equal(a.memory, (8LL * 1024 - 100) * 1024 * 1024 * 1000);
	assert_int_equal(a.ephemeral_storage, 900LL * 1000);
	/* less memory than the threshold: nothing to allocate */
	cap.memory = 50LL * 1024 * 1024 * 1000;
	machine_allocatable(&cap, 100LL * 1024 * 1024, &a);
	assert_int_equal(a.memory, 0);
	/* a hollow node keeps nothing back */
	cap.ephemeral_storage = 0;
	machine_allocatable(&cap, 0, &a);
	assert_int_equal(a.memory, cap.memory);
	assert_int_equal(a.ephemeral_storage, 0);
}

static void test_machine_pressure__from_numbers(void **state)
{
	(void)state;
	const char *loadavg = "0.10 0.20 0.30 2/500 12345\n";
	/* 100 MiB available, threshold 100 MiB: not below it */
	struct machine_pressure p = machine_pressure_compute(meminfo, 100LL * 1024 * 1024, 1000,
							     500, 1000, 500, loadavg, 32768);
	assert_false(p.memory);
	assert_false(p.disk);
	assert_false(p.pids);
	p = machine_pressure_compute(meminfo, 200LL * 1024 * 1024, 1000, 500, 1000, 500, loadavg,
				     32768);
	assert_true(p.memory);
	p = machine_pressure_compute(meminfo, 0, 1000, 99, 1000, 500, loadavg, 32768);
	assert_true(p.disk);
	p = machine_pressure_compute(meminfo, 0, 1000, 500, 1000, 49, loadavg, 32768);
	assert_true(p.disk);
	p = machine_pressure_compute(meminfo, 0, 1000, 500, 1000, 500, "0 0 0 1/990 1\n", 1000);
	assert_true(p.pids);
	/* nothing known: no pressure */
	p = machine_pressure_compute(NULL, 100, 0, 0, 0, 0, NULL, 0);
	assert_false(p.memory || p.disk || p.pids);
}

static void test_machine_read__this_machine(void **state)
{
	(void)state;
	struct machine_resources cap;
	struct error *err = NULL;
	assert_int_equal(machine_read_capacity("/nonexistent/corral/state", 110, &cap, &err), 0);
	assert_true(cap.cpu >= 1000);
	assert_int_equal(cap.cpu % 1000, 0);
	assert_true(cap.memory > 0);
	assert_true(cap.ephemeral_storage > 0);
	assert_int_equal(cap.pods, 110000);

	struct machine_info mi;
	machine_info_read(&mi);
	assert_non_null(mi.kernel_version);
	assert_true(strlen(mi.kernel_version) > 0);
	assert_non_null(mi.os_image);
	assert_non_null(mi.architecture);
	machine_info_clear(&mi);

	char ip[64];
	machine_host_ip(ip, sizeof(ip));
	assert_true(strlen(ip) >= 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_machine_meminfo__fields_in_bytes),
	    cmocka_unit_test(test_machine_os_image__pretty_name),
	    cmocka_unit_test(test_machine_go_arch__kubernetes_names),
	    cmocka_unit_test(test_machine_allocatable__eviction_thresholds),
	    cmocka_unit_test(test_machine_pressure__from_numbers),
	    cmocka_unit_test(test_machine_read__this_machine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* machine.c: capacity, identity, address and pressure of this machine. */
#include "machine.h"
#include "util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

int machine_meminfo_field(const char *meminfo, const char *field, int64_t *bytes)
{
	size_t flen = strlen(field);
	for (const char *line = meminfo; line && *line;) {
		if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
			const char *p = line + flen + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			if (!isdigit((unsigned char)*p))
				return -1;
			char *end;
			errno = 0;
			unsigned long long v = strtoull(p, &end, 10);
			if (errno || v > (unsigned long long)INT64_MAX / 1024)
				return -1;
			while (*end == ' ')
				end++;
			if (strncmp(end, "kB", 2) == 0)
				v *= 1024;
			*bytes = (int64_t)v;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -1;
}

char *machine_os_image(const char *os_release)
{
	for (const char *line = os_release; line && *line;) {
		if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
			const char *p = line + 12;
			size_t n = strcspn(p, "\n");
			if (n >= 2 && (p[0] == '"' || p[0] == '\'') && p[n - 1] == p[0]) {
				p++;
				n -= 2;
			}
			if (n)
				return xstrndup(p, n);
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return xstrdup("Linux");
}

const char *machine_go_arch(const char *m)
{
	static const struct {
		const char *uname, *go;
	} arches[] = {
	    {"x86_64", "amd64"},    {"amd64", "amd64"},
	    {"aarch64", "arm64"},   {"arm64", "arm64"},
	    {"i386", "386"},	    {"i486", "386"},
	    {"i586", "386"},	    {"i686", "386"},
	    {"ppc64le", "ppc64le"}, {"ppc64", "ppc64"},
	    {"s390x", "s390x"},	    {"riscv64", "riscv64"},
	    {"mips64", "mips64"},   {"loongarch64", "loong64"},
	};
	if (!m)
		return "unknown";
	for (size_t i = 0; i < ARRAY_SIZE(arches); i++)
		if (strcmp(m, arches[i].uname) == 0)
			return arches[i].go;
	if (strncmp(m, "arm", 3) == 0)
		return "arm";
	return m;
}

/* The first existing folder on the way up from path. */
static char *machine__existing(const char *path)
{
	char *p = xstrdup(path && *path ? path : "/");
	struct statvfs sv;
	while (statvfs(p, &sv) != 0) {
		char *slash = strrchr(p, '/');
		if (!slash || slash == p) {
			strcpy(p, "/");
			break;
		}
		*slash = '\0';
	}
	return p;
}

int machine_read_capacity(const char *storage_path, int max_pods, struct machine_resources *cap,
			  struct error **err)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		cpus = 1;
	cleanup_free char *meminfo = util_read_file("/proc/meminfo", NULL);
	if (!meminfo)
		return error_set(err, errno ? errno : EIO, "cannot read /proc/meminfo: %s",
				 strerror(errno));
	int64_t mem;
	if (machine_meminfo_field(meminfo, "MemTotal", &mem) < 0)
		return error_set(err, EINVAL, "/proc/meminfo has no MemTotal");
	cleanup_free char *where = machine__existing(storage_path);
	struct statvfs sv;
	if (statvfs(where, &sv) != 0)
		return error_set(err, errno, "statvfs %s: %s", where, strerror(errno));
	uint64_t storage = (uint64_t)sv.f_blocks * sv.f_frsize;
	cap->cpu = (int64_t)cpus * 1000;
	cap->memory = mem > INT64_MAX / 1000 ? INT64_MAX : mem * 1000;
	cap->ephemeral_storage =
	    storage > (uint64_t)INT64_MAX / 1000 ? INT64_MAX : (int64_t)storage * 1000;
	cap->pods = (int64_t)max_pods * 1000;
	return 0;
}

void machine_allocatable(const struct machine_resources *cap, int64_t eviction_memory,
			 struct machine_resources *alloc)
{
	*alloc = *cap;
	int64_t reserve = eviction_memory > INT64_MAX / 1000 ? INT64_MAX : eviction_memory * 1000;
	alloc->memory = cap->memory > reserve ? cap->memory - reserve : 0;
	/* the kubelet's nodefs.available<10%, in whole bytes */
	int64_t bytes = cap->ephemeral_storage / 1000;
	alloc->ephemeral_storage = (bytes - bytes / 10) * 1000;
}

static char *machine__read_line(const char *path)
{
	char *s = util_read_file(path, NULL);
	if (!s)
		return xstrdup("");
	s[strcspn(s, "\n")] = '\0';
	return s;
}

void machine_info_read(struct machine_info *mi)
{
	mi->machine_id = machine__read_line("/etc/machine-id");
	mi->system_uuid = machine__read_line("/sys/class/dmi/id/product_uuid");
	if (!*mi->system_uuid) {
		free(mi->system_uuid);
		mi->system_uuid = xstrdup(mi->machine_id);
	}
	mi->boot_id = machine__read_line("/proc/sys/kernel/random/boot_id");
	struct utsname u;
	if (uname(&u) == 0) {
		mi->kernel_version = xstrdup(u.release);
		mi->architecture = machine_go_arch(u.machine);
	} else {
		mi->kernel_version = xstrdup("");
		mi->architecture = "unknown";
	}
	/* machine_go_arch may hand back u.machine itself: keep a static one */
	if (mi->architecture == u.machine)
		mi->architecture = "unknown";
	cleanup_free char *osr = util_read_file("/etc/os-release", NULL);
	if (!osr)
		osr = util_read_file("/usr/lib/os-release", NULL);
	mi->os_image = machine_os_image(osr);
}

void machine_info_clear(struct machine_info *mi)
{
	free(mi->machine_id);
	free(mi->system_uuid);
	free(mi->boot_id);
	free(mi->kernel_version);
	free(mi->os_image);
	*mi = (struct machine_info){0};
}

/* The interface of the default route, from /proc/net/route. */
static bool machine__default_if(char *ifname, size_t size)
{
	cleanup_fclose FILE *f = fopen("/proc/net/route", "re");
	if (!f)
		return false;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		char name[IF_NAMESIZE + 1];
		unsigned long dest, mask;
		unsigned flags;
		if (sscanf(line, "%16s %lx %*x %x %*d %*d %*d %lx", name, &dest, &flags, &mask) !=
		    4)
			continue;
		if (dest == 0 && mask == 0 && (flags & 1 /* RTF_UP */)) {
			snprintf(ifname, size, "%s", name);
			return true;
		}
	}
	return false;
}

void machine_host_ip(char *buf, size_t size)
{
	char def[IF_NAMESIZE + 1] = "";
	machine__default_if(def, sizeof(def));
	struct ifaddrs *ifs = NULL;
	snprintf(buf, size, "127.0.0.1");
	if (getifaddrs(&ifs) != 0)
		return;
	bool found = false;
	for (int pass = 0; pass < 2 && !found; pass++) {
		for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
				continue;
			if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
				continue;
			/* corral's own bridges (crl<hash>) hold pod gateways, not the host */
			if (strncmp(i->ifa_name, "crl", 3) == 0)
				continue;
			if (pass == 0 && strcmp(i->ifa_name, def) != 0)
				continue;
			const struct sockaddr_in *sin = (const struct sockaddr_in *)i->ifa_addr;
			found = inet_ntop(AF_INET, &sin->sin_addr, buf, (socklen_t)size) != NULL;
		}
	}
	if (!found)
		snprintf(buf, size, "127.0.0.1");
	freeifaddrs(ifs);
}

struct machine_pressure machine_pressure_compute(const char *meminfo, int64_t eviction_memory,
						 uint64_t blocks, uint64_t blocks_avail,
						 uint64_t files, uint64_t files_free,
						 const char *loadavg, long pid_max)
{
	struct machine_pressure p = {0};
	int64_t avail;
	if (meminfo && machine_meminfo_field(meminfo, "MemAvailable", &avail) == 0)
		p.memory = avail < eviction_memory;
	if (blocks)
		p.disk = blocks_avail * 10 < blocks;
	if (files)
		p.disk = p.disk || files_free * 20 < files;
	long running, total;
	if (loadavg && pid_max > 0 && sscanf(loadavg, "%*s %*s %*s %ld/%ld", &running, &total) == 2)
		p.pids = (pid_max - total) * 20 < pid_max;
	return p;
}

void machine_pressure_read(const char *storage_path, int64_t eviction_memory,
			   struct machine_pressure *p)
{
	cleanup_free char *meminfo = util_read_file("/proc/meminfo", NULL);
	cleanup_free char *loadavg = util_read_file("/proc/loadavg", NULL);
	cleanup_free char *pidmax = util_read_file("/proc/sys/kernel/pid_max", NULL);
	cleanup_free char *where = machine__existing(storage_path);
	struct statvfs sv = {0};
	if (statvfs(where, &sv) != 0)
		sv = (struct statvfs){0};
	*p =
	    machine_pressure_compute(meminfo, eviction_memory, sv.f_blocks, sv.f_bavail, sv.f_files,
				     sv.f_ffree, loadavg, pidmax ? strtol(pidmax, NULL, 10) : 0);
}

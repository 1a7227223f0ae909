/* context.c: the facts every result carries about the machine it ran on. */
#include "clockbench.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define CS_DIR CB_CS_SYSFS "/"
#define VULN_DIR "/sys/devices/system/cpu/vulnerabilities/"

const char *cb_clocksource_file = CS_DIR "current_clocksource";

int cb_current_clocksource(char *buf, size_t n)
{
	return cb_read_line(cb_clocksource_file, buf, n);
}

/* Two mitigation entries by name, their first member. */
static int by_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* One entry per readable file of VULN_DIR, sorted by name; none if the
 * folder is unreadable. */
static void mitigations(struct cb_context *c)
{
	char path[sizeof VULN_DIR + 256];
	struct dirent *e;
	DIR *d = opendir(VULN_DIR);

	if (!d)
		return;
	while ((e = readdir(d)) && c->nmitigations < 32) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof c->mitigation[0].name)
			continue;
		snprintf(path, sizeof path, "%s%s", VULN_DIR, e->d_name);
		if (cb_read_line(path, c->mitigation[c->nmitigations].text, sizeof c->mitigation[0].text) == 0) {
			snprintf(c->mitigation[c->nmitigations].name, sizeof c->mitigation[0].name, "%s", e->d_name);
			c->nmitigations++;
		}
	}
	closedir(d);
	qsort(c->mitigation, (size_t)c->nmitigations, sizeof c->mitigation[0], by_name);
}

static int has_word(const char *line, const char *w)
{
	size_t n = strlen(w);
	const char *p = line;

	while ((p = strstr(p, w))) {
		if ((p == line || p[-1] == ' ' || p[-1] == '\t') && (p[n] == ' ' || p[n] == '\n' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

static void cpuinfo(struct cb_context *c)
{
	static char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "re");
	int got_flags = 0;

	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char *v = strchr(line, ':');
		if (!v)
			continue;
		v += 1 + (v[1] == ' ');
		if (!c->cpu_model[0] && !strncmp(line, "model name", 10)) {
			snprintf(c->cpu_model, sizeof c->cpu_model, "%s", v);
			c->cpu_model[strcspn(c->cpu_model, "\n")] = '\0';
		} else if (!got_flags && !strncmp(line, "flags", 5)) {
			got_flags = 1;
			c->constant_tsc = has_word(v, "constant_tsc");
			c->nonstop_tsc = has_word(v, "nonstop_tsc");
			c->tsc_known_freq = has_word(v, "tsc_known_freq");
			c->rdtscp = has_word(v, "rdtscp");
			c->hypervisor_flag = has_word(v, "hypervisor");
		}
	}
	fclose(f);
}

void cb_context_collect(struct cb_context *c)
{
	struct utsname u;
	uint32_t r[4];
	char *p;

	if (uname(&u) == 0) {
		snprintf(c->hostname, sizeof c->hostname, "%s", u.nodename);
		snprintf(c->kernel, sizeof c->kernel, "%s", u.release);
	}
	cb_read_line("/proc/cmdline", c->cmdline, sizeof c->cmdline);
	cpuinfo(c);

	cb_cpuid(0x80000000, r);
	if (r[0] >= 0x80000007) {
		uint32_t m = r[0];
		cb_cpuid(0x80000007, r);
		c->invtsc = !!(r[3] & (1u << 8));
		if (!c->cpu_model[0] && m >= 0x80000004) {
			char brand[49] = { 0 };
			for (uint32_t i = 0; i < 3; i++) {
				cb_cpuid(0x80000002 + i, r);
				memcpy(brand + 16 * i, r, 16);
			}
			for (p = brand; *p == ' '; p++)
				;
			snprintf(c->cpu_model, sizeof c->cpu_model, "%s", p);
		}
	}
	cb_cpuid(1, r);
	if (r[2] & (1u << 31)) {
		c->hypervisor_flag = 1;
		cb_cpuid(0x40000000, r);
		memcpy(c->hypervisor, &r[1], 12); /* ebx, ecx, edx */
		c->hypervisor[12] = '\0';
		if (!strcmp(c->hypervisor, "KVMKVMKVM") && r[0] >= 0x40000001) {
			cb_cpuid(0x40000001, r);
			c->kvm_features_valid = 1;
			c->kvm_features = r[0];
		}
	}
	cb_current_clocksource(c->clocksource, sizeof c->clocksource);
	cb_read_line(CS_DIR "available_clocksource", c->available_clocksource, sizeof c->available_clocksource);
	c->cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
	mitigations(c);
}

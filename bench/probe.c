/* probe.c: which path a clock read really took, detected, never guessed.
 *
 * A forked child installs a seccomp filter that makes the clock_gettime
 * system call fail with a marker errno.  A read the vDSO answers in user
 * space still succeeds; one that falls back to the kernel fails with the
 * marker.  The child reports one byte per case over a pipe.  Which function
 * makes the read is the caller's: tests give it one that must be a syscall
 * and one that must not enter the kernel (tests/bench/unit.c). */
#include "clockbench.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MARKER 4000 /* an errno no kernel returns */

const char *const cb_path_names[] = { "unknown", "user", "syscall", "error" };

static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | MARKER),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* The child: byte 0 is 0 or the errno of a failed setup, then one
 * enum cb_path byte per case. */
static void child(int fd, struct cb_probe_case *c, int n)
{
	unsigned char out[1 + 64] = { 0 };
	struct timespec ts;
	int i;

	if (install_filter() < 0) {
		out[0] = (unsigned char)(errno ? errno : EINVAL);
	} else if (cb_raw_clock_gettime(CLOCK_MONOTONIC, &ts) != -MARKER) {
		out[0] = 255; /* the filter did not take effect */
	} else {
		for (i = 0; i < n; i++) {
			long r = c[i].read(c[i].clk, &ts);
			out[1 + i] = r == 0 ? CB_PATH_USER : r == -MARKER ? CB_PATH_SYSCALL : CB_PATH_ERROR;
		}
	}
	if (write(fd, out, (size_t)n + 1) != (ssize_t)n + 1)
		_exit(1);
	_exit(0);
}

int cb_probe_cases(struct cb_probe_case *c, int n, char *reason, size_t len)
{
	unsigned char in[1 + 64];
	int fds[2], status = 0, i;
	ssize_t got = 0, r;
	pid_t pid;

	if (n < 1 || n > 64) {
		snprintf(reason, len, "probe: %d cases (1 to 64)", n);
		return -1;
	}
	if (pipe(fds) < 0) {
		snprintf(reason, len, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(reason, len, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], c, n);
	}
	close(fds[1]);
	while (got < n + 1 && (r = read(fds[0], in + got, (size_t)(n + 1 - got))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		got += r;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got != n + 1) {
		snprintf(reason, len, "probe child ended early (status %d)", status);
		return -1;
	}
	if (in[0] == 255) {
		snprintf(reason, len, "seccomp filter installed but did not take effect");
		return -1;
	}
	if (in[0]) {
		snprintf(reason, len, "prctl(PR_SET_SECCOMP): %s", strerror(in[0]));
		return -1;
	}
	for (i = 0; i < n; i++)
		c[i].path = in[1 + i];
	return 0;
}

/* The vdso method's reader: the C library's clock_gettime. */
static long libc_clock_gettime(clockid_t clk, struct timespec *ts)
{
	return clock_gettime(clk, ts) == 0 ? 0 : -errno;
}

void cb_probe_paths(struct cb_probe *p)
{
	struct cb_probe_case c[64];
	int i;

	memset(p, 0, sizeof *p);
	p->vdso_present = getauxval(AT_SYSINFO_EHDR) != 0;
	for (i = 0; i < cb_nclocks; i++) {
		c[2 * i] = (struct cb_probe_case){ libc_clock_gettime, cb_clocks[i].id, 0 };
		c[2 * i + 1] = (struct cb_probe_case){ cb_syscall_clock_gettime, cb_clocks[i].id, 0 };
	}
	if (cb_probe_cases(c, 2 * cb_nclocks, p->reason, sizeof p->reason) < 0)
		return;
	p->ok = 1;
	for (i = 0; i < cb_nclocks; i++) {
		p->vdso[i] = c[2 * i].path;
		p->syscall[i] = c[2 * i + 1].path;
	}
}

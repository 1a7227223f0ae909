/* probe.c: which path a clock read really took, detected, never guessed.
 *
 * A forked child installs a seccomp filter that makes the clock_gettime
 * system call fail with a marker errno.  A read the vDSO answers in user
 * space still succeeds; one that falls back to the kernel fails with the
 * marker.  The child reports one byte per clock and path over a pipe. */
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

/* The child: byte 0 is 0 or the errno of a failed setup, then two bytes
 * (vdso, syscall) per clock. */
static void child(int fd)
{
	unsigned char out[1 + 2 * 32] = { 0 };
	struct timespec ts;
	int i;

	if (install_filter() < 0) {
		out[0] = (unsigned char)(errno ? errno : EINVAL);
	} else if (cb_raw_clock_gettime(CLOCK_MONOTONIC, &ts) != -MARKER) {
		out[0] = 255; /* the filter did not take effect */
	} else {
		for (i = 0; i < cb_nclocks; i++) {
			long r = cb_raw_clock_gettime(cb_clocks[i].id, &ts);
			out[1 + 2 * i + 1] = r == -MARKER ? CB_PATH_SYSCALL : CB_PATH_ERROR;
			errno = 0;
			r = clock_gettime(cb_clocks[i].id, &ts);
			out[1 + 2 * i] = r == 0 ? CB_PATH_USER : errno == MARKER ? CB_PATH_SYSCALL : CB_PATH_ERROR;
		}
	}
	if (write(fd, out, sizeof out) != (ssize_t)sizeof out)
		_exit(1);
	_exit(0);
}

void cb_probe_paths(struct cb_probe *p)
{
	unsigned char in[1 + 2 * 32];
	int fds[2], status, i;
	ssize_t n = 0, r;
	pid_t pid;

	memset(p, 0, sizeof *p);
	p->vdso_present = getauxval(AT_SYSINFO_EHDR) != 0;
	if (pipe(fds) < 0) {
		snprintf(p->reason, sizeof p->reason, "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(p->reason, sizeof p->reason, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		child(fds[1]);
	}
	close(fds[1]);
	while (n < (ssize_t)sizeof in && (r = read(fds[0], in + n, sizeof in - (size_t)n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += r;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof in) {
		snprintf(p->reason, sizeof p->reason, "probe child ended early (status %d)", status);
		return;
	}
	if (in[0] == 255) {
		snprintf(p->reason, sizeof p->reason, "seccomp filter installed but did not take effect");
		return;
	}
	if (in[0]) {
		snprintf(p->reason, sizeof p->reason, "prctl(PR_SET_SECCOMP): %s", strerror(in[0]));
		return;
	}
	p->ok = 1;
	for (i = 0; i < cb_nclocks; i++) {
		p->vdso[i] = in[1 + 2 * i];
		p->syscall[i] = in[1 + 2 * i + 1];
	}
}

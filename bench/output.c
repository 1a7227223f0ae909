/* output.c: the output files of one run: checked before measuring, written
 * to temporaries beside their names, put in place together or not at all. */
#include "clockbench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define NOUT 3

/* One output: its option, its name, its temporary and, once put in place,
 * the inode it was given (so that only what this run placed is removed). */
struct out {
	const char *opt, *path;
	char tmp[PATH_MAX + 16];
	int fd;
	int placed;
	dev_t dev;
	ino_t ino;
};

static struct out outs[NOUT];
static int nouts;
/* The signal handler removes tmp[] of the first armed entries: it reads
 * only this count and those fixed arrays. */
static volatile sig_atomic_t armed;
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };

/* Quoted values in errors are cut, so one line stays one screen line. */
static const char *cut(const char *s, char *buf, size_t n)
{
	size_t i;

	snprintf(buf, n, "%s", s);
	if (strlen(s) >= n && n > 4)
		memcpy(buf + n - 4, "...", 4);
	for (i = 0; buf[i]; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	return buf;
}

static void collect(const struct cb_opts *o)
{
	const char *p[NOUT] = { o->output, o->json_out, o->csv_out };
	static const char *const opt[NOUT] = { "--output", "--json", "--csv" };
	int i;

	nouts = 0;
	for (i = 0; i < NOUT; i++) {
		if (!p[i])
			continue;
		memset(&outs[nouts], 0, sizeof outs[nouts]);
		outs[nouts].opt = opt[i];
		outs[nouts].path = p[i];
		outs[nouts].fd = -1;
		nouts++;
	}
}

/* The folder part of path ("." if none) into dir; base points at the rest. */
static int split(const char *path, char *dir, size_t n, const char **base)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		snprintf(dir, n, ".");
		*base = path;
		return 0;
	}
	if ((size_t)(slash - path) + 2 > n)
		return -1;
	if (slash == path)
		snprintf(dir, n, "/");
	else
		snprintf(dir, n, "%.*s", (int)(slash - path), path);
	*base = slash + 1;
	return 0;
}

/* 0 if a file can be created in dir, else -1 with errno: an unnamed
 * O_TMPFILE where the file system has it (nothing appears, nothing is left
 * behind), else the effective ids' access check, which root passes
 * everywhere: so the kernel's own file systems are refused by type. */
static int creatable(const char *dir)
{
	static const unsigned long pseudo[] = {
		0x9fa0,     /* proc */
		0x62656572, /* sysfs */
		0x27e0eb,   /* cgroup */
		0x63677270, /* cgroup2 */
		0x1cd1,     /* devpts */
		0x64626720, /* debugfs */
		0x74726163, /* tracefs */
		0x73636673, /* securityfs */
	};
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	struct statfs sf;
	size_t i;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != EISDIR && errno != EOPNOTSUPP && errno != EINVAL)
		return -1;
	if (statfs(dir, &sf) == 0)
		for (i = 0; i < sizeof pseudo / sizeof pseudo[0]; i++)
			if ((unsigned long)sf.f_type == pseudo[i]) {
				errno = EACCES;
				return -1;
			}
	return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS);
}

int cb_outputs_check(const struct cb_opts *o)
{
	char dir[PATH_MAX], res[NOUT][PATH_MAX * 2], a[96], b[96];
	struct stat st[NOUT];
	int have[NOUT], i, j;
	const char *base;

	collect(o);
	/* The same file twice, by name (folder resolved) or by inode. */
	for (i = 0; i < nouts; i++) {
		char *r;
		have[i] = lstat(outs[i].path, &st[i]) == 0;
		if (split(outs[i].path, dir, sizeof dir, &base) < 0 || !(r = realpath(dir, NULL)))
			snprintf(res[i], sizeof res[i], "%s", outs[i].path);
		else {
			snprintf(res[i], sizeof res[i], "%s/%s", r, base);
			free(r);
		}
		for (j = 0; j < i; j++)
			if (!strcmp(res[i], res[j]) || (have[i] && have[j] && st[i].st_dev == st[j].st_dev &&
							 st[i].st_ino == st[j].st_ino)) {
				fprintf(stderr, "clockbench: %s '%s': the same file as %s '%s' (see --help)\n",
					outs[i].opt, cut(outs[i].path, a, sizeof a), outs[j].opt,
					cut(outs[j].path, b, sizeof b));
				return CB_EXIT_USAGE;
			}
	}
	for (i = 0; i < nouts; i++) {
		const char *p = cut(outs[i].path, a, sizeof a);
		if (split(outs[i].path, dir, sizeof dir, &base) < 0) {
			cb_warn("cannot write %s: path too long", p);
			return CB_EXIT_FAIL;
		}
		if (!*base || !strcmp(base, ".") || !strcmp(base, "..") ||
		    (have[i] && S_ISDIR(st[i].st_mode))) {
			cb_warn("cannot write %s: Is a directory (%s names a file)", p, outs[i].opt);
			return CB_EXIT_FAIL;
		}
		if (have[i] && !o->force) {
			cb_warn("cannot write %s: File exists (--force replaces it)", p);
			return CB_EXIT_FAIL;
		}
		if (have[i] && !S_ISREG(st[i].st_mode) && !S_ISLNK(st[i].st_mode)) {
			cb_warn("cannot write %s: not a regular file (--force replaces only files)", p);
			return CB_EXIT_FAIL;
		}
		if (creatable(dir) < 0) {
			cb_warn("cannot write %s: %s", p, strerror(errno));
			return CB_EXIT_FAIL;
		}
	}
	return 0;
}

static void on_signal(int sig)
{
	int i, n = armed;

	for (i = 0; i < n && i < NOUT; i++)
		if (outs[i].tmp[0])
			unlink(outs[i].tmp);
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when the handler returns: the usual status */
}

/* Installs h for the cleanup signals, each blocking the others. */
static void set_signals(void (*h)(int))
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++)
		sigaddset(&sa.sa_mask, cleanup_signals[i]);
	for (i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++) {
		struct sigaction was;
		/* An ignored signal stays ignored (nohup, a shell's background job). */
		if (sigaction(cleanup_signals[i], NULL, &was) == 0 && was.sa_handler == SIG_IGN)
			continue;
		sigaction(cleanup_signals[i], &sa, NULL);
	}
}

/* Blocks (1) or unblocks (0) the cleanup signals in this thread. */
static void block(int on, sigset_t *old)
{
	sigset_t s;
	size_t i;

	sigemptyset(&s);
	for (i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++)
		sigaddset(&s, cleanup_signals[i]);
	if (on)
		sigprocmask(SIG_BLOCK, &s, old);
	else
		sigprocmask(SIG_SETMASK, old, NULL);
}

int cb_outputs_open(const struct cb_opts *o)
{
	char a[96];
	int i;

	sigset_t old;

	collect(o);
	if (!nouts)
		return 0;
	set_signals(on_signal);
	block(1, &old); /* a signal between mkstemp and armed would leave one */
	for (i = 0; i < nouts; i++) {
		struct out *x = &outs[i];
		int too_long = snprintf(x->tmp, sizeof x->tmp, "%s.tmp.XXXXXX", x->path) >= (int)sizeof x->tmp;
		if (!too_long)
			x->fd = mkstemp(x->tmp);
		if (too_long || x->fd < 0) {
			cb_warn("cannot write %s: %s", cut(x->path, a, sizeof a), too_long ? "path too long" : strerror(errno));
			x->tmp[0] = '\0';
			cb_outputs_abort();
			block(0, &old);
			return -1;
		}
		armed = i + 1;
	}
	block(0, &old);
	return 0;
}

int cb_outputs_write(int i, const char *data, size_t len)
{
	struct out *x = &outs[i];
	size_t off = 0;
	char a[96];

	while (off < len) {
		ssize_t w = write(x->fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			goto fail;
		off += (size_t)w;
	}
	if (fchmod(x->fd, 0644) < 0 || fsync(x->fd) < 0)
		goto fail;
	return 0;
fail:
	cb_warn("write %s: %s; nothing kept", cut(x->path, a, sizeof a), strerror(errno));
	cb_outputs_abort();
	return -1;
}

/* Removes the name of what this run put at x->path, if it is still ours. */
static void unplace(struct out *x)
{
	struct stat st;

	if (x->placed && lstat(x->path, &st) == 0 && st.st_dev == x->dev && st.st_ino == x->ino)
		unlink(x->path);
	x->placed = 0;
}

/* Where a file system has no hard links: a rename that refuses to replace. */
static int no_replace(struct out *x)
{
	int e = errno;

	if (e != EPERM && e != EOPNOTSUPP && e != ENOSYS)
		return -1;
#ifdef SYS_renameat2
	if (syscall(SYS_renameat2, AT_FDCWD, x->tmp, AT_FDCWD, x->path, 1 /* RENAME_NOREPLACE */) == 0) {
		x->tmp[0] = '\0';
		return 0;
	}
#else
	errno = e;
#endif
	return -1;
}

/* Syncs the folder of path, so that a name put there survives a crash. */
static void sync_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *base;
	int fd;

	if (split(path, dir, sizeof dir, &base) < 0)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd); /* best effort: some file systems refuse it */
		close(fd);
	}
}

int cb_outputs_place(int force)
{
	char a[96], b[96], kept[512] = "";
	const char *why = "";
	struct stat st, at;
	sigset_t old;
	int i, j, e = 0;

	/* No signal between the first name and the last: all or none. */
	block(1, &old);
	for (i = 0; i < nouts; i++) {
		struct out *x = &outs[i];
		if (fstat(x->fd, &st) < 0 || close(x->fd) < 0) {
			x->fd = -1;
			e = errno;
			goto fail;
		}
		x->fd = -1;
		/* link(2), not a check and a rename: of two runs naming one file,
		 * exactly one gets it, the other EEXIST. */
		if (force ? rename(x->tmp, x->path) < 0 : link(x->tmp, x->path) < 0 && no_replace(x) < 0) {
			e = errno;
			if (e == EEXIST)
				why = " (created while this run measured)";
			goto fail;
		}
		if (force)
			x->tmp[0] = '\0';
		if (lstat(x->path, &at) < 0) {
			e = errno;
			goto fail;
		}
		x->dev = at.st_dev;
		x->ino = at.st_ino;
		x->placed = 1;
		if (at.st_dev != st.st_dev || at.st_ino != st.st_ino) {
			e = ESTALE;
			why = " (its temporary was replaced while this run measured)";
			i++; /* this one was placed too: take it back */
			goto fail;
		}
	}
	for (i = 0; i < nouts; i++) {
		if (outs[i].tmp[0]) {
			unlink(outs[i].tmp);
			outs[i].tmp[0] = '\0';
		}
		sync_dir(outs[i].path);
	}
	armed = 0;
	nouts = 0;
	block(0, &old);
	return 0;
fail:
	j = i < nouts ? i : nouts - 1; /* the one that failed */
	for (i = 0; i < nouts; i++) {
		if (!outs[i].placed)
			continue;
		if (force && !(e == ESTALE && i == j)) /* rename(2) cannot be undone */
			cb_append(kept, sizeof kept, "%s%s", kept[0] ? ", " : "", cut(outs[i].path, b, sizeof b));
		else
			unplace(&outs[i]);
	}
	cb_warn("cannot write %s: %s%s; %s%s", cut(outs[j].path, a, sizeof a), strerror(e), why,
		kept[0] ? "kept: " : "nothing kept", kept);
	cb_outputs_abort();
	block(0, &old);
	return -1;
}

void cb_outputs_abort(void)
{
	int i;

	armed = 0;
	for (i = 0; i < nouts; i++) {
		struct out *x = &outs[i];
		if (x->fd >= 0)
			close(x->fd);
		x->fd = -1;
		if (x->tmp[0])
			unlink(x->tmp);
		x->tmp[0] = '\0';
	}
	nouts = 0;
}

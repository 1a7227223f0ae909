/* main.c: the host build's entry point; the guest's PID 1 has its own.
 * `clockbench VERB [ARG]...` runs the rest of the suite: VERB's program,
 * as packaging/commands names it, under the top folder this engine is in
 * (<top>/bench/clockbench, in a checkout and installed alike), found as git
 * finds git-*; an alias (the list names a verb in place of a program) runs
 * that verb's, under the name typed.  Without a verb (no argument, or one that starts with '-'),
 * the engine. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clockbench.h"

#define LIST "packaging/commands"
#define LIST_MAX 16384 /* bytes: the list is read whole, once */
#define VERBS_MAX 32

struct verb {
	char *name, *src, *what;
};

static char top[PATH_MAX];
static char list[LIST_MAX + 1];
static struct verb verbs[VERBS_MAX];
static int nverbs;

/* One line on the list, of line (0: of the whole list); returns -1. */
static int list_bad(int line, const char *why)
{
	if (line)
		fprintf(stderr, "clockbench: %s/%s: line %d: %s\n", top, LIST, line, why);
	else
		fprintf(stderr, "clockbench: %s/%s: %s\n", top, LIST, why);
	return -1;
}

/* A verb: a-z, then a-z, 0-9 or '-', at most 32. */
static int verb_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 32 || s[0] < 'a' || s[0] > 'z')
		return 0;
	for (i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	return 1;
}

/* A program's path under top: relative, no "..", plain characters. */
static int src_ok(const char *s)
{
	const char *p;

	if (!*s || *s == '/' || strstr(s, "..") || strlen(s) > 200)
		return 0;
	for (p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("._/-", *p)))
			return 0;
	return 1;
}

/* The verb name as listed so far, an alias resolved to the verb it names
 * (its program a path), or NULL. */
static struct verb *find(const char *name)
{
	int i;

	for (i = 0; i < nverbs; i++)
		if (!strcmp(verbs[i].name, name))
			return strchr(verbs[i].src, '/') ? &verbs[i] : find(verbs[i].src);
	return NULL;
}

/* The next word of *p (split at spaces), or NULL; *p moves past it. */
static char *word(char **p)
{
	char *w;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (!**p)
		return NULL;
	w = *p;
	while (**p && **p != ' ' && **p != '\t')
		(*p)++;
	if (**p)
		*(*p)++ = 0;
	return w;
}

/* Reads top (the engine's own real path less bench/clockbench) and its
 * list of verbs.  Returns 0, or -1 after one line saying why. */
static int read_verbs(void)
{
	char path[PATH_MAX + sizeof LIST];
	ssize_t n;
	size_t len = 0;
	char *p, *nl;
	int fd, i, line = 0;

	n = readlink("/proc/self/exe", top, sizeof top - 1);
	if (n <= 0 || (size_t)n >= sizeof top - 1) {
		fprintf(stderr, "clockbench: cannot read the engine's own path (/proc/self/exe): %s\n",
			n < 0 ? strerror(errno) : "too long");
		return -1;
	}
	top[n] = 0;
	for (i = 0; i < 2; i++) {
		p = strrchr(top, '/');
		if (!p || p == top) {
			fprintf(stderr, "clockbench: %s: not <top>/bench/clockbench, so no list of verbs\n", top);
			return -1;
		}
		*p = 0;
	}
	snprintf(path, sizeof path, "%s/%s", top, LIST);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "clockbench: %s: %s (the list of verbs)\n", path, strerror(errno));
		return -1;
	}
	while (len <= LIST_MAX && (n = read(fd, list + len, LIST_MAX + 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (n < 0)
		return list_bad(0, strerror(errno));
	if (len > LIST_MAX)
		return list_bad(0, "over 16 KiB");
	list[len] = 0;
	for (p = list; *p; p = nl) {
		struct verb *v = &verbs[nverbs];
		line++;
		nl = strchr(p, '\n');
		if (nl)
			*nl++ = 0;
		else
			nl = p + strlen(p);
		if (*p == '#' || !p[strspn(p, " \t")])
			continue;
		if (nverbs == VERBS_MAX)
			return list_bad(line, "more than 32 verbs");
		v->name = word(&p);
		v->src = word(&p);
		v->what = p + strspn(p, " \t");
		if (!verb_name_ok(v->name))
			return list_bad(line, "not a verb (a-z, 0-9, '-')");
		if (!v->src || (strchr(v->src, '/') && !src_ok(v->src)))
			return list_bad(line, "no program, or not a path under the top folder");
		if (!strchr(v->src, '/') && !find(v->src))
			return list_bad(line, "an alias of no verb listed before it");
		if (!*v->what)
			return list_bad(line, "no description");
		if (!strcmp(v->name, "help"))
			return list_bad(line, "help is the engine's own");
		for (i = 0; i < nverbs; i++)
			if (!strcmp(verbs[i].name, v->name))
				return list_bad(line, "a verb listed twice");
		nverbs++;
	}
	if (!nverbs)
		return list_bad(line, "no verb");
	return 0;
}

static void help(void)
{
	int i;

	printf("Usage: clockbench [OPTION]... | clockbench VERB [ARG]...\n"
	       "Without a verb, the engine: 'clockbench --help' lists its options.\n"
	       "The verbs (each one's options: clockbench VERB --help; man clockbench-VERB):\n");
	for (i = 0; i < nverbs; i++)
		printf("  %-12s %s\n", verbs[i].name, verbs[i].what);
	printf("  %-12s %s\n", "help", "this list; help VERB: VERB's --help");
}

/* Runs VERB's program with args (args[0] is replaced by its path); returns
 * only on failure. */
static int run_verb(const char *name, char **args)
{
	char path[PATH_MAX + 256], prog[64];
	struct verb *v = find(name);

	if (!v) {
		fprintf(stderr, "clockbench: '%.40s' is not a verb; 'clockbench help' lists them\n", name);
		return CB_EXIT_USAGE;
	}
	snprintf(path, sizeof path, "%s/%s", top, v->src);
	/* The program names itself by it in its usage and messages. */
	snprintf(prog, sizeof prog, "clockbench %s", name);
	if (setenv("CB_PROG", prog, 1) < 0) {
		fprintf(stderr, "clockbench: %s: %s\n", name, strerror(errno));
		return CB_EXIT_FAIL;
	}
	args[0] = path;
	execv(path, args);
	fprintf(stderr, "clockbench: %s: cannot run %s: %s\n", name, path, strerror(errno));
	return CB_EXIT_FAIL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && argv[1][0] != '-') {
		if (read_verbs() < 0)
			return CB_EXIT_FAIL;
		if (strcmp(argv[1], "help"))
			return run_verb(argv[1], argv + 1);
		if (argc > 3) {
			fprintf(stderr, "clockbench: help takes one verb at most (see 'clockbench help')\n");
			return CB_EXIT_USAGE;
		}
		if (argc == 2 || !strcmp(argv[2], "help") || !strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) {
			help();
			return CB_EXIT_OK;
		}
		char *args[] = { argv[2], "--help", NULL };
		return run_verb(argv[2], args);
	}
	/* The guest's /init waits for its kernel to settle and says so in the
	 * result; here a run on an unsettled clocksource is refused. */
	cb_refuse_unsettled = 1;
	return clockbench_main(argc, argv);
}

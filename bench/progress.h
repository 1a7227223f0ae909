/* progress.h: the engine's progress on stderr, by mode (util.c). */
#ifndef CB_PROGRESS_H
#define CB_PROGRESS_H

/* Chooses the mode once, after the options: none with --quiet; else
 * --progress (auto, none, steps, tty, cells: cb_progress_mode); auto is tty
 * when stderr is a terminal, else steps.  Returns 0 (the option parser has
 * judged the mode). */
int cb_progress_setup(void);
/* A step within a step (a cell of the cost sweep, one clock's warp check):
 * one line each in mode cells; redrawn in place in mode tty; in mode steps
 * a line only when the last one is 10 s old. */
void cb_progress_cell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Clears the line drawn in place (mode tty), so that what follows starts
 * on a clean line: called when the run ends and before anything else is
 * printed. */
void cb_progress_end(void);

#endif

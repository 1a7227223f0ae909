/* duration.h: a time span as cyclictest and fio take it (10s, 500ms, 2m). */
#ifndef CB_DURATION_H
#define CB_DURATION_H

/* The units, in words for --help and errors; bare numbers are seconds. */
#define CB_DURATION_UNITS "us, ms, s, m, h"

/* Parses s: a decimal number (digits with an optional fraction, or a
 * fraction alone: 1, 1.5, .5; no sign, no exponent), then optionally one
 * unit of CB_DURATION_UNITS.  Sets *sec to the span in seconds and returns
 * 0, or returns -1 (nothing set) if s is not one.  Range checks are the
 * caller's, on the seconds.  host-scripts/cbhost/duration.py is the same
 * rule in Python. */
int cb_parse_duration(const char *s, double *sec);

#endif

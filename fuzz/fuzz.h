/* fuzz.h: the one assertion of the fuzz targets: a broken property is a
 * crash libFuzzer keeps the input of, with the property named on fd 2
 * (the targets may have pointed stdio's stderr elsewhere). */
#ifndef CLOCKBENCH_FUZZ_H
#define CLOCKBENCH_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_ASSERT(cond)                                                                       \
	do {                                                                                    \
		if (!(cond)) {                                                                  \
			dprintf(2, "%s:%d: property broken: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                \
		}                                                                               \
	} while (0)

#endif

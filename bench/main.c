/* main.c: the host build's entry point; the guest's PID 1 has its own. */
#include "clockbench.h"

int main(int argc, char **argv)
{
	/* The guest's /init waits for its kernel to settle and says so in the
	 * result; here a run on an unsettled clocksource is refused. */
	cb_refuse_unsettled = 1;
	return clockbench_main(argc, argv);
}

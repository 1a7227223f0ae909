/* main.c: the host build's entry point; the guest's PID 1 has its own. */
#include "clockbench.h"

int main(int argc, char **argv)
{
	return clockbench_main(argc, argv);
}

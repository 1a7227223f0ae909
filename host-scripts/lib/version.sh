# version.sh: `COMMAND --version` for the suite's shell commands (sourced):
# shellcheck shell=bash
# one line, the one version, CB_VERSION in bench/clockbench.h, read as
# cbcontract.names reads it for the Python commands.
# cb_version NAME HERE: prints "NAME VERSION" (HERE: the command's own folder).
cb_version() {
	printf '%s %s\n' "$1" "$(sed -n 's/^#define CB_VERSION "\([0-9A-Za-z.+~-]\{1,40\}\)"$/\1/p' "$2/../bench/clockbench.h")"
}

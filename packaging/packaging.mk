# packaging.mk: `make install`, `uninstall`, `man` and `deb`.  Included by
# the top Makefile (PREFIX, DESTDIR, BINDIR).  The suite keeps the
# checkout's layout under $(LIBDIR) (the engine, host-scripts/, analysis/,
# the static guest build, the list of verbs), so every program finds its
# parts from its own real path; $(BINDIR) holds one link, clockbench, the
# engine, which runs the verbs of packaging/commands (the one list) from
# there.

# The install folders: build conventions, from the environment too.
LIBDIR ?= $(PREFIX)/lib/clockbench
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/clockbench
EXAMPLEDIR ?= $(DATADIR)/clockbench
# systemd reads units under /usr/local/lib/systemd/system too; the package
# passes Debian's /lib/systemd/system (dh_installsystemd's folder).
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# The version, read as the shell commands read it (host-scripts/lib/version.sh).
CB_VERSION := $(shell bash -c '. host-scripts/lib/version.sh && cb_fact VERSION')
# The watch's lock folder as the unit's RuntimeDirectory= names it (relative to /run).
CB_WATCH_RUN_NAME := $(patsubst /run/%,%,$(shell bash -c '. host-scripts/lib/version.sh && cb_fact WATCH_RUN_DIR'))
COMMANDS := packaging/commands
# The engine's page's one line (each verb's is in packaging/commands).
ENGINE_WHAT := measure what a clock read costs, per clock and per path
MAN_BUILD := $(BUILD)/man
DEB_BUILD := $(BUILD)/deb

# What goes under $(LIBDIR), by its checkout path: programs (the engine,
# every verb's, from packaging/commands, and the helpers they run), then
# data (the list of verbs among them: the engine reads it there).
LIB_PROGRAMS := bench/clockbench $(shell sed '/^\#/d' $(COMMANDS) | awk '$$2 ~ /\// {print $$2}') host-scripts/runfolder host-scripts/bench-running-vm \
	guest-init/mkinitramfs.py $(BUILD)/clockbench-static $(GUEST_BUILD)/init
LIB_DATA := $(COMMANDS) packaging/settings bench/names.h host-scripts/lib/clocksource.sh host-scripts/lib/version.sh $(wildcard contract/cbcontract/*.py) $(wildcard host-scripts/cbhost/*.py) $(wildcard analysis/cbanalysis/*.py) \
	$(GUEST_BUILD)/initramfs.cpio
DOCS := README.md $(wildcard docs/*.md)
EXAMPLES := $(addprefix analysis/fleet/,clockbench.yml clockbench-alerts.yml inventory.example.ini)
# The playbook's filter of a host's listing (it imports $(LIBDIR)/contract).
FLEET_PLUGINS := analysis/fleet/filter_plugins/clockbench_fetch.py
DASHBOARDS := analysis/grafana/clockbench.json
# systemd units, installed with @BINDIR@ replaced; never enabled here.
UNITS := packaging/systemd/clockbench-watch.service

.PHONY: install uninstall man deb help-packaging
# $(call lib_install,FILES,MODE): each of FILES under $(LIBDIR) at its checkout path, with MODE.
lib_install = for f in $(1); do \
	d=$(call quote,$(DESTDIR)$(LIBDIR))/"$$(dirname "$$f")" && install -d "$$d" && install -m $(2) "$$f" "$$d/" || exit 1; \
	done

# help2man reads each page's --help: the engine's (clockbench(1), with a
# VERBS section made from packaging/commands) and each verb's, as
# `clockbench VERB --help` prints it (clockbench-VERB(1)), 80 columns wide,
# with two headings made sections of their own ("Commands:", "Exit
# status:"; help2man knows "Options:" and "Environment:"); a verb whose
# Commands have their own --help (report) gets each one's options, under
# "Options of COMMAND:".  Then packaging/man/<page>.h2m (FILES, EXAMPLES,
# SEE ALSO) and packaging/man.h2m (what every page shares).  The date is
# SOURCE_DATE_EPOCH's where set (a package build).
MAN_SHAPE := sed -E 's/^(Commands|Exit status):$$/*\1*/'
MAN_COMMANDS := awk '/^Commands:$$/ { on = 1; next } on && /^$$/ { exit } on && /^  [a-z]/ { print $$1 }'
MAN_SUBOPTS := awk -v c="$$c" 'NR == 1 { print "Options of " c ":" } /^$$/ { body = 1; next } body && /^ / && !/^  -h, --help /'
# MAN_PAGE: page $$page (description $$what) from the engine's --help with
# the arguments $$verb (none: the engine's own).
MAN_PAGE = echo "  MAN     $(MAN_BUILD)/$$page.1"; \
	h="$(MAN_BUILD)/help/$$page" && \
	COLUMNS=80 bench/clockbench $$verb --help >"$$h.txt" 2>&1 && \
	{ $(MAN_SHAPE) "$$h.txt"; \
	  if grep -qx 'subcommand-help' "packaging/man/$$page.h2m"; then echo; echo "Options:"; \
	    $(MAN_COMMANDS) "$$h.txt" | while read -r c; do \
	      COLUMNS=80 bench/clockbench $$verb "$$c" --help 2>&1 | $(MAN_SUBOPTS); echo; done; \
	  fi; } >"$$h.man" && \
	printf '\#!/bin/sh\nexec cat "%s"\n' "$(CURDIR)/$$h.man" >"$$h" && chmod +x "$$h" && \
	help2man --no-info --section=1 --name="$$what" \
		--version-string="$(CB_VERSION)" --source="clockbench $(CB_VERSION)" --manual=clockbench \
		--include="packaging/man/$$page.h2m" $$more --include=packaging/man.h2m \
		--output="$(MAN_BUILD)/$$page.1" "$$h"
$(MAN_BUILD)/.stamp: $(COMMANDS) packaging/man.h2m $(wildcard packaging/man/*.h2m) \
		$(filter-out $(BUILD)/%,$(LIB_PROGRAMS)) $(filter %.py,$(LIB_DATA))
	$(Q)command -v help2man >/dev/null || { echo "clockbench: help2man not found: run 'make deps-dev' (Debian: apt-get install help2man)" >&2; exit 1; }
	$(Q)rm -rf $(MAN_BUILD) && mkdir -p $(MAN_BUILD)/help
	$(Q){ echo "[VERBS]"; sed '/^#/d' $(COMMANDS) | while read -r verb src what; do \
		case $$src in */*) page=$$verb ;; *) page=$$src ;; esac; \
		printf '.TP\n.B clockbench %s\n%s (\\fBclockbench\\-%s\\fR(1)).\n' "$$verb" "$$what" "$$page"; done; \
		printf '.TP\n.B clockbench help \\fR[\\fIVERB\\fR]\nthe verbs, each in one line; with VERB, its \\-\\-help.\n'; \
	} >$(MAN_BUILD)/verbs.h2m
	$(Q)page=clockbench verb= what="$(ENGINE_WHAT)" more="--include=$(MAN_BUILD)/verbs.h2m" && $(MAN_PAGE)
	$(Q)sed '/^#/d' $(COMMANDS) | awk '$$2 ~ /\//' | while read -r verb src what; do \
		page=clockbench-$$verb more= && $(MAN_PAGE) || exit 1; \
	done
	$(Q)rm -rf $(MAN_BUILD)/help $(MAN_BUILD)/verbs.h2m
	@touch $@

man: $(MAN_BUILD)/.stamp

install: all guest-initramfs man
	$(Q)install -d $(call quote,$(DESTDIR)$(BINDIR)) $(call quote,$(DESTDIR)$(MANDIR)/man1) \
		$(call quote,$(DESTDIR)$(DOCDIR)/docs) $(call quote,$(DESTDIR)$(EXAMPLEDIR)/fleet) $(call quote,$(DESTDIR)$(EXAMPLEDIR)/grafana)
	$(Q)$(call lib_install,$(LIB_PROGRAMS),0755)
	$(Q)$(call lib_install,$(LIB_DATA),0644)
	$(Q)ln -sfr $(call quote,$(DESTDIR)$(LIBDIR)/bench/clockbench) $(call quote,$(DESTDIR)$(BINDIR)/clockbench)
	$(Q)install -m 0644 $(MAN_BUILD)/*.1 $(call quote,$(DESTDIR)$(MANDIR)/man1/)
	$(Q)install -m 0644 README.md $(call quote,$(DESTDIR)$(DOCDIR)/)
	$(Q)install -m 0644 $(filter docs/%,$(DOCS)) $(call quote,$(DESTDIR)$(DOCDIR)/docs/)
	$(Q)install -m 0644 $(EXAMPLES) $(call quote,$(DESTDIR)$(EXAMPLEDIR)/fleet/)
	$(Q)install -d $(call quote,$(DESTDIR)$(EXAMPLEDIR)/fleet/filter_plugins)
	$(Q)install -m 0644 $(FLEET_PLUGINS) $(call quote,$(DESTDIR)$(EXAMPLEDIR)/fleet/filter_plugins/)
	$(Q)install -m 0644 $(DASHBOARDS) $(call quote,$(DESTDIR)$(EXAMPLEDIR)/grafana/)
	$(Q)install -d $(call quote,$(DESTDIR)$(SYSTEMDUNITDIR))
	$(Q)bindir=$$(printf '%s\n' $(call quote,$(BINDIR)) | sed 's/[|&\\]/\\&/g') && for u in $(UNITS); do \
		sed -e "s|@BINDIR@|$$bindir|g" -e 's|@WATCH_RUN_NAME@|$(CB_WATCH_RUN_NAME)|g' "$$u" >$(call quote,$(DESTDIR)$(SYSTEMDUNITDIR))/"$${u##*/}" && \
		chmod 0644 $(call quote,$(DESTDIR)$(SYSTEMDUNITDIR))/"$${u##*/}" || exit 1; \
	done
	@echo "installed under "$(call quote,$(DESTDIR)$(PREFIX))"; run folders go to /var/lib/clockbench/results as root, else ./results"

# Removes what install put there (the shared folders such as bin/ stay);
# never run folders.
uninstall:
	$(Q)rm -f $(call quote,$(DESTDIR)$(BINDIR)/clockbench) $(call quote,$(DESTDIR)$(MANDIR)/man1/clockbench.1)
	$(Q)sed '/^#/d' $(COMMANDS) | while read -r verb _; do rm -f $(call quote,$(DESTDIR)$(MANDIR)/man1)/"clockbench-$$verb.1"; done
	$(Q)for u in $(UNITS); do rm -f $(call quote,$(DESTDIR)$(SYSTEMDUNITDIR))/"$${u##*/}"; done
	$(Q)rm -rf $(call quote,$(DESTDIR)$(LIBDIR)) $(call quote,$(DESTDIR)$(DOCDIR)) $(call quote,$(DESTDIR)$(EXAMPLEDIR))

# The Debian package, built by dpkg-buildpackage (debian/) in a copy of the
# sources under $(DEB_BUILD)/ (dh_clean would empty this build/), which also
# receives the .deb.
deb:
	$(Q)command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || { echo "clockbench: dpkg-buildpackage or dh not found: run 'make deps-dev' (Debian: apt-get install dpkg-dev debhelper)" >&2; exit 1; }
	$(Q)rm -rf $(DEB_BUILD) && mkdir -p $(DEB_BUILD)/src
	$(Q)tar -c --exclude-vcs --exclude=./$(BUILD) --exclude=./results --exclude=./bench/clockbench \
		--exclude=__pycache__ --exclude=.hypothesis . | tar -x -C $(DEB_BUILD)/src
	$(Q)cd $(DEB_BUILD)/src && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || { tail -20 ../build.log >&2; echo "clockbench: dpkg-buildpackage failed: $(DEB_BUILD)/build.log" >&2; exit 1; }
	$(Q)rm -rf $(DEB_BUILD)/src
	$(Q)ls $(DEB_BUILD)/clockbench_*.deb

help-packaging:
	@echo "make install      clockbench, its man pages, docs and examples under \$$(DESTDIR)\$$(PREFIX) ("$(call quote,$(PREFIX))")"
	@echo "                  (the fleet playbook, the Grafana dashboard), the watch's systemd unit (not enabled)"
	@echo "make uninstall    remove it again (never run folders)"
	@echo "make man          the man pages, from the engine's and each verb's --help, into $(MAN_BUILD)/"
	@echo "make deb          the Debian package (dpkg-buildpackage) into $(DEB_BUILD)/"

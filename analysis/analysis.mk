# analysis.mk: `make report` and friends: reports, comparisons, capacity and
# Prometheus files from $(RESULTS)/.  Included by the top Makefile; reads only
# $(RESULTS)/, writes reports under $(RESULTS)/_report/ (or where told),
# never under $(BUILD)/, which make clean deletes.  docs/analysis.md.
#
#   make report [RUNS="results/<id> ..."] [RATE=2e5] [FLEET_HOSTS=100] [FLEET_VCPUS=64] [PROM=FILE]
#   make report-diff BEFORE=results/<id> AFTER=results/<id>   (report-compare: its old name)
#   make capacity [RUNS=...] [RATE=...] [NS="tsc=28 hpet=187"]
#   make prom PROM=/var/lib/prometheus/node-exporter/clockbench.prom [RUNS=results/<id>]

REPORT_TOOL := analysis/clockbench-report
# Its settings, from make's command line only: packaging/settings.
# Their defaults are the table's (empty RUNS: the newest run folder under
# $(RESULTS); empty capacity inputs: the tool's).  REPORT_OUT, an option of
# compare, is read here too.
REPORT_OUT :=
REPORT_PLAN = $(if $(FLEET_HOSTS),--hosts $(call quote,$(FLEET_HOSTS))) $(if $(FLEET_VCPUS),--vcpus $(call quote,$(FLEET_VCPUS))) \
	$(foreach r,$(RATE),--rate $(call quote,$(r))) $(foreach n,$(NS),--ns $(call quote,$(n)))

.PHONY: report report-diff report-compare capacity prom help-analysis
report:
	$(Q)$(REPORT_TOOL) report --results $(call quote,$(RESULTS)) $(REPORT_PLAN) \
		$(if $(REPORT_OUT),--out $(call quote,$(REPORT_OUT))) $(if $(PROM),--prom $(call quote,$(PROM))) $(call quotes,$(RUNS))

report-compare: report-diff  # the old name, until the next release
report-diff:
	$(Q)test -n $(call quote,$(BEFORE)) -a -n $(call quote,$(AFTER)) || { echo "clockbench: usage: make report-diff BEFORE=results/<id> AFTER=results/<id>" >&2; exit 2; }
	$(Q)mkdir -p $(call quote,$(RESULTS)/_report)
	$(Q)$(REPORT_TOOL) diff --out $(call quote,$(RESULTS)/_report/diff-$(notdir $(BEFORE:/=))-$(notdir $(AFTER:/=)).md) $(call quote,$(BEFORE)) $(call quote,$(AFTER))

capacity:
	$(Q)$(REPORT_TOOL) capacity --results $(call quote,$(RESULTS)) $(REPORT_PLAN) $(call quotes,$(RUNS))

prom:
	$(Q)test -n $(call quote,$(PROM)) || { echo "clockbench: usage: make prom PROM=FILE [RUNS=results/<id>]" >&2; exit 2; }
	$(Q)$(REPORT_TOOL) prom --results $(call quote,$(RESULTS)) --out $(call quote,$(PROM)) $(call quotes,$(RUNS))

help-analysis:
	@echo "make report       report.md + plots for RUNS (default: the newest run) in "$(call quote,$(RESULTS))"/_report/<run-id>/"
	@echo "make report-diff BEFORE=results/<id> AFTER=results/<id>   two runs: deltas with a noise band"
	@echo "make capacity     share of a vCPU and fleet cores spent (RATE=, FLEET_HOSTS=, FLEET_VCPUS=, NS=)"
	@echo "make prom PROM=FILE   node_exporter textfile for RUNS (default: the newest run)"

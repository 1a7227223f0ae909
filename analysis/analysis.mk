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
# Empty RUNS: the tool takes the newest run folder under $(RESULTS).
RUNS ?=
# Capacity inputs (empty: the tool's defaults, 100 hosts x 64 vCPUs; the
# rates 1e4, 1e5, 1e6 are always shown).  Not VCPUS: that is bench-guest's.
RATE ?=
FLEET_HOSTS ?=
FLEET_VCPUS ?=
NS ?=
PROM ?=
REPORT_OUT ?=
REPORT_PLAN = $(if $(FLEET_HOSTS),--hosts "$(FLEET_HOSTS)") $(if $(FLEET_VCPUS),--vcpus "$(FLEET_VCPUS)") \
	$(foreach r,$(RATE),--rate "$(r)") $(foreach n,$(NS),--ns "$(n)")

.PHONY: report report-diff report-compare capacity prom help-analysis
report:
	$(Q)$(REPORT_TOOL) report --results "$(RESULTS)" $(REPORT_PLAN) \
		$(if $(REPORT_OUT),--out "$(REPORT_OUT)") $(if $(PROM),--prom "$(PROM)") $(RUNS)

report-compare: report-diff  # the old name, until the next release
report-diff:
	$(Q)test -n "$(BEFORE)" -a -n "$(AFTER)" || { echo "clockbench: usage: make report-diff BEFORE=results/<id> AFTER=results/<id>" >&2; exit 2; }
	$(Q)mkdir -p "$(RESULTS)/_report"
	$(Q)$(REPORT_TOOL) diff --out "$(RESULTS)/_report/diff-$(notdir $(BEFORE:/=))-$(notdir $(AFTER:/=)).md" "$(BEFORE)" "$(AFTER)"

capacity:
	$(Q)$(REPORT_TOOL) capacity --results "$(RESULTS)" $(REPORT_PLAN) $(RUNS)

prom:
	$(Q)test -n "$(PROM)" || { echo "clockbench: usage: make prom PROM=FILE [RUNS=results/<id>]" >&2; exit 2; }
	$(Q)$(REPORT_TOOL) prom --results "$(RESULTS)" --out "$(PROM)" $(RUNS)

help-analysis:
	@echo "make report       report.md + plots for RUNS (default: the newest run) in $(RESULTS)/_report/<run-id>/"
	@echo "make report-diff BEFORE=results/<id> AFTER=results/<id>   two runs: deltas with a noise band"
	@echo "make capacity     share of a vCPU and fleet cores spent (RATE=, FLEET_HOSTS=, FLEET_VCPUS=, NS=)"
	@echo "make prom PROM=FILE   node_exporter textfile for RUNS (default: the newest run)"

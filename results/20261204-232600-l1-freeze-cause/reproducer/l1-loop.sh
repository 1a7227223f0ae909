#!/bin/bash
# reproducer inside L1: the lab's own guest step (bench-guest, traced, pinned, -S then cont) again and again
out=$2 states=$3  # $1 top, $4 boot: l1-init passes them; unused here
K=/boot/vmlinuz-$(uname -r)
modprobe kvm_amd || { echo "no kvm_amd" >>"$out"/progress; exit 1; }
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
echo "$(date -u +%s) cmdline $(cat /proc/cmdline)" >>"$out"/progress
cd /work/main || exit
n=${states%%,*}
for i in $(seq 1 "$n"); do
  up=$(cut -d' ' -f1 /proc/uptime)
  [ "$i" = 1 ] && { grep -m3 -e "mode:" -e "Clock Event Device" /proc/timer_list | tr "\n" " " >> "$out"/progress; echo >> "$out"/progress; }
  echo "$(date -u +%s) start $i up=$up" >>"$out"/progress
  mkdir -p "$TMPDIR"/run-"$i"
  timeout -k 5 150 host-scripts/bench-guest --kernel="$K" --accel=kvm --probed=lab --machine=q35 --mem=256 --timeout=120 --vcpus=1 --pin=1 --duration=0.2 --workloads=all --clocks=monotonic --methods=vdso,syscall,null --observe=1 --run-dir "$TMPDIR"/run-"$i" --clocksource tsc --trace --quiet >"$TMPDIR"/bg-"$i".log 2>&1
  rc=$?
  echo "$(date -u +%s) end $i rc=$rc $(tail -n1 "$TMPDIR"/bg-"$i".log)" >>"$out"/progress
done

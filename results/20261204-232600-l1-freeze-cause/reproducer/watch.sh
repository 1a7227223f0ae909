#!/bin/bash
# watch.sh NAME: when hb stale > 30 s, dump state (twice, 10 s apart), leave QEMU running
name=$1; d=/tmp/frz/out/$name
while pgrep -f "clockbench.boot=$name " >/dev/null; do
  if [ -f "$d"/hb ] && [ $(( $(date +%s) - $(stat -c %Y "$d"/hb) )) -gt 30 ]; then
    for k in 1 2; do
      python3 /tmp/frz/mon.py /tmp/frz/"$name".mon "info cpus" "info registers -a" "info lapic" "info pic" "x/8i \$pc" "info irq" > "$d"/dump$k.txt 2>&1
      sleep 10
    done
    echo FROZEN > "$d"/FROZEN; exit 0
  fi
  sleep 2
done
echo ENDED > "$d"/ENDED

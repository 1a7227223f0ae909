#!/bin/bash
# watch2.sh NAME: each time hb is stale > 20 s: record the LAPIC and registers, nudge with a key (an IOAPIC interrupt), count
name=$1; d=/tmp/frz/out/$name; n=0
while pgrep -f "clockbench.boot=$name " >/dev/null; do
  if [ -f "$d"/hb ] && [ $(( $(date +%s) - $(stat -c %Y "$d"/hb) )) -gt 20 ]; then
    n=$((n+1))
    { echo "=== stall $n at $(date -u +%T) hb=$(cat "$d"/hb)"; python3 /tmp/frz/mon.py /tmp/frz/"$name".mon "info registers" "info lapic" | sed 's/\x1b\[[0-9]*[A-Z]//g; s/\x1b\[K//g' | grep -E 'RIP|IRR|ISR|Timer|LVTT|PPR'; } >> "$d"/stalls.txt 2>&1
    python3 /tmp/frz/mon.py /tmp/frz/"$name".mon "sendkey shift" >/dev/null 2>&1
    sleep 15
    echo "after nudge hb=$(cat "$d"/hb) at $(date -u +%T)" >> "$d"/stalls.txt
  fi
  sleep 2
done
echo ENDED > "$d"/ENDED

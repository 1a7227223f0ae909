#!/bin/bash
# reproducer inside L1: start L2 under KVM again and again; the freeze comes as L2's QEMU starts
out=$2 states=$3  # $1 top, $4 boot: l1-init passes them; unused here
K=/boot/vmlinuz-$(uname -r)
modprobe kvm_amd || { echo "no kvm_amd" >>"$out"/progress; exit 1; }
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; for e in kvm_update_master_clock kvm_pvclock_update kvm_track_tsc kvm_write_tsc_offset; do echo 1 > /sys/kernel/tracing/events/kvm/$e/enable; done; echo "tracing $(cat /sys/kernel/tracing/tracing_on)" >>"$out"/progress
echo "$(date -u +%s) cmdline $(cat /proc/cmdline) nested=$(cat /sys/module/kvm_amd/parameters/nested)" >>"$out"/progress
n=${states%%,*}
for i in $(seq 1 "$n"); do
  up=$(cut -d' ' -f1 /proc/uptime)
  echo "$(date -u +%s) start $i up=$up" >>"$out"/progress
  cpu=(-cpu host)
  timeout -k 2 20 qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot -machine q35 -accel kvm "${cpu[@]}" \
    -smp 1 -m 256 -kernel "$K" -initrd /work/main/build/guest/initramfs.cpio -append "console=ttyS0 panic=-1 quiet" \
    -chardev file,id=s0,path="$TMPDIR"/l2-"$i".log -serial chardev:s0 >"$TMPDIR"/l2-"$i".err 2>&1
  rc=$?
  echo "$(date -u +%s) end $i rc=$rc cpu=${cpu[*]} last=$(tail -c 200 "$TMPDIR"/l2-"$i".log | tr -c '[:print:]' ' ' | tail -c 120)" >>"$out"/progress
done

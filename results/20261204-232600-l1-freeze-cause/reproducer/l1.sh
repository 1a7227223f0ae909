#!/bin/bash
# go.sh NAME ITER [extra append]
TOP=${TOP:-/tmp/frz/top}; name=$1 iter=$2 extra=$3
d=/tmp/frz/out/$name; mkdir -p "$d"; rm -f "$d"/*
exec qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot -machine pc -accel tcg,thread=multi -cpu max -smp 1 -m 3072 \
 -kernel /boot/vmlinuz-6.1.0-57-amd64 -initrd /work/main/build/lab/l1-6.1.0-57-amd64.cpio \
 -append "console=ttyS0 panic=-1 $extra clockbench.top=$TOP clockbench.out=$d clockbench.states=$iter clockbench.boot=$name clockbench.heartbeat=hb" \
 -chardev file,id=serial0,path="$d"/console.log -serial chardev:serial0 \
 -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
 -virtfs local,path="$d",mount_tag=labout,security_model=none,multidevs=remap \
 -monitor unix:/tmp/frz/"$name".mon,server=on,wait=off -gdb unix:/tmp/frz/"$name".gdb,server=on,wait=off

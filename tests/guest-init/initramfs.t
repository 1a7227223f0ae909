#!/usr/bin/env bash
# tier: fast
# initramfs.t: the guest initramfs is a reproducible newc cpio built without
# root, holding a static /init, the mount points and /dev/console, under 1 MiB.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/guest-init/guest-lib.sh
tap_tmp

img=$(guest_initramfs)
if [ -z "$img" ]; then
	ok 1 "make guest-initramfs builds the image"
	done_testing
	exit
fi
ok 0 "make guest-initramfs builds $img"
size=$(stat -c %s "$img")
ok "$([ "$size" -lt 1048576 ]; echo $?)" "image is under 1 MiB ($size bytes)"

list=$(cpio -it --quiet <"$img" | tr '\n' ' ')
ok "$([ "$list" = "dev dev/console init proc sys tmp " ]; echo $?)" "holds /init, the mount points and /dev/console only ($list)"
cpio -itv --quiet <"$img" >"$tmp/long" 2>/dev/null
ok "$(grep -qE '^crw------- +1 root +root +5, +1 .* dev/console$' "$tmp/long"; echo $?)" "dev/console is char 5,1, root-owned, with no mknod at build time"
ok "$(grep -qE '^-rwxr-xr-x +1 root +root .* init$' "$tmp/long"; echo $?)" "/init is 0755, root-owned"
ok "$(awk '{print $6, $7, $8}' "$tmp/long" | sort -u | grep -qxE 'Jan +1 +1970'; echo $?)" "every mtime is the epoch (SOURCE_DATE_EPOCH unset)"
diag_lines <"$tmp/long"

if command -v readelf >/dev/null; then
	ok "$(! readelf -l build/guest/init | grep -q INTERP; echo $?)" "/init is static (no program interpreter)"
else
	skip "static /init: readelf not installed"
fi

cp build/guest/init "$tmp/init"
python3 guest-init/mkinitramfs.py -o "$tmp/a.cpio" --init "$tmp/init" &&
	touch -d '2001-02-03 04:05' "$tmp/init" &&
	python3 guest-init/mkinitramfs.py -o "$tmp/b.cpio" --init "$tmp/init"
ok "$(cmp -s "$tmp/a.cpio" "$tmp/b.cpio" && cmp -s "$tmp/a.cpio" "$img"; echo $?)" "two builds (source mtime changed between) are byte-identical, and equal make's"
SOURCE_DATE_EPOCH=1700000000 python3 guest-init/mkinitramfs.py -o "$tmp/c.cpio" --init build/guest/init
ok "$(! cmp -s "$tmp/a.cpio" "$tmp/c.cpio" && cpio -itv --quiet <"$tmp/c.cpio" 2>/dev/null | grep -q 'Nov 14  2023 init'; echo $?)" "SOURCE_DATE_EPOCH sets every mtime"
SOURCE_DATE_EPOCH=soon python3 guest-init/mkinitramfs.py -o "$tmp/d.cpio" --init build/guest/init 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ ! -e "$tmp/d.cpio" ] && grep -q 'SOURCE_DATE_EPOCH: not an integer' "$tmp/err"; echo $?)" "bad SOURCE_DATE_EPOCH: exit 2 ($rc), no file"
python3 guest-init/mkinitramfs.py -o "$tmp/e.cpio" --init "$tmp/none" 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && [ -z "$(find "$tmp" -name '.initramfs.*')" ] && grep -q "mkinitramfs: $tmp/none: No such file" "$tmp/err"; echo $?)" "missing /init: exit 1 ($rc) naming it, no temp file left"

busybox=$(command -v busybox || true)
if [ -n "$busybox" ]; then
	python3 guest-init/mkinitramfs.py -o "$tmp/dbg.cpio" --init build/guest/init --busybox "$busybox"
	ok "$(cpio -it --quiet <"$tmp/dbg.cpio" | grep -qx 'bin/sh' && cpio -itv --quiet <"$tmp/dbg.cpio" 2>/dev/null | grep -q 'bin/sh -> busybox'; echo $?)" "DEBUG image adds busybox and a /bin/sh link"
else
	skip "DEBUG image: no busybox (apt-get install busybox-static)"
fi
done_testing

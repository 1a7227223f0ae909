# lib/clocksource.sh: the one place the host clocksource is changed and put back.
# Sourced by host-scripts/clocksource and host-scripts/bench.
# shellcheck shell=bash
#
# The bracket (the end of this file): cs_enter NAME FORCE switches, under
# the lock, after recovering and guarding; cs_child CMD... runs each command
# of the step in a session of its own; cs_leave stops what still runs and
# puts back what was found.  `clocksource set NAME -- CMD` is one cs_child;
# compare is cs_serve: its sweep (host-scripts/cbhost/sweep.py, one Python
# process) decides every step, and this process runs each step's commands
# as its requests say, several cs_child in one bracket, re-executing
# nothing.
#
# State: before the first change, $CB_STATE_DIR/clocksource.state records
# the original clocksource and the process that owns the change (pid and
# start time).  Owner "manual" is a change the operator kept (clocksource set
# NAME --keep); a run that starts over it records itself as owner, keeps the
# original, and notes the kept one ("kept="), which it puts back when it ends.
# Every harness command calls cs_recover first: a state file whose owner is
# gone (SIGKILL, a power cut of the shell...) is restored then, and said so.
# Recover, check, save and switch happen under $CB_STATE_DIR/lock, and so
# does the restore command.
#
# CB_CS_NOTES=0: the routine switch and restore lines are not said (compare
# says the run's once); failures always are.
# Test hooks: CB_CS_DIR (a fake clocksource0 folder), CB_STATE_DIR,
# CB_KVM_DEV (the device whose users count as VMs).

# shellcheck source=host-scripts/lib/version.sh
. "${BASH_SOURCE[0]%/*}/version.sh" # cb_fact: bench/names.h's paths
cb_fact -v cs_sysfs CS_SYSFS || cs_sysfs= # the kernel's own folder
CB_CS_DIR=${CB_CS_DIR:-$cs_sysfs}
[ -n "${CB_STATE_DIR:-}" ] || cb_fact -v CB_STATE_DIR STATE_DIR || CB_STATE_DIR=
[ -n "${CB_KVM_DEV:-}" ] || cb_fact -v CB_KVM_DEV KVM_DEV || CB_KVM_DEV=
# Without them the bracket would not know what it switches or where it
# keeps the original: it refuses to act (names.h missing or damaged).
if [ -z "${cs_sysfs:-}" ] || [ -z "$CB_STATE_DIR" ] || [ -z "$CB_KVM_DEV" ]; then
	echo "clockbench: ${BASH_SOURCE[0]%/*}/../../bench/names.h lacks the clocksource folder, the state folder or the KVM device: nothing switched" >&2
	exit 1
fi
cs_state=$CB_STATE_DIR/clocksource.state
# How a user runs restore: from a checkout (its top holds the Makefile, the
# rule of runfolder.default_dirs) or as the installed command.
if [ -f "${BASH_SOURCE[0]%/*}/../../Makefile" ]; then
	CS_RESTORE="host-scripts/clocksource restore"
else
	CS_RESTORE="clockbench clocksource restore"
fi

# cs_say MSG: one line on stderr.  On a terminal it first clears the line
# the cursor is on: what a stopped engine left drawn in place, or a ^C.
cs_say() {
	if [ -t 2 ]; then
		printf '\r\033[Kclockbench: %s\n' "$*" >&2
	else
		printf 'clockbench: %s\n' "$*" >&2
	fi
}
# cs_note MSG: a routine switch or restore, said unless CB_CS_NOTES=0.
cs_note() { [ "${CB_CS_NOTES:-1}" = 0 ] || cs_say "$@"; }

# The bracket's readers are bash alone, no process: a fork costs a
# millisecond or more on a busy host, and a step asks them a dozen times.
# cs_current [-v VAR]: the current clocksource, printed or put in VAR;
# status 1 when it cannot be read (said on stderr).
cs_current() {
	local cs_c=
	[ "${1:-}" != -v ] || { cs_current_into "$2"; return; }
	cs_current_into cs_c && printf '%s\n' "$cs_c"
}
cs_current_into() {
	printf -v "$1" '%s' ''
	{ read -r "$1" || :; } <"$CB_CS_DIR/current_clocksource"
}
# cs_offered: the clocksources the kernel offers, into the array
# cs_offered_list; status 1 when they cannot be read (said on stderr).
cs_offered_list=()
cs_offered() {
	cs_offered_list=()
	{ read -r -a cs_offered_list || :; } <"$CB_CS_DIR/available_clocksource"
}
cs_is_available() {
	local n
	cs_offered 2>/dev/null || return 1
	for n in "${cs_offered_list[@]}"; do
		[ "$n" = "$1" ] && return 0
	done
	return 1
}

# cs_need_write: fails with a clear line unless the clocksource can be set.
cs_need_write() {
	if [ ! -w "$CB_CS_DIR/current_clocksource" ]; then
		if [ "$(id -u)" -ne 0 ]; then
			cs_say "changing the clocksource needs root: run this with sudo"
		else
			cs_say "cannot write $CB_CS_DIR/current_clocksource"
		fi
		return 1
	fi
}

# cs_lock / cs_unlock: the state lock on fd 9 (waits up to 30 s).  The
# caller closes it before starting anything long-lived.
cs_lock() {
	[ -d "$CB_STATE_DIR" ] || mkdir -p "$CB_STATE_DIR" || return 1
	exec 9>"$CB_STATE_DIR/lock"
	flock -w 30 9 || { cs_say "flock $CB_STATE_DIR/lock: still held after 30 s by another clockbench command"; return 1; }
	cs_drop_stale_tmp
}
cs_unlock() { exec 9>&-; }

# cs_proc_start [-v VAR] PID: the start time of a process (field 22 of
# /proc/PID/stat), printed or put in VAR: a pid alone can be reused, pid
# plus start time cannot.  Status 1 when PID is gone.
cs_proc_start() {
	local cs_to='' cs_stat=''
	if [ "$1" = -v ]; then
		cs_to=$2
		shift 2
	fi
	{ read -r -d '' cs_stat || [ -n "$cs_stat" ]; } 2>/dev/null <"/proc/$1/stat" || return 1
	cs_stat=${cs_stat##*) }
	# shellcheck disable=SC2086 # split the fields on purpose
	set -- $cs_stat
	[ -n "${20:-}" ] || return 1
	if [ -n "$cs_to" ]; then printf -v "$cs_to" '%s' "${20}"; else printf '%s\n' "${20}"; fi
}

# cs_state_get [-v VAR] KEY: the state file's first KEY=VALUE line's
# VALUE, printed or put in VAR (empty without one, or without the file).
cs_state_get() {
	local cs_to='' cs_l cs_v=''
	if [ "$1" = -v ]; then
		cs_to=$2
		shift 2
	fi
	if [ -r "$cs_state" ]; then
		while IFS= read -r cs_l || [ -n "$cs_l" ]; do
			if [[ $cs_l == "$1="* ]]; then
				cs_v=${cs_l#"$1="}
				break
			fi
		done <"$cs_state"
	fi
	if [ -n "$cs_to" ]; then printf -v "$cs_to" '%s' "$cs_v"; elif [ -n "$cs_v" ]; then printf '%s\n' "$cs_v"; fi
	return 0
}

# cs_proc_dying PID: true if PID is gone, a zombie, or has a SIGKILL
# pending (it will never run again): a SIGKILLed run lingers so a moment.
cs_proc_dying() {
	local key val state='' pend=()
	while read -r key val; do
		case "$key" in
		State:) state=${val:0:1} ;;
		ShdPnd: | SigPnd:) pend+=("$val") ;;
		esac
	done 2>/dev/null <"/proc/$1/status"
	case "$state" in Z | X) return 0 ;; [A-Z]) ;; *) return 0 ;; esac # gone: no state read
	for val in "${pend[@]+"${pend[@]}"}"; do
		[[ $val =~ ^[0-9a-fA-F]+$ ]] && (((16#$val >> 8) & 1)) && return 0 # bit 8: SIGKILL
	done
	return 1
}

# cs_owner_live: true while the state's owner is a live run (not manual).
cs_owner_live() {
	local owner start='' want
	cs_state_get -v owner owner
	cs_state_get -v want owner_start
	[ -n "$owner" ] && [ "$owner" != manual ] && [[ $owner =~ ^[0-9]+$ ]] &&
		cs_proc_start -v start "$owner" && [ "$start" = "$want" ] &&
		! cs_proc_dying "$owner"
}

# cs_write NAME: writes NAME and checks the kernel took it (a write of a name
# it does not know is silently ignored by the kernel).
cs_write() {
	local now
	printf '%s\n' "$1" >"$CB_CS_DIR/current_clocksource" 2>/dev/null || {
		cs_say "write '$1' to $CB_CS_DIR/current_clocksource failed"
		return 1
	}
	cs_current -v now
	if [ "$now" != "$1" ]; then
		cs_say "wrote '$1' to current_clocksource but the kernel reports '$now'"
		return 1
	fi
}

# cs_write_state ORIGINAL OWNER [KEPT]: replaces the state file atomically,
# through .state.<pid>.XXXXXX, named in cs_state_tmp until the rename: a
# write cut short by a signal is removed by cs_restore, one whose writer
# was SIGKILLed by the next cs_lock (found by make torture).
cs_state_tmp=
cs_write_state() {
	local start='' since
	[ -d "$CB_STATE_DIR" ] || mkdir -p "$CB_STATE_DIR"
	cs_state_tmp=$(mktemp "$CB_STATE_DIR/.state.$$.XXXXXX")
	[ "$2" = manual ] || cs_proc_start -v start "$2"
	TZ=UTC printf -v since '%(%Y-%m-%dT%H:%M:%SZ)T' -1
	{
		echo "original=$1"
		echo "owner=$2"
		[ "$2" = manual ] || echo "owner_start=$start"
		[ -z "${3:-}" ] || echo "kept=$3"
		echo "since=$since"
	} >"$cs_state_tmp"
	mv -f "$cs_state_tmp" "$cs_state"
	cs_state_tmp=
}

# cs_drop_stale_tmp: removes the temporary state files of writers that are
# gone (called under the lock).
cs_drop_stale_tmp() {
	local f pid
	for f in "$CB_STATE_DIR"/.state.*.??????; do
		[ -e "$f" ] || continue
		pid=${f#"$CB_STATE_DIR/.state."}
		pid=${pid%.*}
		[[ $pid =~ ^[0-9]+$ ]] && ! kill -0 "$pid" 2>/dev/null && rm -f -- "$f"
	done
	return 0
}

# cs_restore found|original: puts back what the owner found (the kept
# clocksource, the state then owned by "manual" again; else the original,
# and the state removed), or the original whatever was kept.  Safe to call
# twice, and when nothing was changed.
cs_restore() {
	local orig kept back now
	[ -z "$cs_state_tmp" ] || rm -f -- "$cs_state_tmp"
	cs_state_tmp=
	[ -f "$cs_state" ] || return 0
	cs_state_get -v orig original
	cs_state_get -v kept kept
	if [ -z "$orig" ]; then
		cs_say "state file $cs_state has no original clocksource: not touching anything; inspect and remove it"
		return 1
	fi
	[ "$1" = found ] || kept=
	back=${kept:-$orig}
	cs_current -v now
	if [ "$now" != "$back" ]; then
		cs_write "$back" || {
			cs_say "RESTORE FAILED: the clocksource is '$(cs_current)', it was '$back'; $cs_state kept"
			return 1
		}
		cs_note "clocksource restored to '$back'"
	fi
	if [ -n "$kept" ]; then
		cs_write_state "$orig" manual
	else
		rm -f "$cs_state"
	fi
}

# cs_recover: restores what a dead owner left behind, and says so.  Returns
# 1 while another live run holds the clocksource.
cs_recover() {
	local owner since orig back start
	[ -f "$cs_state" ] || return 0
	if [ ! -r "$cs_state" ]; then # 0600, root's: a user cannot tell a live run from a dead one
		cs_say "cannot tell whether a run holds the clocksource: $cs_state is not readable by this user ('sudo ${CS_RESTORE% restore} status' can)"
		return 1
	fi
	cs_state_get -v owner owner
	cs_state_get -v since since
	cs_state_get -v orig original
	if [ "$owner" = manual ]; then
		cs_say "note: the clocksource was set by hand to '$(cs_current)' at $since (original '$orig'); '$CS_RESTORE' puts it back"
		return 0
	fi
	[ "$owner" = "$$" ] && return 0
	if cs_owner_live; then
		cs_say "another clockbench run (pid $owner, since $since) holds the clocksource; wait for it"
		return 1
	fi
	cs_state_get -v back kept
	back=${back:-$orig}
	cs_state_get -v start owner_start
	cs_stop_left "$owner" "$start" || return 1
	if ! cs_need_write; then
		cs_say "an interrupted run (pid $owner, since $since) left the clocksource at '$(cs_current)' (it was '$back'): run 'sudo $CS_RESTORE'"
		return 1
	fi
	cs_say "an interrupted run (pid $owner, since $since) left the clocksource at '$(cs_current)': restoring '$back'"
	cs_restore found
}

# cs_left OWNER START: the pids of live processes a run's command started,
# in any session: those with its mark CB_RUN=OWNER:START in their
# environment (set by `clocksource set` for its command), run by the user
# who wrote the state file (real uid).  Anyone can copy the mark (the
# owner's pid and start time are public), so another user's process that
# carries it is not the run's: it is neither stopped nor waited for (it
# could otherwise hold off recovery).  Why not check that it descends from
# the owner instead: this is asked only once the owner is dead, and then its
# command's processes have been reparented to init or a subreaper, so a
# walk up /proc/PID/stat's ppid never reaches it.  A command's process
# that changes its user is therefore not stopped.
cs_left() {
	local uid pid
	uid=$(stat -c %u "$cs_state" 2>/dev/null) || return 0
	{ grep -lzx "CB_RUN=$1:$2" /proc/[0-9]*/environ 2>/dev/null || true; } |
		sed -n 's,^/proc/\([0-9]*\)/environ$,\1,p' | { grep -vx -e "$$" -e "$BASHPID" || true; } |
		while read -r pid; do
			[ "$(sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null)" = "$uid" ] && echo "$pid"
		done
	return 0
}

# cs_stop_left OWNER START: a killed run's command may still be measuring
# (it runs in a session of its own): it is stopped (TERM, KILL after 5 s)
# before the clocksource is put back under it, which would leave a result
# named after a clocksource it did not measure on.  Fails if it cannot.
cs_stop_left() {
	local sig tenths pids _
	for sig in TERM:50 KILL:20; do
		tenths=${sig#*:} sig=${sig%:*}
		pids=$(cs_left "$1" "$2" | paste -sd' ' -)
		[ -n "$pids" ] || return 0
		if [ "$sig" = TERM ]; then
			cs_say "the interrupted run (pid $1) left its command running (pid $pids): stopping it"
		else
			cs_say "still running after 5 s: killing pid $pids"
		fi
		# shellcheck disable=SC2086 # one word per pid
		kill -"$sig" $pids 2>/dev/null
		for _ in $(seq "$tenths"); do
			[ -n "$(cs_left "$1" "$2")" ] || return 0
			sleep 0.1
		done
	done
	cs_say "the interrupted run's command (pid $(cs_left "$1" "$2" | paste -sd' ' -)) does not stop: not restoring under it"
	return 1
}

# cs_foreign_vms: prints "pid N (comm)" for each process holding the KVM
# device, except those listed in CB_OWN_PIDS.
cs_foreign_vms() {
	cs_find_vms
	[ "${#cs_vms[@]}" = 0 ] || printf '%s\n' "${cs_vms[@]}"
}
# cs_find_vms: the same list into the array cs_vms.  The device's real name
# is resolved once a process (it is a fixed path of ours).
cs_vms=() cs_kvm_pattern=
cs_find_vms() {
	local dir pid comm fd want got seen=()
	cs_vms=()
	if [ -z "$cs_kvm_pattern" ]; then
		dir=$(readlink -f "$CB_KVM_DEV" 2>/dev/null) || dir=$CB_KVM_DEV
		# A literal pattern for find's -lname: \ * ? [ ] escaped.
		dir=${dir//\\/\\\\} dir=${dir//\*/\\*} dir=${dir//\?/\\?}
		cs_kvm_pattern=${dir//\[/\\[} cs_kvm_pattern=${cs_kvm_pattern//\]/\\]}
	fi
	# One find over every process's descriptors (a readlink a descriptor
	# took seconds a step on a busy host, and compare asks once a round and
	# clocksource); each pid once, in order (an array indexed by pid).
	# A descriptor counts by the file it is, not by its name: a file
	# bind-mounted over the device in another mount namespace reads as its
	# path, and is not it (a character device's numbers, or for a test's
	# stand-in that is none its device and inode).
	want=$(stat -L -c '%F %t:%T %d:%i' -- "$CB_KVM_DEV" 2>/dev/null) || want=
	[[ $want == "character special file "* ]] && want=${want% *}
	while IFS= read -r fd; do
		[[ $fd =~ ^/proc/([0-9]+)/fd/[0-9]+$ ]] || continue
		got=$(stat -L -c '%F %t:%T %d:%i' -- "$fd" 2>/dev/null) || continue
		[[ $got == "character special file "* ]] && got=${got% *}
		[ -n "$want" ] && [ "$got" = "$want" ] && seen[BASH_REMATCH[1]]=1
	done < <(find /proc/[0-9]*/fd -maxdepth 1 -lname "$cs_kvm_pattern" -printf '%p\n' 2>/dev/null || true)
	for pid in "${!seen[@]}"; do
		case " ${CB_OWN_PIDS:-} $$ " in *" $pid "*) continue ;; esac
		comm='?'
		{ IFS= read -r comm || :; } 2>/dev/null <"/proc/$pid/comm"
		cs_vms+=("pid $pid ($comm)")
	done
}

# cs_guard FORCE: refuses (returns 1) while foreign VMs run, unless FORCE=1;
# with FORCE those VMs are kept in cs_forced_vms, and cs_enter notes in
# cs_vms_off=1 that it took them off tsc (cs_left_vms names them).
# cs_left_at_end=1 (compare: once, after its screen) keeps cs_leave quiet.
cs_forced_vms=() cs_vms_off=0 cs_left_at_end=0
cs_guard() {
	local vms
	cs_find_vms
	printf -v vms '%s, ' "${cs_vms[@]+"${cs_vms[@]}"}"
	vms=${vms%, }
	[ -z "$vms" ] && return 0
	if [ "$1" = 1 ]; then
		cs_say "warning: --force: changing the clocksource under running VMs: $vms"
		cs_forced_vms+=("${cs_vms[@]}")
		return 0
	fi
	cs_say "refusing to change the clocksource: KVM guests that clockbench did not start are running ($vms); flipping it changes every guest's clock. Stop them, or force it as typed: make bench FORCE=1 (installed: --force); forcing takes each running VM off tsc and back, and each then pays a system call per clock read until paused and resumed (clockbench heal --yes)"
	return 1
}

# cs_save OWNER: records OWNER before a change, under the lock.  Over a kept
# change a run becomes the owner, keeping the original and noting what was
# kept; a kept change over a kept change keeps the first original.
cs_save() {
	local now owner orig
	cs_current -v now
	if [ ! -f "$cs_state" ]; then
		cs_write_state "$now" "$1"
		return
	fi
	cs_state_get -v owner owner
	cs_state_get -v orig original
	if [ "$owner" = manual ] && [ "$1" != manual ]; then
		cs_write_state "$orig" "$1" "$now"
	fi
}

# cs_set NAME: validates and switches; the caller has saved the state.
cs_set() {
	if ! cs_is_available "$1"; then
		cs_offered
		cs_say "unknown clocksource '$1': this kernel offers: ${cs_offered_list[*]}"
		return 2
	fi
	local now
	cs_current -v now
	[ "$now" = "$1" ] && return 0
	cs_write "$1" && cs_note "clocksource set to '$1'"
}

# ---- the bracket -------------------------------------------------------------
# Between cs_enter and cs_leave, INT, TERM and HUP are caught by cs_caught:
# the command running (cs_child) is stopped, cs_signal holds 128+N, and
# cs_child starts nothing further, returning cs_signal; the caller then
# leaves.  The EXIT trap (cs_exit) leaves on any other way out.  The traps
# only record and stop: the switch, the state file's write and the restore
# are never cut short, and a signal between two commands is not lost.
cs_signal=0 cs_child_pid='' cs_entered=0 cs_self_start='' cs_sweep_pid='' cs_sweep_rc=''

# cs_caught 128+N: the INT, TERM and HUP trap.  Under cs_serve the signal
# is passed on to the sweep, which then ends the run.
cs_caught() {
	[ "$cs_signal" != 0 ] || cs_signal=$1
	cs_stop_child
	[ -z "$cs_sweep_pid" ] || kill -"$(($1 - 128))" "$cs_sweep_pid" 2>/dev/null || true
}

# cs_catch: installs the traps (the caller may do so before cs_enter, so
# that a signal between two brackets is recorded too).
cs_catch() {
	trap 'cs_caught 130' INT
	trap 'cs_caught 143' TERM
	trap 'cs_caught 129' HUP
	trap 'cs_exit $?' EXIT
}

# cs_exit STATUS: the EXIT trap: leaves a bracket still open, runs the
# caller's cs_cleanup if it defines one, and exits with STATUS (1 when the
# restore failed).
cs_exit() {
	local rc=$1
	trap - EXIT
	cs_leave || rc=1
	! declare -F cs_cleanup >/dev/null || cs_cleanup
	exit "$rc"
}

# cs_enter NAME FORCE: recover, check, save (this process the owner) and
# switch to NAME under the lock; the traps installed.  Returns 2 for an
# unknown NAME, 1 when it may not or cannot switch (nothing changed, or
# what was changed put back), 128+N when a signal came first (nothing
# changed).
cs_enter() {
	cs_is_available "$1" || { cs_set "$1"; return 2; }
	cs_need_write || return 1
	# Recover, check, save and switch under the lock: two runs never both save.
	cs_lock || return 1
	cs_recover || { cs_unlock; return 1; }
	cs_guard "$2" || { cs_unlock; return 1; }
	cs_catch
	# A signal the caller's traps caught meanwhile (a Ctrl-C that cut the
	# guard's scan of /proc short, say) switches nothing.
	[ "$cs_signal" = 0 ] || { cs_unlock; return "$cs_signal"; }
	local from
	cs_save "$$"
	cs_current -v from
	cs_entered=1
	if ! cs_set "$1"; then
		cs_leave
		return 1
	fi
	case "$from:$1" in tsc:tsc | tsc:tsc-early | tsc-early:tsc | tsc-early:tsc-early) ;;
	tsc:* | tsc-early:*) [ "${#cs_forced_vms[@]}" = 0 ] || cs_vms_off=1 ;;
	esac
	cs_unlock
}

# cs_child CMD [ARG...]: runs CMD under the bracket and returns its status,
# or 128+N when a signal stopped it (or came before it started: then it is
# not started).  In the background, in a session of its own, so that a
# signal interrupts the wait at once (the trap then stops all of CMD, TERM
# and after 5 s KILL) and a terminal's Ctrl-C reaches the bracket, not CMD.
# CB_RUN marks all it starts: after a SIGKILL of this process the next
# command finds and stops them (cs_stop_left) before restoring.  The
# caller's redirections apply to CMD (a step's 8>&-, its stdout).  Under
# cs_serve the wait is on the sweep too: the sweep's end, a SIGKILL of it
# alone included, stops CMD at once (then the bracket ends and restores).
cs_child() {
	local rc=0 ended=
	[ "$cs_signal" = 0 ] || return "$cs_signal"
	[ -n "$cs_self_start" ] || cs_proc_start -v cs_self_start "$$"
	CB_RUN="$$:$cs_self_start" setsid "$@" <&0 &
	cs_child_pid=$!
	[ "$cs_signal" = 0 ] || cs_stop_child # came while it was being started
	if [ -n "$cs_sweep_pid" ]; then
		# (its stderr: bash's own "Killed" line for the sweep, the line below
		# says it; -p leaves ended unset when a signal interrupts the wait)
		{ wait -n -p ended "$cs_child_pid" "$cs_sweep_pid"; } 2>/dev/null || rc=$?
		if [ "${ended:-}" = "$cs_sweep_pid" ]; then
			cs_sweep_rc=$rc cs_sweep_pid=
			cs_say "the sweep ended (status $rc) while its step ran: the step stopped, the clocksource put back"
			cs_stop_child
			rc=1
		elif [ -n "${ended:-}" ]; then
			cs_child_pid=
			return "$rc"
		fi
	else
		wait "$cs_child_pid" || rc=$?
	fi
	if [ "$cs_signal" != 0 ]; then
		wait "$cs_child_pid" 2>/dev/null || true
		rc=$cs_signal
	fi
	cs_child_pid=
	return "$rc"
}

# cs_stop_child: stops the command running, if one is (TERM to its process
# group, KILL after 5 s), and reaps it.
cs_stop_child() {
	local c=$cs_child_pid i
	[ -n "$c" ] && kill -0 "$c" 2>/dev/null || return 0
	kill -TERM -- "-$c" 2>/dev/null || kill -TERM "$c" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		kill -0 "$c" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$c" 2>/dev/null; then
		cs_say "command did not stop in 5 s: killing it"
		kill -KILL -- "-$c" 2>/dev/null || kill -KILL "$c" 2>/dev/null || true
	fi
	wait "$c" 2>/dev/null || true
}

# cs_leave: ends the bracket: stops a command still running and puts back
# what cs_enter found.  Safe to call twice, and outside a bracket (then it
# does nothing: a state file it did not save is never touched).  Returns 1
# when the restore failed.  The traps stay, recording a later signal.
cs_leave() {
	[ "$cs_entered" = 1 ] || return 0
	cs_unlock
	cs_stop_child
	cs_entered=0
	cs_restore found || return 1
	[ "$cs_left_at_end" = 1 ] || cs_left_vms
}

# cs_left_vms: after a forced bracket that took the host off tsc and back,
# names the VMs that ran across it and are still running: KVM turns a VM's
# master clock back on only when its clock is set again (docs/health.md),
# so each keeps reading its clock by syscall until paused and resumed.
cs_left_vms() {
	local v now left='' seen=()
	[ "$cs_vms_off" = 1 ] || return 0
	cs_current -v now
	case "$now" in tsc | tsc-early) ;; *) return 0 ;; esac
	for v in "${cs_forced_vms[@]}"; do
		if [[ $v =~ ^pid\ ([0-9]+) ]] && [ -z "${seen[BASH_REMATCH[1]]:-}" ] && [ -d "/proc/${BASH_REMATCH[1]}" ]; then
			seen[BASH_REMATCH[1]]=1
			left+="$v, "
		fi
	done
	cs_forced_vms=() cs_vms_off=0
	[ -n "$left" ] || return 0
	cs_say "the VMs that ran across the switch keep their master clock off, and read the clock by syscall, until each is paused and resumed (KVM does not turn it back on when the host returns to tsc): ${left%, }; 'clockbench heal' says which of them a pause and resume helps, and with --yes heals those"
}

# ---- the sweep's bracket -----------------------------------------------------
# cs_serve CMD [ARG...]: compare.  Runs CMD (the sweep: the plan, the
# rounds, every decision) and serves its requests until it ends, then
# exits with its status.  This process is the bracket: the only one that
# switches, the owner of the state file, the parent of every step's
# command; the traps are set before CMD starts, and a signal is passed on
# to it (cs_caught).  A request is written to CMD's fd 3 as NUL-terminated
# words: the verb, the number N of arguments, then N arguments; each gets
# one line on CMD's fd 4: "STATUS SIGNAL VALUE" (SIGNAL: cs_signal, 0 or
# 128+N).  The verbs:
#   offered           VALUE: the clocksources the kernel offers
#   begin FORCE       one sweep at a time (the lock on $CB_STATE_DIR, held
#                     until this process ends), recover, guard; VALUE: the
#                     clocksource the run began on
#   enter CS FORCE    cs_enter
#   run OUT ERR CMD.. cs_child CMD, its stdout to the file OUT and stderr to
#                     ERR ('-': this process's own)
#   leave             cs_leave
#   end ORIGINAL      STATUS 0 when the clocksource is ORIGINAL; VALUE: the
#                     line that says so, or what it is instead
#   left-vms          cs_left_vms
# When CMD ends (or is killed) its requests end: an open bracket is left
# (cs_exit), as after any other way out.
cs_rq='' cs_rp=''
cs_serve() {
	local dir rc val
	dir=$(mktemp -d "${TMPDIR:-/tmp}/clockbench-sweep.XXXXXX") || exit 1
	mkfifo -m 0600 "$dir/rq" "$dir/rp" || { rm -rf -- "$dir"; exit 1; }
	cs_catch
	"$@" <&0 3>"$dir/rq" 4<"$dir/rp" &
	cs_sweep_pid=$!
	exec {cs_rq}<"$dir/rq" {cs_rp}>"$dir/rp"
	rm -rf -- "$dir"
	while cs_request; do
		rc=0 val=
		case "${cs_req[0]}:${#cs_req[@]}" in
		offered:1) cs_offered && val=${cs_offered_list[*]} || rc=1 ;;
		begin:2) cs_begin "${cs_req[1]}" || rc=$? ;;
		enter:3) cs_enter "${cs_req[1]}" "${cs_req[2]}" || rc=$? ;;
		run:[4-9] | run:[1-9][0-9]*) cs_run "${cs_req[@]:1}" || rc=$? ;;
		leave:1) cs_leave || rc=$? ;;
		end:2) cs_end "${cs_req[1]}" || rc=$? ;;
		left-vms:1) cs_left_vms ;;
		*) cs_say "the sweep asked '${cs_req[0]:0:40}': not a request of the bracket"; rc=2 ;;
		esac
		# In a subshell: a sweep gone is a failed write here, not a SIGPIPE.
		(printf '%s %s %s\n' "$rc" "$cs_signal" "$val" >&"$cs_rp") 2>/dev/null || break
	done
	exec {cs_rq}<&- {cs_rp}>&-
	# The sweep's status (a signal that interrupted the wait is recorded;
	# cs_child keeps it where the sweep ended during a step).
	while [ -n "$cs_sweep_pid" ]; do
		rc=0
		wait "$cs_sweep_pid" || rc=$?
		kill -0 "$cs_sweep_pid" 2>/dev/null || break
	done
	[ -n "$cs_sweep_pid" ] || [ -z "$cs_sweep_rc" ] || rc=$cs_sweep_rc
	cs_sweep_pid=
	[ "$rc" -lt 128 ] || [ "$cs_signal" = 0 ] || rc=$cs_signal
	exit "$rc"
}

# cs_request: the sweep's next request into the array cs_req; status 1 at
# its end (or a request that is not one).
cs_req=()
cs_request() {
	local n i w
	cs_req=()
	IFS= read -r -d '' w <&"$cs_rq" || return 1
	cs_req+=("$w")
	IFS= read -r -d '' n <&"$cs_rq" || return 1
	[[ $n =~ ^[0-9]{1,3}$ ]] || return 1
	for ((i = 0; i < n; i++)); do
		IFS= read -r -d '' w <&"$cs_rq" || return 1
		cs_req+=("$w")
	done
}

# cs_begin FORCE: the start of a sweep, into val (cs_serve's): one at a
# time for the whole run (the clocksource lock is taken per step, so two
# runs started together would take turns between steps and fail each
# other's): a lock on the state folder itself, so no file is left behind,
# held on fd 8 until this process ends (the kernel drops it after a SIGKILL
# too), closed for the steps' commands; its holder named from /proc/locks
# (its pid beside the folder's inode).  Then, under the state lock, a dead
# run's leftover put back and the VM guard; val: the clocksource the run
# began on, what every step returns to.
cs_begin() {
	local ino holder
	cs_need_write || return 1
	mkdir -p "$CB_STATE_DIR" || return 1
	exec 8<"$CB_STATE_DIR"
	if ! flock -n 8; then
		ino=$(stat -c %i "$CB_STATE_DIR")
		holder=$(awk -v ino="$ino" '$2 == "FLOCK" { n = split($6, p, ":"); if (p[n] == ino) { print $5; exit } }' /proc/locks 2>/dev/null)
		cs_say "another clockbench compare run (pid ${holder:-unknown}) is in progress; wait for it"
		return 1
	fi
	cs_lock || return 1
	cs_recover || { cs_unlock; return 1; }
	cs_guard "$1" || { cs_unlock; return 1; }
	cs_current -v val
	cs_unlock
}

# cs_run OUT ERR CMD...: cs_child CMD with its stdout and stderr as asked;
# the sweep's lock and pipes closed for it.
cs_run() {
	local o e rc=0
	if [ "$1" = - ]; then exec {o}>&1; else exec {o}>"$1" || return 1; fi
	if [ "$2" = - ]; then exec {e}>&2; else exec {e}>"$2" || { exec {o}>&-; return 1; }; fi
	shift 2
	cs_child "$@" >&"$o" 2>&"$e" {o}>&- {e}>&- 8>&- {cs_rq}<&- {cs_rp}>&- || rc=$?
	exec {o}>&- {e}>&-
	return "$rc"
}

# cs_end ORIGINAL: into val, the line that says the clocksource is back
# (the bracket, which put it back after each step, says nothing under
# CB_CS_NOTES=0), or what it is instead (status 1).
cs_end() {
	local now
	cs_current -v now
	if [ "$now" = "$1" ]; then
		val="clocksource back to '$now'"
		return 0
	fi
	val="the clocksource is '$now', not '$1' as when compare began ('$CS_RESTORE' puts back a saved one)"
	return 1
}

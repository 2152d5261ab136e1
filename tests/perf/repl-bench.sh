#!/bin/sh
# repl-bench.sh: two tandemd nodes replicating over a veth link, against
# nbdkit on the peer reached over the same link (doc/perf-repl.md). The
# nodes alice (Primary) and bob live in two network namespaces joined by a
# veth pair; fio runs in alice's namespace with the nbd engine. The same fio
# jobs as tests/perf/nbd-bench.sh run against each target in shuffled
# rounds, ratios are taken within a round, and the script prints Markdown
# tables. Not part of make check.
#
#   links     veth       the veth pair, unshaped
#             htb1g      the same veth, HTB rate 1gbit on both ends
#   targets   tandemd_C, tandemd_B, tandemd_A  connected, protocol C/B/A
#             tandemd_C_tls  connected, protocol C with net { tls yes; }
#                          (doc/wire-protocol.md §5.6): a test CA and a
#                          certificate per node from
#                          tests/integration/tls-certs.sh in the scratch
#                          directory, so each node has its own
#                          configuration file (t-alice.conf, t-bob.conf);
#                          compared with tandemd_C within a round (the
#                          cost of encryption: throughput and CPU s/GiB)
#             tandemd_sa   StandAlone (peer disconnected): the local anchor
#             nbdkit       nbdkit file plugin in bob's namespace, default
#                          cache, nbd://BOB:10809/ over the link: one
#                          synchronous network write, the floor for C
#             nbdkit_none  the same with cache=none (NONE_WORKLOADS only)
#             relay        nbdkit's nbd plugin in alice's namespace on a Unix
#                          socket, relaying to bob's nbdkit (the nbdkit
#                          target's server): the hops of a protocol C write
#                          with no local disk, the floor of one relay hop
#             quorum       qemu-storage-daemon in alice's namespace, NBD on a
#                          Unix socket, exporting a quorum node
#                          (vote-threshold 2) over a local file (d.img, beside
#                          alice's) and an NBD client of bob's nbdkit: a
#                          user-space synchronous replicator over the same
#                          hops (cache.direct=off, aio=threads: buffered like
#                          tandemd; ANCHOR_QUORUM_DIRECT, ANCHOR_QUORUM_AIO)
#                          Both come from anchors.sh and are checked before
#                          the runs: bytes written through them are read
#                          back through them and from every copy.
#   workloads seq1m_qd1 seq1m_qd8     1 MiB sequential writes, QD1 / QD8
#             rand4k_jN (N=1,2,4,8)   4 KiB random writes, N jobs (N NBD
#                                     connections), 128 MiB apart, QD1 each
#             commit4k_qd1            4 KiB random write + FLUSH, QD1, 1 GiB
#
# Per link: the TCP rate of the link (a Python socket sender in alice's
# namespace, a receiver in bob's, LINK_REPS x LINK_SECS s), one discarded
# warm-up round of WARM_WORKLOADS, ROUNDS timed rounds, then the resyncs.
# Each round starts with the hop probe (a small C ping-pong built at the
# start with cc): HOP_N round trips of a 4 KiB NBD-sized request and a
# 16-byte reply on a Unix socket in alice's namespace and over the link,
# with both ends sleeping in recv and both polling; the model column of the
# tables (doc/perf-repl.md, "The model") takes the round trip r from it
# (polling) and a thread wake-up w from perf bench sched pipe (the header).
# A round takes the targets in blocks in a shuffled order (tandemd changes
# mode once per block: the configuration is rewritten, `tandemadm adjust`
# on both nodes, then disconnect and connect both, since a connection takes
# its net options when it starts); the workloads are shuffled within a
# block. Leaving the StandAlone block resyncs what was written meanwhile
# (with the resync settings of the "dyn" resync below, then the default
# configuration again); that catch-up is timed too.
#
# Every run starts with nothing dirty and none of the backing files in the
# page cache (sync, then POSIX_FADV_DONTNEED through dd iflag=nocache).
# After a run on tandemd, the script waits until both nodes have nothing
# pending (counters ap, pe, ua: protocol A may lag) and records how long.
#
# Resync: `tandemadm invalidate r0` on bob (a full resync of the device),
# then `status --json r0` is polled every 0.2 s until both disks are
# UpToDate; the rate is the size over tandemd's own "resync done (N KiB in
# S s)" (bob's log), next to the wall time from the invalidate. Settings:
#   fixed      resync-rate RATE_<LINK>; c-plan-ahead 0; max-buffers 131072
#   fixed_mb   the same with the default max-buffers (2048: at most 1024
#              pages requested per 100 ms step of the controller)  [veth]
#   fixed_max  resync-rate 4G; c-plan-ahead 0; max-buffers 131072 (against
#              the link rate)  [veth]
#   dyn        c-plan-ahead 20; c-fill-target 64M; c-max-rate 4G;
#              max-buffers 131072 ("unlimited": against the link rate)
# plus the initial full sync after primary --force (dyn settings, veth).
# A reconnection that is not a catch-up but finds blocks out of sync is
# recorded too (prof oos-at-reconnect).
#
# A run with the defaults took 20 minutes on 2 vCPUs (2026-12-07; RESYNC=0
# saves about 2.5; tandemd_C_tls takes about 3 of them, relay and quorum
# about 5). The anchors alone, about 6 minutes (estimated):
#   TARGETS="tandemd_C relay quorum nbdkit" RESYNC=0 repl-bench.sh
# The cost of TLS alone (doc/perf-repl.md), about 8.5 minutes:
#   TARGETS="tandemd_C tandemd_C_tls nbdkit" RESYNC=0 ROUNDS=6 \
#   WORKLOADS="seq1m_qd1 seq1m_qd8 rand4k_j1 commit4k_qd1" repl-bench.sh
#
# CPU: busy jiffies of the whole machine from /proc/stat (user + nice +
# system + irq + softirq) over the fio run and over run + drain + the `sync`
# after it; utime + stime of both tandemd processes and of nbdkit from
# /proc/PID/stat over run + drain + sync; fio's own from /usr/bin/time.
# The binaries are copied from BUILD_DIR at the start (a rebuild during the
# run cannot change them).
#
# Environment (defaults in brackets):
#   BUILD_DIR    configured and built tree [/tmp/b2]
#   SCRATCH      where the three backing files go [/var/tmp]
#   PEER_SCRATCH where bob's backing file goes instead [SCRATCH]. The nodes
#                of one machine share its disk, so every FLUSH costs two
#                flushes of one device where two hosts flush two; with
#                PEER_SCRATCH=/dev/shm bob's flush is free and the run shows
#                what the protocol costs when the disks are separate (a
#                diagnostic: bob's data is then not durable)
#   LOCAL_SCRATCH where alice's backing file goes instead [SCRATCH]. With
#                LOCAL_SCRATCH=/dev/shm a FLUSH still waits for bob's flush
#                of the disk, across the link, while alice's own flush is
#                free: as on two hosts with equal disks, where the remote
#                flush, one round trip later, finishes last. The closer
#                model of two hosts of the two diagnostics (alice's data is
#                then not durable)
#   SIZE_MB      each backing file, fallocate'd [2048]
#   REGION_MB    test region [1536]
#   ROUNDS       timed rounds per link [3]   RUN_SECONDS  seconds per run [2]
#   WARM_SECONDS seconds per warm-up run [1]
#   WARM_WORKLOADS  workloads of the warm-up round [seq1m_qd8 commit4k_qd1]
#   LINKS        ["veth htb1g"]
#   TARGETS      ["tandemd_C tandemd_C_tls tandemd_B tandemd_A tandemd_sa nbdkit
#                nbdkit_none relay quorum"]
#   WORKLOADS    ["seq1m_qd1 seq1m_qd8 rand4k_j1 rand4k_j2 rand4k_j4 rand4k_j8 commit4k_qd1"]
#   NONE_WORKLOADS  workloads of nbdkit_none [commit4k_qd1]
#   RESYNC       1 = the resync measurements [1]
#   RATE_VETH, RATE_HTB1G  fixed resync-rate per link [200M, 80M]
#   LINK_SECS, LINK_REPS   TCP rate measurement [2, 3]
#   HOP_N        round trips per hop measurement [5000]
#   RAW          raw lines [tests/perf/results/repl-bench-DATE.txt]
#
#   repl-bench.sh report RAWFILE   render the tables from a raw file again
#   repl-bench.sh plot RAWFILE [PNG]  the chart of C against the anchors
#                and the model, with the goal lines [RAWFILE-anchors.png]
#
# Needs root, ip, tc (sch_htb), fio with the nbd engine, nbdkit, jq,
# fincore, python3 (with python3-libnbd for the anchors' check),
# /usr/bin/time, cc; openssl for tandemd_C_tls; qemu-storage-daemon for
# quorum; gnuplot for plot (scripts/install-deps.sh --perf).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
export LC_ALL=C
# the relay and quorum anchors (shared with the other benchmarks)
# shellcheck source=tests/perf/anchors.sh
. "$here/anchors.sh"

# ------------------------------------------------------------------ report
# Raw lines: "run set=S round=R target=T wl=W key=value..." (round 0 is the
# warm-up), "fail ...", "link ...", "resync ...", "catchup ...", "prof ..."
# and "# ..." comments.
report() {
	awk '
function kv(    i, p) {
	delete f
	for (i = 2; i <= NF; i++)
		if ((p = index($i, "=")) > 0)
			f[substr($i, 1, p - 1)] = substr($i, p + 1)
}
function stats(list,    v, n, i, j, t) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	s_n = n; s_min = v[1]; s_max = v[n]
	s_med = n == 0 ? "" : n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function add(key, val) { acc[key] = acc[key] " " val }
function med(key, fmt) { stats(acc[key]); return s_n ? sprintf(fmt, s_med) : "—" }
function medv(key) { stats(acc[key]); return s_n ? s_med : "" }
function spread(key, fmt) {
	stats(acc[key])
	return s_n ? sprintf(fmt " (" fmt "–" fmt ")", s_med, s_min, s_max) : "—"
}
function unit(w) { return w ~ /^seq/ ? "MB/s" : "IOPS" }
function metric(w) { return w ~ /^seq/ ? f["mbs"] : f["iops"] }
function tname(t) {
	return t == "nbdkit" ? "nbdkit over the link" : t == "nbdkit_none" ? "nbdkit cache=none" : \
		t == "tandemd_sa" ? "tandemd StandAlone" : t == "tandemd_C" ? "tandemd C" : \
		t == "tandemd_B" ? "tandemd B" : t == "tandemd_A" ? "tandemd A" : \
		t == "tandemd_C_tls" ? "tandemd C + TLS" : t == "relay" ? "relay (nbdkit nbd)" : \
		t == "quorum" ? "quorum (qemu)" : t
}
function intg(t,    i) { for (i = 1; i <= ntg; i++) if (tg[i] == t) return 1; return 0 }
# ratio cells: DUT / anchor within each round, median (min–max)
function ratio(s, w, a, b,    r, list) {
	list = ""
	for (r = 1; r <= 99; r++)
		if ((s, w, a, r) in val && (s, w, b, r) in val && val[s, w, b, r] > 0)
			list = list " " val[s, w, a, r] / val[s, w, b, r]
	stats(list)
	rmed = s_n ? s_med : ""
	return s_n ? sprintf("%.2f (%.2f–%.2f)", s_med, s_min, s_max) : "—"
}
function yesno(x, goal) { return x == "" ? "no data" : x + 0 >= goal ? "**met**" : "**not met**" }
function mark(x, goal) {
	return x == "" ? "no data" : x + 0 >= goal ? "✓" : \
		sprintf("%.2f", x) + 0 >= goal ? sprintf("✗ gap (%.3f)", x) : "✗ gap"
}
function fmt2(x) { return x == "" ? "—" : sprintf("%.2f", x) }
# goalrow S W: the four anchor goals of one row, within each round, medians:
# g_rel C / relay, g_quo C / quorum, g_lnk C / link (MB/s over the link
# TCP rate), g_nbk C / nbdkit, g_ceil the model ceiling of C / nbdkit,
# g_mod (C / nbdkit) / ceiling; g_lb 1 when the row is link-bound: the
# 1 MiB rows on a rate-limited link (every set but the unshaped veth), and
# any row where nbdkit over the link moves >= 0.9 of the TCP rate of the link;
# g_nf nbdkit / link, to show it; g_rn, g_qn relay / nbdkit and quorum /
# nbdkit (medians within a round). The ceiling (doc/perf-repl.md, "The model"):
# T = per-request time of nbdkit over the link (jobs / IOPS), w = a thread
# wake-up (half the round trip of perf bench sched pipe, any
# CPU), r = the polling round trip of the extra hop (unix, this round), k =
# extra round trips per I/O (1 for a write, 2 for write + FLUSH):
# ceiling = T / (T + k (2w + r)); g_ceil2 the same with the
# sleeping round trip of the probe for 2w + r (a wake-up on the same CPU,
# optimistic).
function goalrow(s, w,    r, l1, l2, l3, l4, l5, T, p, k, ce, nj, lk) {
	ratio(s, w, "tandemd_C", "relay"); g_rel = rmed; g_rel_s = ratio(s, w, "tandemd_C", "relay")
	g_quo_s = ratio(s, w, "tandemd_C", "quorum"); g_quo = rmed
	g_nbk_s = ratio(s, w, "tandemd_C", "nbdkit"); g_nbk = rmed
	lk = medv(s SUBSEP "linkmb")
	g_nf = lk > 0 && medv(s SUBSEP w SUBSEP "nbdkit" SUBSEP "mbs") != "" ? medv(s SUBSEP w SUBSEP "nbdkit" SUBSEP "mbs") / lk : ""
	g_lb = (w ~ /^seq/ && s != "veth") || (g_nf != "" && g_nf >= 0.9)
	ratio(s, w, "relay", "nbdkit"); g_rn = rmed
	ratio(s, w, "quorum", "nbdkit"); g_qn = rmed
	l1 = l2 = l3 = l4 = l5 = ""
	nj = w ~ /^rand4k_j/ ? substr(w, 9) + 0 : 1
	k = w == "commit4k_qd1" ? 2 : 1
	for (r = 1; r <= 99; r++) {
		if (lk > 0 && (s, w, "tandemd_C", r) in mbsv)
			l1 = l1 " " mbsv[s, w, "tandemd_C", r] / lk
		if ((w ~ /^rand4k_j/ || w == "commit4k_qd1") && (s, w, "tandemd_C", r) in val && \
		    (s, w, "nbdkit", r) in val && val[s, w, "nbdkit", r] > 0 && (s, r, "unix", "sleep") in hop) {
			T = nj / val[s, w, "nbdkit", r] * 1e6
			l5 = l5 " " T / (T + k * hop[s, r, "unix", "sleep"])
			p = wpipe != "" && (s, r, "unix", "spin") in hop ? 2 * wpipe + hop[s, r, "unix", "spin"] : hop[s, r, "unix", "sleep"]
			ce = T / (T + k * p)
			l2 = l2 " " ce
			l3 = l3 " " val[s, w, "tandemd_C", r] / val[s, w, "nbdkit", r] / ce
			l4 = l4 " " T
		}
	}
	stats(l1); g_lnk = s_n ? s_med : ""
	stats(l2); g_ceil = s_n ? s_med : ""
	stats(l3); g_mod = s_n ? s_med : ""
	stats(l4); g_T = s_n ? s_med : ""
	stats(l5); g_ceil2 = s_n ? s_med : ""
	g_k = k
}
/^# targets / { ntg = split(substr($0, 11), tg, " ") }
/^# workloads / { nwl = split(substr($0, 13), wls, " ") }
/^# sets / { nset = split(substr($0, 8), sets, " ") }
/^# set [a-z0-9]+: / { x = $3; sub(/:$/, "", x); sdesc[x] = substr($0, index($0, ":") + 2) }
/^run / {
	kv()
	if (f["round"] == 0)
		next
	s = f["set"]; w = f["wl"]; t = f["target"]; r = f["round"]
	v = metric(w)
	val[s, w, t, r] = v
	k = s SUBSEP w SUBSEP t SUBSEP
	add(k "m", v)
	gib = f["bytes"] / 1073741824
	stl[s] += f["steal"]; stms[s] += f["ms"] / 10
	mbsv[s, w, t, r] = f["mbs"]
	add(k "mbs", f["mbs"])
	other = (f["sys"] - f["tdarun"] - f["tdbrun"] - f["nbkrun"] - f["ancrun"]) / 100 - f["fio"]
	if (f["ms"] > 0)
		add(s SUBSEP "other", other / (f["ms"] / 1000))
	if (gib > 0) {
		add(k "sys", f["sys"] / 100 / gib)
		add(k "syssync", f["syssync"] / 100 / gib)
		add(k "tda", f["tda"] / 100 / gib)
		add(k "tdb", f["tdb"] / 100 / gib)
		add(k "nbk", f["nbk"] / 100 / gib)
		add(k "anc", f["anc"] / 100 / gib)
		add(k "fio", f["fio"] / gib)
	}
	for (x in f)
		if (x ~ /^(wp50|wp99|fp50|fp99|drain_ms)$/)
			add(k x, f[x])
	alsum[s, t, "ala"] += f["ala"]; alsum[s, t, "alb"] += f["alb"]
	alsum[s, t, "bma"] += f["bma"]; alsum[s, t, "bmb"] += f["bmb"]
	nruns[s, t]++
}
/^fail / { fails[++nfail] = $0 }
/^# thread wake-ups: perf bench sched pipe: [0-9.]+ us/ { x = $0; sub(/.*sched pipe: /, "", x); wpipe = (x + 0) / 2 }
/^hop / { kv(); if (f["round"] > 0) { hop[f["set"], f["round"], f["path"], f["mode"]] = f["p50"]
	add(f["set"] SUBSEP f["path"] SUBSEP f["mode"], f["p50"]) } }
/^link / { kv(); add(f["set"] SUBSEP "link", f["mibs"]); add(f["set"] SUBSEP "linkmb", f["mbs"])
	if (f["bytes"] > 0) add(f["set"] SUBSEP "linkcpu", f["sys"] / 100 / (f["bytes"] / 1073741824)) }
/^resync / { rs[++nrs] = $0 }
/^catchup / { cu[++ncu] = $0 }
/^prof / { prof[++nprof] = $0 }
/^# / { hdr[++nhdr] = $0 }
END {
	if (ENVIRON["REPORT_PLOT"] != "") {
		# one line per set and workload: C / relay, C / quorum (not
		# link-bound), C / link (link-bound), (C / nbdkit) / ceiling
		for (si = 1; si <= nset; si++)
			for (j = 1; j <= nwl; j++) {
				goalrow(sets[si], wls[j])
				printf "%s %s %s %s %s %s\n", sets[si], wls[j], g_rel == "" ? "-" : g_rel,
					g_quo == "" || g_lb ? "-" : g_quo, g_lnk == "" || !g_lb ? "-" : g_lnk, g_mod == "" ? "-" : g_mod
			}
		exit
	}
	print "Setup (from the raw file):"
	print ""
	for (i = 1; i <= nhdr; i++)
		print "    " substr(hdr[i], 3)
	for (i = 1; i <= nset; i++) {
		s = sets[i]
		if (stms[s] > 0)
			printf "    CPUs stolen by the hypervisor during the runs on %s: %.2f (mean)\n", s, stl[s] / stms[s]
		printf "    CPU busy outside our processes (other jobs, softirq) during the runs on %s: %s CPUs, median (min–max)\n", \
			s, spread(s SUBSEP "other", "%.2f")
	}
	for (si = 1; si <= nset; si++) {
		s = sets[si]
		print ""
		print "## Link " s ": " sdesc[s]
		print ""
		printf "TCP over the link (Python sender → receiver): %s MiB/s = %s MB/s, median (min–max); machine CPU %s s/GiB\n", \
			spread(s SUBSEP "link", "%.0f"), med(s SUBSEP "linkmb", "%.0f"), med(s SUBSEP "linkcpu", "%.2f")
		print ""
		print "### Throughput: median (min–max) over the rounds"
		print ""
		line = "| workload | unit |"; sep = "|---|---|"
		for (i = 1; i <= ntg; i++) { line = line " " tname(tg[i]) " |"; sep = sep "---|" }
		print line; print sep
		for (j = 1; j <= nwl; j++) {
			w = wls[j]
			line = "| " w " | " unit(w) " |"
			for (i = 1; i <= ntg; i++)
				line = line " " spread(s SUBSEP w SUBSEP tg[i] SUBSEP "m", "%.0f") " |"
			print line
		}
		if (intg("relay") || intg("quorum")) {
			print ""
			print "### Anchors: tandemd C against the relay, the quorum, the link and the model, ratios within a round: median (min–max)"
			print ""
			print "Goals: C ≥ 1.0 × relay on every row; C ≥ 1.5 × quorum on every row that is not link-bound; C ≥ 0.98 × the link (MB/s over the TCP rate) on link-bound rows (the 1 MiB rows on a rate-limited link, and every row where nbdkit over the link moves ≥ 0.9 of the link: nbdkit / link is shown); (C / nbdkit) ≥ 0.9 × the model ceiling for the 4 KiB rows (doc/perf-repl.md, \"The model\")."
			print ""
			print "| workload | link-bound (nbdkit / link) | **C / relay** | ≥ 1.0 | **C / quorum** | ≥ 1.5 | **C / link** | ≥ 0.98 | C / nbdkit | model ceiling | **C / ceiling** | ≥ 0.9 |"
			print "|---|---|---|---|---|---|---|---|---|---|---|---|"
			for (j = 1; j <= nwl; j++) {
				w = wls[j]
				goalrow(s, w)
				v1 = intg("relay") ? mark(g_rel, 1.0) : "—"
				v2 = !intg("quorum") ? "—" : g_lb ? "n/a" : mark(g_quo, 1.5)
				v3 = g_lb ? mark(g_lnk, 0.98) : "n/a"
				v4 = g_ceil == "" ? "n/a" : mark(g_mod, 0.9)
				printf "| %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w, g_lb ? "yes" : "no", fmt2(g_nf),
					g_rel_s, v1, g_quo_s, v2, fmt2(g_lnk), v3, g_nbk_s, fmt2(g_ceil), fmt2(g_mod), v4
				gv[s, w, 1] = v1; gv[s, w, 2] = v2; gv[s, w, 3] = v3; gv[s, w, 4] = v4
			}
			print ""
			print "### The model: one extra round trip per request (medians over the rounds, µs)"
			print ""
			print "| hop | sleeping round trip p50 (2w + r) | polling round trip p50 (r) | w = (sleeping − polling) / 2 |"
			print "|---|---|---|---|"
			for (hh = 1; hh <= 2; hh++) {
				h = hh == 1 ? "unix" : "link"
				ps = medv(s SUBSEP h SUBSEP "sleep"); pp = medv(s SUBSEP h SUBSEP "spin")
				printf "| %s | %s | %s | %s |\n", h == "unix" ? "Unix socket in the namespace of alice (the extra hop)" : "TCP over the link, alice → bob",
					spread(s SUBSEP h SUBSEP "sleep", "%.1f"), spread(s SUBSEP h SUBSEP "spin", "%.1f"),
					ps != "" && pp != "" ? sprintf("%.1f", (ps - pp) / 2) : "—"
			}
			print ""
			printf "w = %s µs per wake-up: half the round trip of perf bench sched pipe (any CPU) in the header; r = the polling round trip on the Unix socket, per round.\n\n", \
				wpipe == "" ? "(not recorded: the sleeping round trip of the probe stands for 2w + r)" : sprintf("%.1f", wpipe)
			print "| workload | T: nbdkit over the link, µs per request and connection | extra round trips k | **ceiling T / (T + k (2w + r))** | ceiling with the sleeping round trip of the probe as 2w + r | C / nbdkit | relay / nbdkit | quorum / nbdkit |"
			print "|---|---|---|---|---|---|---|---|"
			for (j = 1; j <= nwl; j++) {
				w = wls[j]
				goalrow(s, w)
				if (g_ceil == "")
					continue
				printf "| %s | %.1f | %d | **%.2f** | %s | %s | %s | %s |\n", w, g_T, g_k, g_ceil, fmt2(g_ceil2), fmt2(g_nbk), fmt2(g_rn), fmt2(g_qn)
			}
		}
		print ""
		print "### Ratios within a round: median (min–max)"
		print ""
		print "| workload | **C / nbdkit** | C / nbdkit cache=none | C / StandAlone | B / StandAlone | A / StandAlone | B / nbdkit | A / nbdkit | StandAlone / nbdkit |"
		print "|---|---|---|---|---|---|---|---|---|"
		for (j = 1; j <= nwl; j++) {
			w = wls[j]
			printf "| %s | **%s** | %s | %s | %s | %s | %s | %s | %s |\n", w,
				ratio(s, w, "tandemd_C", "nbdkit"), ratio(s, w, "tandemd_C", "nbdkit_none"),
				ratio(s, w, "tandemd_C", "tandemd_sa"), ratio(s, w, "tandemd_B", "tandemd_sa"),
				ratio(s, w, "tandemd_A", "tandemd_sa"), ratio(s, w, "tandemd_B", "nbdkit"),
				ratio(s, w, "tandemd_A", "nbdkit"), ratio(s, w, "tandemd_sa", "nbdkit")
			if (w ~ /^seq1m/) { ratio(s, w, "tandemd_C", "nbdkit"); g_seq[s, w] = rmed }
			if (w == "commit4k_qd1") {
				ratio(s, w, "tandemd_C", "nbdkit"); g_com[s] = rmed
				ratio(s, w, "tandemd_C", "nbdkit_none"); g_comn[s] = rmed
			}
		}
		if (intg("tandemd_C_tls")) {
			print ""
			print "### TLS: tandemd C + TLS against plain C, ratios within a round: median (min–max); CPU s/GiB medians, plain → TLS"
			print ""
			print "| workload | unit | C | C + TLS | **TLS / C** | TLS / nbdkit | CPU s/GiB alice | CPU s/GiB bob | CPU s/GiB machine (run) |"
			print "|---|---|---|---|---|---|---|---|---|"
			for (j = 1; j <= nwl; j++) {
				w = wls[j]
				kc = s SUBSEP w SUBSEP "tandemd_C" SUBSEP; kt = s SUBSEP w SUBSEP "tandemd_C_tls" SUBSEP
				printf "| %s | %s | %s | %s | **%s** | %s | %s → %s | %s → %s | %s → %s |\n", w, unit(w),
					med(kc "m", "%.0f"), med(kt "m", "%.0f"),
					ratio(s, w, "tandemd_C_tls", "tandemd_C"), ratio(s, w, "tandemd_C_tls", "nbdkit"),
					med(kc "tda", "%.2f"), med(kt "tda", "%.2f"), med(kc "tdb", "%.2f"), med(kt "tdb", "%.2f"),
					med(kc "sys", "%.2f"), med(kt "sys", "%.2f")
				if (w ~ /^seq1m/) { ratio(s, w, "tandemd_C_tls", "tandemd_C"); g_tls[s, w] = rmed }
			}
		}
		print ""
		print "### Commit latency (commit4k_qd1): medians over the rounds, µs"
		print ""
		print "| target | IOPS | write p50 | write p99 | flush p50 | flush p99 |"
		print "|---|---|---|---|---|---|"
		w = "commit4k_qd1"
		for (i = 1; i <= ntg; i++) {
			k = s SUBSEP w SUBSEP tg[i] SUBSEP
			if (!((k "m") in acc))
				continue
			printf "| %s | %s | %s | %s | %s | %s |\n", tname(tg[i]), spread(k "m", "%.0f"),
				med(k "wp50", "%.0f"), med(k "wp99", "%.0f"), med(k "fp50", "%.0f"), med(k "fp99", "%.0f")
		}
		print ""
		print "### Latency of the writes (clat p50 / p99, µs, medians over the rounds)"
		print ""
		line = "| workload |"; sep = "|---|"
		for (i = 1; i <= ntg; i++) { line = line " " tname(tg[i]) " |"; sep = sep "---|" }
		print line; print sep
		for (j = 1; j <= nwl; j++) {
			w = wls[j]
			line = "| " w " |"
			for (i = 1; i <= ntg; i++) {
				k = s SUBSEP w SUBSEP tg[i] SUBSEP
				line = line ((k "m") in acc ? " " med(k "wp50", "%.0f") " / " med(k "wp99", "%.0f") " |" : " — |")
			}
			print line
		}
		print ""
		print "### CPU seconds per GiB written (medians): machine during the run / machine run + drain + sync / alice (tandemd, the relay or qemu-storage-daemon) / bob (tandemd, or nbdkit) / fio"
		print ""
		line = "| workload |"; sep = "|---|"
		for (i = 1; i <= ntg; i++) { line = line " " tname(tg[i]) " |"; sep = sep "---|" }
		print line; print sep
		for (j = 1; j <= nwl; j++) {
			w = wls[j]
			line = "| " w " |"
			for (i = 1; i <= ntg; i++) {
				k = s SUBSEP w SUBSEP tg[i] SUBSEP
				if (!((k "m") in acc)) { line = line " — |"; continue }
				if (tg[i] ~ /^nbdkit/)
					line = line " " med(k "sys", "%.2f") " / " med(k "syssync", "%.2f") " / — / " \
						med(k "nbk", "%.2f") " / " med(k "fio", "%.2f") " |"
				else if (tg[i] == "relay" || tg[i] == "quorum")
					line = line " " med(k "sys", "%.2f") " / " med(k "syssync", "%.2f") " / " med(k "anc", "%.2f") \
						" / " med(k "nbk", "%.2f") " / " med(k "fio", "%.2f") " |"
				else
					line = line " " med(k "sys", "%.2f") " / " med(k "syssync", "%.2f") " / " \
						med(k "tda", "%.2f") " / " med(k "tdb", "%.2f") " / " med(k "fio", "%.2f") " |"
			}
			print line
		}
		print ""
		print "### tandemd: time to drain after a run (ms, median (min–max)); AL transactions and bitmap pages written over all timed runs"
		print ""
		# the tandemd targets of the run, in the order of the targets line
		ntd = 0
		for (i = 1; i <= ntg; i++)
			if (tg[i] ~ /^tandemd/)
				td[++ntd] = tg[i]
		line = "| workload |"; sep = "|---|"
		for (i = 1; i <= ntd; i++) { line = line " " tname(td[i]) " |"; sep = sep "---|" }
		print line; print sep
		for (j = 1; j <= nwl; j++) {
			w = wls[j]
			line = "| " w " |"
			for (i = 1; i <= ntd; i++)
				line = line " " spread(s SUBSEP w SUBSEP td[i] SUBSEP "drain_ms", "%.0f") " |"
			print line
		}
		line = "| AL transactions alice / bob |"
		for (i = 1; i <= ntd; i++) {
			t = td[i]
			line = line ((s, t) in nruns ? sprintf(" %d / %d |", alsum[s, t, "ala"], alsum[s, t, "alb"]) : " — |")
		}
		print line
		line = "| bitmap pages alice / bob |"
		for (i = 1; i <= ntd; i++) {
			t = td[i]
			line = line ((s, t) in nruns ? sprintf(" %d / %d |", alsum[s, t, "bma"], alsum[s, t, "bmb"]) : " — |")
		}
		print line
		n = 0
		for (i = 1; i <= ncu; i++) {
			$0 = cu[i]; kv()
			if (f["set"] != s)
				continue
			if (!n++) {
				print ""
				print "### Catch-up resyncs after the StandAlone block (dyn settings)"
				print ""
				print "| round | back to | KiB out of sync | tandemd s | MiB/s | wall s (connect → both UpToDate) |"
				print "|---|---|---|---|---|---|"
			}
			printf "| %s | %s | %s | %s | %s | %.1f |\n", f["round"], f["to"], f["kib"], f["td_s"],
				(f["td_s"] > 0 ? sprintf("%.0f", f["kib"] / 1024 / f["td_s"]) : "—"), f["ms"] / 1000
		}
	}
	if (nrs) {
		print ""
		print "## Resync (invalidate on bob: full resync of the device)"
		print ""
		print "| link | settings | KiB | tandemd s | **MiB/s** | wall s (invalidate → both UpToDate) | reconnect gap s | goal basis MiB/s | **achieved / basis** | CPU s/GiB machine / alice / bob |"
		print "|---|---|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= nrs; i++) {
			$0 = rs[i]; kv()
			s = f["set"]
			rate = f["td_s"] > 0 ? f["kib"] / 1024 / f["td_s"] : 0
			if (f["kind"] == "dyn") {
				stats(acc[s SUBSEP "link"]); basis = s_n ? s_med : 0; bname = "link " sprintf("%.0f", basis)
			} else {
				basis = f["cfg_mibs"]; bname = "configured " basis
			}
			gib = f["kib"] / 1048576
			ach = basis > 0 ? rate / basis : 0
			cfg = f["cfg"]; sub(/^connect-int_2;timeout_15;/, "", cfg); gsub(/_/, " ", cfg); gsub(/;/, "; ", cfg)
			if (f["name"] != "initial")
				g_rs[i] = ach
			printf "| %s | %s (%s) | %s | %s | %.0f | %.1f | %.1f | %s | %.2f | %.2f / %.2f / %.2f |\n",
				s, f["name"], cfg, f["kib"], f["td_s"], rate, f["wall_ms"] / 1000, f["gap_ms"] / 1000,
				bname, ach, (gib > 0 ? f["sys"] / 100 / gib : 0), (gib > 0 ? f["tda"] / 100 / gib : 0),
				(gib > 0 ? f["tdb"] / 100 / gib : 0)
		}
	}
	print ""
	print "## Goals"
	print ""
	print "| goal | link | measured (median ratio) | result |"
	print "|---|---|---|---|"
	for (si = 1; si <= nset; si++) {
		s = sets[si]
		for (j = 1; j <= nwl; j++) {
			w = wls[j]
			if ((s, w) in g_seq)
				printf "| 1 MiB seq (%s), C ≥ 0.95 × nbdkit over the link%s | %s | %s | %s |\n", w,
					s == "htb1g" ? "" : " (goal is for 1 Gbit/s; for information)", s,
					g_seq[s, w] == "" ? "—" : sprintf("%.3f", g_seq[s, w]), yesno(g_seq[s, w], 0.95)
		}
		for (j = 1; j <= nwl; j++) {
			w = wls[j]
			if ((s, w) in g_tls)
				printf "| 1 MiB seq (%s), C + TLS ≥ 0.95 × plain C%s | %s | %s | %s |\n", w,
					s == "htb1g" ? "" : " (goal is for 1 Gbit/s; for information)", s,
					g_tls[s, w] == "" ? "—" : sprintf("%.3f", g_tls[s, w]), yesno(g_tls[s, w], 0.95)
		}
		if (s in g_com) {
			printf "| 4 KiB write+flush QD1, C ≥ 0.80 × nbdkit over the link | %s | %s | %s |\n", s,
				g_com[s] == "" ? "—" : sprintf("%.3f", g_com[s]), yesno(g_com[s], 0.80)
			printf "| (same against nbdkit cache=none, for information) | %s | %s | %s |\n", s,
				g_comn[s] == "" ? "—" : sprintf("%.3f", g_comn[s]), yesno(g_comn[s], 0.80)
		}
	}
	for (si = 1; si <= nset; si++) {
		s = sets[si]
		for (gi = 1; gi <= 4; gi++) {
			nm = ng = 0; gaps = ""
			for (j = 1; j <= nwl; j++) {
				x = gv[s, wls[j], gi]
				if (x ~ /^✓/) nm++
				else if (x ~ /^✗/) { ng++; gaps = gaps (gaps == "" ? "" : ", ") wls[j] }
			}
			if (nm + ng == 0)
				continue
			printf "| %s | %s | %d of %d rows | %s |\n", gi == 1 ? "C ≥ 1.0 × relay, every row" : \
				gi == 2 ? "C ≥ 1.5 × quorum, rows not link-bound" : gi == 3 ? "C ≥ 0.98 × the link, link-bound rows" : \
				"C / nbdkit ≥ 0.9 × the model ceiling, 4 KiB rows", s, nm, nm + ng,
				ng ? "**not met**: " gaps : "**met**"
		}
	}
	for (i = 1; i <= nrs; i++) {
		if (!(i in g_rs))
			continue
		$0 = rs[i]; kv()
		printf "| resync %s ≥ 0.90 × %s | %s | %.3f | %s |\n", f["name"],
			f["kind"] == "dyn" ? "the link" : "the configured rate", f["set"], g_rs[i], yesno(g_rs[i], 0.90)
	}
	if (nfail) {
		print ""
		print "## Failures"
		print ""
		for (i = 1; i <= nfail; i++)
			print "    " fails[i]
	}
	if (nprof) {
		print ""
		print "## Other measurements (prof lines)"
		print ""
		for (i = 1; i <= nprof; i++)
			print "    " prof[i]
	}
}' "$1"
}

# plot RAWFILE PNG: the per-row ratios of tandemd C against the relay, the
# quorum, the link and the model ceiling, one panel each, both links side by
# side, with the goal lines (gnuplot)
plot() {
	command -v gnuplot >/dev/null 2>&1 || { echo "repl-bench: needs gnuplot (scripts/install-deps.sh --perf)" >&2; exit 1; }
	pd=$(mktemp -d)
	REPORT_PLOT=1 report "$1" >"$pd/all"
	sets=$(awk '{ print $1 }' "$pd/all" | awk '!seen[$0]++' | tr '\n' ' ')
	i=3
	for m in relay quorum link model; do
		# one file per panel: workload, then one column per set
		awk -v c="$i" -v sets="$sets" '{ v[$1, $2] = $c; if (!seen[$2]++) wl[++n] = $2 }
			END { ns = split(sets, st, " "); for (j = 1; j <= n; j++) { line = wl[j]
				for (k = 1; k <= ns; k++) line = line " " ((st[k], wl[j]) in v ? v[st[k], wl[j]] : "-"); print line } }' \
			"$pd/all" >"$pd/$m"
		i=$((i + 1))
	done
	{
		echo "set terminal pngcairo size 1400,900 font ',10' noenhanced"
		echo "set output '$2'"
		echo "set multiplot layout 2,2 title 'tandemd C against the anchors: $(basename "$1"), median per-round ratios' font ',12'"
		echo "set datafile missing '-'"
		echo "set style data histogram; set style histogram cluster gap 1; set style fill solid 0.75 border -1"
		echo "set boxwidth 0.9; set grid ytics; set yrange [0:*]; set offsets 0, 0, graph 0.12, 0"
		echo "set key top left horizontal; set xtics rotate by -30"
		for m in relay quorum link model; do
			case $m in
			relay) t="C / relay (every row)"; g=1.0 ;;
			quorum) t="C / quorum (rows not link-bound)"; g=1.5 ;;
			link) t="C / link TCP rate (link-bound rows: 1 MiB on 1 Gbit/s, or nbdkit >= 0.9 of the link)"; g=0.98 ;;
			model) t="(C / nbdkit) / model ceiling (4 KiB rows)"; g=0.9 ;;
			esac
			echo "set title '$t'"
			line="plot "
			k=2
			for st in $sets; do
				line="$line'$pd/$m' using $k:xtic(1) title '$st', "
				k=$((k + 1))
			done
			echo "$line$g with lines dt 2 lw 2 lc rgb 'black' title 'goal $g'"
		done
		echo "unset multiplot"
	} >"$pd/plot.gp"
	gnuplot "$pd/plot.gp"
	rm -rf "$pd"
}

if [ "${1:-}" = report ]; then
	report "$2"
	exit 0
fi
if [ "${1:-}" = plot ]; then
	plot "$2" "${3:-${2%.txt}-anchors.png}"
	exit 0
fi

# ------------------------------------------------------------------ setup
: "${BUILD_DIR:=/tmp/b2}" "${SCRATCH:=/var/tmp}" "${SIZE_MB:=2048}" "${REGION_MB:=1536}"
: "${ROUNDS:=3}" "${RUN_SECONDS:=2}" "${WARM_SECONDS:=1}"
: "${WARM_WORKLOADS:=seq1m_qd8 commit4k_qd1}" "${LINKS:=veth htb1g}"
: "${TARGETS:=tandemd_C tandemd_C_tls tandemd_B tandemd_A tandemd_sa nbdkit nbdkit_none relay quorum}"
: "${WORKLOADS:=seq1m_qd1 seq1m_qd8 rand4k_j1 rand4k_j2 rand4k_j4 rand4k_j8 commit4k_qd1}"
: "${NONE_WORKLOADS:=commit4k_qd1}" "${RESYNC:=1}" "${RATE_VETH:=200M}" "${RATE_HTB1G:=80M}"
: "${LINK_SECS:=2}" "${LINK_REPS:=3}" "${HOP_N:=5000}"
: "${RAW:=$here/results/repl-bench-$(date -u +%Y%m%d-%H%M%S).txt}"

[ "$(id -u)" -eq 0 ] || { echo "repl-bench: needs root (network namespaces)" >&2; exit 1; }
for b in tandemd tandemadm; do
	[ -x "$BUILD_DIR/replicator/$b" ] || { echo "repl-bench: no $BUILD_DIR/replicator/$b" >&2; exit 1; }
done
for t in fio nbdkit jq fincore ip tc /usr/bin/time timeout; do
	command -v "$t" >/dev/null 2>&1 || { echo "repl-bench: needs $t" >&2; exit 1; }
done
case " $TARGETS " in
*_tls" "*)
	command -v openssl >/dev/null 2>&1 || { echo "repl-bench: needs openssl (tandemd_C_tls)" >&2; exit 1; }
	;;
esac
case " $TARGETS " in
*" quorum "*)
	command -v qemu-storage-daemon >/dev/null 2>&1 ||
		{ echo "repl-bench: needs qemu-storage-daemon (quorum; scripts/install-deps.sh --perf)" >&2; exit 1; }
	;;
esac
command -v cc >/dev/null 2>&1 || { echo "repl-bench: needs cc (the hop round-trip probe)" >&2; exit 1; }
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3) || { echo "repl-bench: needs python3" >&2; exit 1; }

tmp=$(mktemp -d "$SCRATCH/repl-bench.XXXXXX")
ns_a=rpb-a-$$
ns_b=rpb-b-$$
if_a=rpa$$
if_b=rpb$$
ip_a=10.213.7.1
ip_b=10.213.7.2
pid_a=
pid_b=
nbdkit_pid=
nbdkit_none_pid=
recv_pid=
hop_pid=
anchor_relay_pid=
anchor_quorum_pid=
ns_made=
mode=none
broken=
tls_noted=
start=$(date +%s)

log() { echo "repl-bench: $(date -u +%T) $*" >&2; }
raw() { echo "$*" >>"$RAW"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
node() { [ "$1" = a ] && echo alice || echo bob; }
ns_of() { [ "$1" = a ] && echo "$ns_a" || echo "$ns_b"; }
ctl() {
	n=$1
	shift
	timeout 60 "$tmp/bin/tandemadm" -c "$tmp/t-$(node "$n").conf" --node "$(node "$n")" --run-dir "$tmp/run-$n" "$@"
}
# js a|b JQ-PATH: one field of status --json r0 (under .resources[0])
js() { ctl "$1" status --json r0 | jq -r ".resources[0]$2"; }

stop_node() {
	eval "p=\${pid_$1:-}"
	[ -n "$p" ] || return 0
	ctl "$1" down --force r0 >/dev/null 2>&1 || true
	kill -TERM "$p" 2>/dev/null || true
	i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
	eval "pid_$1="
}

cleanup() {
	set +e
	for n in a b; do stop_node "$n"; done
	# the anchors first: bob's nbdkit waits for their connections to close
	anchor_quorum_stop
	anchor_relay_stop
	for p in $nbdkit_pid $nbdkit_none_pid $recv_pid $hop_pid; do
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ -n "$ns_made" ]; then
		ip netns exec "$ns_a" tc qdisc del dev "$if_a" root 2>/dev/null
		ip netns exec "$ns_b" tc qdisc del dev "$if_b" root 2>/dev/null
		ip netns del "$ns_a" 2>/dev/null
		ip netns del "$ns_b" 2>/dev/null
	fi
	if [ -n "${KEEP_LOGS:-}" ]; then
		mkdir -p "$KEEP_LOGS" && cp "$tmp"/*.log "$KEEP_LOGS"/ 2>/dev/null
	fi
	rm -rf "$tmp"
	[ -z "${peer_img:-}" ] || rm -f "$peer_img"
	[ -z "${local_img:-}" ] || rm -f "$local_img"
	[ -z "${quorum_img:-}" ] || rm -f "$quorum_img"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

mkdir -p "$(dirname "$RAW")" "$tmp/bin"
: >"$RAW"
cp "$BUILD_DIR/replicator/tandemd" "$BUILD_DIR/replicator/tandemadm" "$tmp/bin/"
# tandemd_C_tls: a test CA and a certificate for each node (P-256)
case " $TARGETS " in
*_tls" "*) sh "$here/../integration/tls-certs.sh" "$tmp/pki" alice bob ;;
esac

wait_file() {
	i=0
	until [ -S "$1" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || { log "no socket $1"; return 1; }
		sleep 0.05
	done
}

# ------------------------------------------------------------ the network
ip netns add "$ns_a"
ns_made=1
ip netns add "$ns_b"
ip link add name "$if_a" type veth peer name "$if_b"
ip link set "$if_a" netns "$ns_a"
ip link set "$if_b" netns "$ns_b"
ip -n "$ns_a" addr add "$ip_a/24" dev "$if_a"
ip -n "$ns_b" addr add "$ip_b/24" dev "$if_b"
for n in "$ns_a" "$ns_b"; do ip -n "$n" link set lo up; done
ip -n "$ns_a" link set "$if_a" up
ip -n "$ns_b" link set "$if_b" up

# shape LINK: HTB rate 1gbit on both ends of the veth, or nothing
shape() {
	ip netns exec "$ns_a" tc qdisc del dev "$if_a" root 2>/dev/null || true
	ip netns exec "$ns_b" tc qdisc del dev "$if_b" root 2>/dev/null || true
	case $1 in
	veth) ;;
	htb1g)
		for e in "$ns_a $if_a" "$ns_b $if_b"; do
			# shellcheck disable=SC2086
			set -- $e
			ip netns exec "$1" tc qdisc add dev "$2" root handle 1: htb default 10 r2q 1000
			ip netns exec "$1" tc class add dev "$2" parent 1: classid 1:10 htb rate 1gbit \
				ceil 1gbit burst 15k cburst 15k
		done
		;;
	*) log "unknown link $1"; exit 1 ;;
	esac
}
link_desc() {
	case $1 in
	veth) echo "veth pair between two network namespaces, unshaped" ;;
	htb1g) echo "the same veth, tc HTB rate 1gbit ceil 1gbit burst 15k on both ends" ;;
	esac
}

# ------------------------------------------------------------ the nodes
# write_conf PROTOCOL[_tls] NET-EXTRA DISK-EXTRA: t-alice.conf and
# t-bob.conf, the same but for each node's own certificate with _tls
write_conf() {
	for n in alice bob; do
		case $1 in
		*_tls) tls="tls yes; tls-ca $tmp/pki/ca.pem; tls-certificate $tmp/pki/$n.pem; tls-key $tmp/pki/$n.key;" ;;
		*) tls= ;;
		esac
		cat >"$tmp/t-$n.conf" <<-CONF
		resource r0 {
			net { protocol ${1%_tls}; cram-hmac-alg sha256; shared-secret "tandem-bench"; $tls $2 }
			disk { $3 }
			on alice { device minor 0; disk $tmp/a.img; meta-disk internal; address $ip_a:7789; }
			on bob { device minor 0; disk $tmp/b.img; meta-disk internal; address $ip_b:7789; }
		}
		CONF
	done
}
# the resync settings (see the top); connect-int 2 (timeout below it)
# bounds the reconnection after an invalidate
SYNC_NET="connect-int 2; timeout 15;"
DYN_NET="$SYNC_NET max-buffers 131072;"
DYN_DISK="c-plan-ahead 20; c-fill-target 64M; c-max-rate 4G;"

start_node() {
	rm -f "$tmp/run-$1/tandemd.sock"
	ip netns exec "$(ns_of "$1")" "$tmp/bin/tandemd" -c "$tmp/t-$(node "$1").conf" --node "$(node "$1")" \
		--run-dir "$tmp/run-$1" -f >>"$tmp/tandemd-$1.log" 2>&1 &
	eval "pid_$1=$!"
	wait_file "$tmp/run-$1/tandemd.sock"
}

logtail() {
	for n in a b; do
		echo "--- tandemd $(node "$n") (last lines)"
		tail -n "${2:-25}" "$tmp/tandemd-$n.log"
	done | sed "s/^/# $1: /" >>"$RAW"
}

# wait_synced SECONDS: alice Connected, both disks UpToDate
wait_synced() {
	lim=$(($1 * 10))
	i=0
	while :; do
		sa=$(ctl a status --json r0 2>/dev/null | jq -r '.resources[0] | .connection + " " + .volumes[0].disk + " " + .volumes[0].peer_disk') || sa=
		db=$(js b .volumes[0].disk 2>/dev/null) || db=
		[ "$sa $db" = "Connected UpToDate UpToDate UpToDate" ] && return 0
		i=$((i + 1))
		[ $i -lt "$lim" ] || { log "not in sync after $1 s: alice $sa, bob $db"; return 1; }
		sleep 0.1
	done
}

# reconnect PROTOCOL NET DISK: new configuration, adjust, disconnect and
# connect both nodes, wait until both are UpToDate
reconnect() {
	write_conf "$1" "$2" "$3"
	rc_n0=$(wc -l <"$tmp/tandemd-b.log")
	ctl a adjust r0 >/dev/null && ctl b adjust r0 >/dev/null || return 1
	ctl a disconnect r0 >/dev/null 2>&1 || true
	ctl b disconnect r0 >/dev/null 2>&1 || true
	ctl a connect r0 >/dev/null && ctl b connect r0 >/dev/null || return 1
	wait_synced 300 || return 1
	rc_kib=$(tail -n +"$((rc_n0 + 1))" "$tmp/tandemd-b.log" | sed -n 's/.*resync as SyncTarget: \([0-9]*\) KiB.*/\1/p' | tail -1)
	: "${rc_kib:=0}"
}

# oos_note SET ROUND FROM TO: a reconnection that was not a catch-up found
# blocks out of sync (the writes before it had all been acknowledged)
oos_note() {
	[ "$rc_kib" = 0 ] || raw "prof oos-at-reconnect set=$1 round=$2 from=$3 to=$4 kib=$rc_kib (resync as SyncTarget, bob)"
}

alive() { kill -0 "$pid_a" 2>/dev/null && kill -0 "$pid_b" 2>/dev/null; }

# set_mode C|C_tls|B|A|SA SET ROUND: tandemd in that mode; 1 if it cannot be
# reached (recorded; tandemd is then left alone for the rest of the run)
set_mode() {
	[ -z "$broken" ] || return 1
	[ "$1" != "$mode" ] || return 0
	if [ "$1" = SA ]; then
		if ctl a disconnect r0 >/dev/null && ctl b disconnect r0 >/dev/null &&
			[ "$(js a .connection)" = StandAlone ]; then
			mode=SA
			return 0
		fi
	else
		ok=1
		if [ "$mode" = SA ]; then
			# catch up what alice wrote alone, with the fast settings
			n0=$(wc -l <"$tmp/tandemd-b.log")
			t0=$(now_ms)
			reconnect "$1" "$DYN_NET" "$DYN_DISK" || ok=
			t1=$(now_ms)
			kib=$(tail -n +"$((n0 + 1))" "$tmp/tandemd-b.log" | sed -n 's/.*resync done (\([0-9]*\) KiB in \([0-9.]*\) s).*/\1 \2/p' | tail -1)
			# shellcheck disable=SC2086
			set -- "$@" ${kib:-0 0}
			raw "catchup set=$2 round=$3 to=$1 kib=$4 td_s=$5 ms=$((t1 - t0))"
		fi
		if [ -n "$ok" ] && reconnect "$1" "" ""; then
			[ "$mode" = SA ] || oos_note "$2" "$3" "$mode" "$1"
			mode=$1
			case $1 in
			*_tls)
				# what the session runs: the connected line of the log
				[ -n "$tls_noted" ] || raw "# TLS session: $(grep 'connected to .*TLS: ' "$tmp/tandemd-a.log" | tail -1 | sed 's/.*, TLS: //')"
				tls_noted=1
				;;
			esac
			return 0
		fi
	fi
	broken=1
	log "tandemd: cannot switch to mode $1; tandemd targets are skipped from now on"
	raw "fail set=$2 round=$3 target=tandemd wl=mode-$1 from=$mode alive=$(alive && echo yes || echo no)"
	logtail "mode-$1"
	return 1
}

# ------------------------------------------------------------ measuring
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $9; exit }' /proc/stat; }
pcpu() {
	if [ -n "$1" ] && [ -r "/proc/$1/stat" ]; then
		sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
	else
		echo 0
	fi
}
# st2: "al bm pending" of alice, then of bob (pending = ap + pe + ua)
st2() {
	for n in a b; do
		x=$(ctl "$n" status --json r0 | jq -r '.resources[0].volumes[0].counters | "\(.al) \(.bm) \(.ap + .pe + .ua)"')
		echo "${x:-0 0 0}"
	done | tr '\n' ' '
}

# drain: wait until neither node has writes pending (protocol A may lag);
# prints the last st2
drain() {
	i=0
	while :; do
		c=$(st2)
		# shellcheck disable=SC2086
		set -- $c
		if [ "$3" = 0 ] && [ "$6" = 0 ]; then
			echo "$c"
			return 0
		fi
		i=$((i + 1))
		if [ $i -ge 300 ]; then
			log "drain: still pending after 300 polls (alice $3, bob $6)"
			echo "$c"
			return 0
		fi
		sleep 0.05
	done
}

mode_of() {
	case $1 in
	tandemd_C) echo C ;;
	tandemd_C_tls) echo C_tls ;;
	tandemd_B) echo B ;;
	tandemd_A) echo A ;;
	tandemd_sa) echo SA ;;
	esac
}

# fio_args TARGET WORKLOAD ROUND
fio_args() {
	case $1 in
	nbdkit) echo "--ioengine=nbd --uri=nbd://$ip_b:10809/" ;;
	nbdkit_none) echo "--ioengine=nbd --uri=nbd://$ip_b:10810/" ;;
	tandemd*) echo "--ioengine=nbd --uri=nbd+unix:///r0?socket=$tmp/run-a/r0.nbd" ;;
	relay) echo "--ioengine=nbd --uri=$(anchor_uri "$tmp/relay.sock")" ;;
	quorum) echo "--ioengine=nbd --uri=$(anchor_uri "$tmp/quorum.sock")" ;;
	esac
	case $2 in
	seq1m_qd1) echo "--rw=write --bs=1M --size=${REGION_MB}M --iodepth=1" ;;
	seq1m_qd8) echo "--rw=write --bs=1M --size=${REGION_MB}M --iodepth=8" ;;
	rand4k_j*) echo "--rw=randwrite --bs=4k --size=128M --offset_increment=128M --iodepth=1" \
		"--numjobs=${2#rand4k_j} --randseed=$3" ;;
	commit4k_qd1) echo "--rw=randwrite --bs=4k --size=1G --iodepth=1 --fsync=1 --randseed=$3" ;;
	*) log "unknown workload $2"; exit 1 ;;
	esac
}

settle() {
	sync
	for x in a b c d; do [ ! -e "$tmp/$x.img" ] || dd if="$tmp/$x.img" iflag=nocache count=0 status=none; done
}

# one SET ROUND SECS TARGET WORKLOAD: one fio run, one raw line
one() {
	set_=$1 r=$2 secs=$3 t=$4 wl=$5
	# f: the file fincore looks at; np: bob's nbdkit; ap: the anchor on
	# alice's side
	ap=
	case $t in
	tandemd*) f=$tmp/a.img; np= ;;
	nbdkit) f=$tmp/c.img; np=$nbdkit_pid ;;
	nbdkit_none) f=$tmp/c.img; np=$nbdkit_none_pid ;;
	relay) f=$tmp/c.img; np=$nbdkit_pid; ap=$anchor_relay_pid ;;
	quorum) f=$tmp/d.img; np=$nbdkit_pid; ap=$anchor_quorum_pid ;;
	esac
	settle
	cached=$(fincore -n -o PAGES "$f" 2>/dev/null | tr -d ' ' || echo '?')
	c0=$(st2)
	a0=$(pcpu "$pid_a") bb0=$(pcpu "$pid_b") n0=$(pcpu "$np") p0=$(pcpu "$ap")
	b0=$(busy)
	rc=0
	# shellcheck disable=SC2046
	/usr/bin/time -f '%U %S' -o "$tmp/time" timeout $((secs + 60)) \
		ip netns exec "$ns_a" fio --name=w --group_reporting --output-format=json \
		--output="$tmp/fio.json" --runtime="$secs" --time_based $(fio_args "$t" "$wl" "$r") \
		>>"$tmp/fio.log" 2>&1 || rc=$?
	b1=$(busy)
	a1=$(pcpu "$pid_a") bb1=$(pcpu "$pid_b") n1=$(pcpu "$np") p1=$(pcpu "$ap")
	if [ $rc -ne 0 ]; then
		log "fio failed (exit $rc): $t $wl"
		raw "fail set=$set_ round=$r target=$t wl=$wl rc=$rc alive=$(alive && echo yes || echo no)"
		tail -n 5 "$tmp/fio.log" | sed 's/^/# fio: /' >>"$RAW"
		case $t in
		tandemd*)
			logtail "$t-$wl"
			# a dead daemon ends the tandemd rows; else reconnect at
			# the next block
			if alive; then mode=none; else broken=1; fi
			;;
		esac
		return 0
	fi
	d0=$(now_ms)
	case $t in tandemd*) c1=$(drain) ;; *) c1=$c0 ;; esac
	d1=$(now_ms)
	sync
	b2=$(busy)
	a2=$(pcpu "$pid_a") bb2=$(pcpu "$pid_b") n2=$(pcpu "$np") p2=$(pcpu "$ap")
	m=$(jq -r '.jobs[0] | [.write.io_bytes, .write.bw_bytes, .write.iops,
		(.write.clat_ns.percentile["50.000000"] // 0), (.write.clat_ns.percentile["99.000000"] // 0),
		(.sync.lat_ns.percentile["50.000000"] // 0), (.sync.lat_ns.percentile["99.000000"] // 0),
		.write.runtime] | @tsv' "$tmp/fio.json")
	echo "$m $b0 $b1 $b2 $c0 $c1 $(cat "$tmp/time")" | awk -v pre="run set=$set_ round=$r target=$t wl=$wl" \
		-v tda="$((a2 - a0))" -v tdb="$((bb2 - bb0))" -v nbk="$((n2 - n0))" -v tdarun="$((a1 - a0))" \
		-v tdbrun="$((bb1 - bb0))" -v nbkrun="$((n1 - n0))" -v drain="$((d1 - d0))" -v cached="$cached" \
		-v anc="$((p2 - p0))" -v ancrun="$((p1 - p0))" '{
		printf "%s bytes=%s mbs=%.1f iops=%.0f wp50=%.1f wp99=%.1f fp50=%.1f fp99=%.1f ms=%s",
			pre, $1, $2 / 1e6, $3, $4 / 1000, $5 / 1000, $6 / 1000, $7 / 1000, $8
		printf " sys=%d steal=%d syssync=%d tda=%d tdb=%d nbk=%d tdarun=%d tdbrun=%d nbkrun=%d",
			$11 - $9, $12 - $10, $13 - $9, tda, tdb, nbk, tdarun, tdbrun, nbkrun
		printf " ala=%d bma=%d alb=%d bmb=%d drain_ms=%d fio=%.2f cached_pages=%s anc=%d ancrun=%d\n",
			$21 - $15, $22 - $16, $24 - $18, $25 - $19, drain, $27 + $28, cached, anc, ancrun
	}' >>"$RAW"
}

idle() {
	b0=$(busy)
	sleep 2
	b1=$(busy)
	echo "$b0 $b1" | awk -v l="$1" '{ printf "# background %s: %.2f CPUs busy, %.2f stolen (2 s, our daemons idle); load average %s\n", l, ($3 - $1) / 200, ($4 - $2) / 200, la }' \
		la="$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW"
}

shuffle() { awk -v seed="$1" 'BEGIN { srand(seed) } { print rand() "\t" $0 }' | sort -n | cut -f2-; }

# rounds SET FIRST LAST WORKLOADS SECS: blocks of targets in a shuffled
# order (nbdkit and nbdkit_none form one block), workloads shuffled within
# a block. The order file is read on fd 3 (no pipeline: set_mode changes
# shell variables).
rounds() {
	r=$2
	while [ "$r" -le "$3" ]; do
		log "$1 round $r of $3"
		raw "# round $1/$r: load average $(cut -d' ' -f1-3 /proc/loadavg)"
		hops "$1" "$r"
		blocks=$(for t in $TARGETS; do case $t in nbdkit*) echo nbdkit ;; *) echo "$t" ;; esac; done |
			sort -u | shuffle "$((r * 7 + ${#1}))")
		for blk in $blocks; do
			for t in $TARGETS; do
				case $t in nbdkit*) [ "$blk" = nbdkit ] || continue ;; *) [ "$t" = "$blk" ] || continue ;; esac
				for w in $4; do
					if [ "$t" = nbdkit_none ]; then
						case " $NONE_WORKLOADS " in *" $w "*) ;; *) continue ;; esac
					fi
					echo "$t $w"
				done
			done | shuffle "$((r * 13 + ${#blk}))" >"$tmp/order"
			case $blk in
			tandemd*) set_mode "$(mode_of "$blk")" "$1" "$r" || continue ;;
			esac
			while read -r t w <&3; do
				case $t in tandemd*) [ -z "$broken" ] || continue ;; esac
				one "$1" "$r" "$5" "$t" "$w"
			done 3<"$tmp/order"
		done
		r=$((r + 1))
	done
}

# ------------------------------------------------------------ link, resync
PY_RECV='
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
print("listening", flush=True)
c, _ = s.accept()
buf = bytearray(1 << 20)
n = 0
t0 = None
while True:
    k = c.recv_into(buf)
    if not k:
        break
    if t0 is None:
        t0 = time.monotonic()
    n += k
print(n, time.monotonic() - t0)
'
PY_SEND='
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
b = bytes(1 << 20)
end = time.monotonic() + float(sys.argv[3])
while time.monotonic() < end:
    s.sendall(b)
s.close()
'
# link_rate SET: TCP from alice's namespace to bob's, LINK_REPS times
link_rate() {
	i=1
	while [ $i -le "$LINK_REPS" ]; do
		: >"$tmp/recv.out"
		ip netns exec "$ns_b" "$py" -c "$PY_RECV" "$ip_b" 5201 >"$tmp/recv.out" 2>>"$tmp/py.log" &
		recv_pid=$!
		j=0
		until grep -q listening "$tmp/recv.out"; do
			j=$((j + 1))
			[ $j -lt 100 ] || { log "no TCP receiver"; return 1; }
			sleep 0.05
		done
		b0=$(busy)
		ip netns exec "$ns_a" "$py" -c "$PY_SEND" "$ip_b" 5201 "$LINK_SECS" 2>>"$tmp/py.log"
		wait "$recv_pid" || true
		recv_pid=
		b1=$(busy)
		tail -1 "$tmp/recv.out" | awk -v pre="link set=$1 rep=$i" -v b0="${b0% *}" -v b1="${b1% *}" '{
			printf "%s bytes=%s secs=%.3f mibs=%.1f mbs=%.1f sys=%d\n", pre, $1, $2, $1 / $2 / 1048576, $1 / $2 / 1e6, b1 - b0 }' >>"$RAW"
		i=$((i + 1))
	done
}

# resync_one SET NAME KIND CFG-MiB/s NET DISK: invalidate on bob, time the
# full resync
resync_one() {
	[ -z "$broken" ] || return 0
	log "resync $1 $2"
	set_mode C "$1" resync || return 0
	from=$mode
	if ! reconnect C "$5" "$6"; then
		raw "fail set=$1 round=resync target=tandemd wl=resync-$2 reason=reconnect"
		logtail "resync-$2"
		broken=1
		return 0
	fi
	oos_note "$1" resync "$from" "C-$2"
	mode=C_sync
	settle
	n0=$(wc -l <"$tmp/tandemd-b.log")
	a0=$(pcpu "$pid_a") bb0=$(pcpu "$pid_b")
	b0=$(busy)
	t0=$(now_ms)
	t1=
	speeds=
	ctl b invalidate r0 >/dev/null || { raw "fail set=$1 round=resync target=tandemd wl=invalidate-$2"; logtail "invalidate"; broken=1; return 0; }
	i=0
	while :; do
		st=$(ctl b status --json r0 | jq -r '.resources[0] | .connection + " " +
			.volumes[0].disk + " " + ((.volumes[0].sync.speed_kib_s // "-") | tostring)') || st=
		pa=$(js a .volumes[0].peer_disk) || pa=
		cs=${st%% *} sp=${st##* }
		[ "$cs" != SyncTarget ] || [ -n "$t1" ] || t1=$(now_ms)
		[ "$sp" = - ] || [ -z "$sp" ] || speeds="$speeds $sp"
		[ "$st $pa" != "Connected UpToDate - UpToDate" ] || break
		i=$((i + 1))
		if [ $i -ge 3000 ] || ! alive; then
			raw "fail set=$1 round=resync target=tandemd wl=resync-$2 reason=not-in-sync-after-600s alive=$(alive && echo yes || echo no)"
			logtail "resync-$2"
			broken=1
			return 0
		fi
		sleep 0.2
	done
	t2=$(now_ms)
	b1=$(busy)
	a1=$(pcpu "$pid_a") bb1=$(pcpu "$pid_b")
	kt=$(tail -n +"$((n0 + 1))" "$tmp/tandemd-b.log" | sed -n 's/.*resync done (\([0-9]*\) KiB in \([0-9.]*\) s).*/\1 \2/p' | tail -1)
	sm=$(echo "$speeds" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }')
	# shellcheck disable=SC2086
	set -- "$@" ${kt:-0 0}
	raw "resync set=$1 name=$2 kind=$3 cfg_mibs=$4 cfg=$(cfg_word "$5 $6") kib=$7 td_s=$8 wall_ms=$((t2 - t0)) sync_ms=$((t2 - ${t1:-$t0})) gap_ms=$((${t1:-$t0} - t0)) speed_med_kibs=$sm sys=$((${b1% *} - ${b0% *})) steal=$((${b1#* } - ${b0#* })) tda=$((a1 - a0)) tdb=$((bb1 - bb0))"
}

# cfg_word "a 1; b 2;" -> a_1;b_2 (one word of a raw line)
cfg_word() { echo "$1" | sed 's/; */;/g; s/^ *//; s/;$//; s/ /_/g'; }

mibs_of() { # 200M -> 200, 1G -> 1024
	case $1 in
	*G) echo $((${1%G} * 1024)) ;;
	*M) echo "${1%M}" ;;
	*K) echo $((${1%K} / 1024)) ;;
	esac
}

resyncs() {
	case $1 in
	veth) rate=$RATE_VETH ;;
	htb1g) rate=$RATE_HTB1G ;;
	esac
	resync_one "$1" fixed fixed "$(mibs_of "$rate")" "$SYNC_NET max-buffers 131072;" \
		"resync-rate $rate; c-plan-ahead 0;"
	if [ "$1" = veth ]; then
		resync_one "$1" fixed_mb fixed "$(mibs_of "$rate")" "$SYNC_NET" \
			"resync-rate $rate; c-plan-ahead 0;"
		resync_one "$1" fixed_max dyn 0 "$SYNC_NET max-buffers 131072;" \
			"resync-rate 4G; c-plan-ahead 0;"
	fi
	resync_one "$1" dyn dyn 0 "$DYN_NET" "$DYN_DISK"
	set_mode C "$1" resync || true
}

# What a thread wake-up costs on this machine, which a replicated write
# pays twice more than a write to nbdkit over the link (the NBD socket
# into tandemd, the ack back from bob): two threads passing a token
# through pipes, on any CPU and on one.
wakeup_cost() {
	command -v perf >/dev/null 2>&1 || { echo "unknown (perf is not installed)"; return; }
	any=$(perf bench sched pipe -l 20000 2>/dev/null | sed -n 's/^ *\([0-9.]*\) usecs\/op.*/\1/p')
	one=$(taskset -c 0 perf bench sched pipe -l 20000 2>/dev/null | sed -n 's/^ *\([0-9.]*\) usecs\/op.*/\1/p')
	echo "perf bench sched pipe: ${any:-?} us per round trip (two wake-ups), ${one:-?} us with both threads on one CPU"
}

machine() {
	raw "# date $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	raw "# kernel $(uname -r); $(nproc) CPUs: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	raw "# memory $(free -g | awk '/^Mem:/ { print $2 " GiB" }'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	raw "# scratch $(df -T "$tmp" | awk 'NR == 2 { print $1 " " $2 }'); three backing files of $SIZE_MB MiB (fallocate), test region $REGION_MB MiB"
	raw "# fio $(fio --version), $(nbdkit --version)"
	raw "# thread wake-ups: $(wakeup_cost)"
	src=$(sed -n 's/^abs_top_srcdir = //p' "$BUILD_DIR/Makefile" 2>/dev/null | head -1)
	raw "# tandemd from $BUILD_DIR (built $(date -u -r "$BUILD_DIR/replicator/tandemd" '+%Y-%m-%d %H:%M UTC'), sha256 $(sha256sum "$tmp/bin/tandemd" | cut -c1-12)); its source ${src:-?} is at $(git -C "${src:-$here}" rev-parse --short HEAD 2>/dev/null || echo '?') now$(git -C "${src:-$here}" diff --quiet HEAD -- replicator 2>/dev/null || echo ', replicator/ modified in the working tree') (the build may be older)"
	raw "# export size $(js a .volumes[0].size_sect) sectors"
	raw "# rounds $ROUNDS, $RUN_SECONDS s per run; warm-up round of $WARM_WORKLOADS, $WARM_SECONDS s per run"
	raw "# tandemd main configuration: net { protocol X; } (defaults otherwise: max-buffers 2048, sndbuf auto)"
	case " $TARGETS " in
	*_tls" "*) raw "# tandemd_C_tls: net { protocol C; tls yes; tls-ca; tls-certificate; tls-key; } with the P-256 certificates of tests/integration/tls-certs.sh; $(openssl version); tandemd links $(ldd "$tmp/bin/tandemd" | awk '/libssl/ { print $3 }')" ;;
	esac
	raw "# resync settings: fixed = resync-rate RATE; c-plan-ahead 0; max-buffers 131072 / fixed_mb = the same with max-buffers 2048 / dyn = $DYN_DISK max-buffers 131072 (all with $SYNC_NET)"
	raw "# sets $LINKS"
	for s in $LINKS; do raw "# set $s: $(link_desc "$s")"; done
	raw "# targets $TARGETS"
	raw "# workloads $WORKLOADS"
	raw "# nbdkit cache=none runs only: $NONE_WORKLOADS"
	! has_target relay || raw "# relay: nbdkit nbd plugin in alice's namespace on a Unix socket, uri=nbd://$ip_b:10809/ (bob's nbdkit file plugin, default cache); check passed: 1 MiB written through it read back through it, from bob's nbdkit and from c.img"
	! has_target quorum || raw "# quorum: $(qemu-storage-daemon --version | head -1) in alice's namespace, NBD export on a Unix socket of a quorum node (vote-threshold 2) over a file child (d.img, cache.direct=${ANCHOR_QUORUM_DIRECT:-off}, aio=${ANCHOR_QUORUM_AIO:-threads}) and an nbd child (nbd://$ip_b:10809/); check passed: 1 MiB written through it read back through it, from bob's nbdkit, d.img and c.img"
	raw "# hops: request/reply round trips of $HOP_N 4124-byte requests (an NBD write of 4 KiB) and 16-byte replies, QD1, at the start of each round: unix = a Unix socket in alice's namespace (the client's hop to tandemd, the relay, the quorum), link = TCP alice -> bob; sleep = both ends block in recv, spin = both ends poll (MSG_DONTWAIT): r = spin p50, w = (sleep p50 - spin p50) / 2"
}

# The hop probe: a QD1 request/reply ping-pong, the one extra round trip a
# replicated write makes over a write to nbdkit over the link.
#   hop -s ADDR MODE      serve one connection (ADDR: /path or HOST:PORT)
#   hop -c ADDR MODE N    N round trips; prints "p50 mean" in us
# MODE: sleep (blocking recv) or spin (MSG_DONTWAIT in a loop)
HOP_C='
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#define REQ 4124
#define REP 16
static int spin;
static int io(int fd, char *b, size_t n, int rd)
{
	size_t o = 0;
	while (o < n) {
		ssize_t k = rd ? recv(fd, b + o, n - o, spin ? MSG_DONTWAIT : 0)
			       : send(fd, b + o, n - o, MSG_NOSIGNAL);
		if (k > 0)
			o += (size_t)k;
		else if (k == 0 || (errno != EAGAIN && errno != EINTR))
			return -1;
	}
	return 0;
}
static int sock(const char *a, int srv)
{
	int fd, one = 1;
	if (a[0] == 0x2f) {
		struct sockaddr_un u = { .sun_family = AF_UNIX };
		strncpy(u.sun_path, a, sizeof u.sun_path - 1);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (srv) {
			unlink(a);
			if (bind(fd, (void *)&u, sizeof u) || listen(fd, 1))
				return -1;
		} else if (connect(fd, (void *)&u, sizeof u))
			return -1;
		return fd;
	}
	char h[256];
	snprintf(h, sizeof h, "%s", a);
	char *p = strrchr(h, 0x3a);
	if (!p)
		return -1;
	*p++ = 0;
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(atoi(p)) };
	struct hostent *he = gethostbyname(h);
	if (!he)
		return -1;
	memcpy(&in.sin_addr, he->h_addr_list[0], 4);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (srv) {
		if (bind(fd, (void *)&in, sizeof in) || listen(fd, 1))
			return -1;
	} else {
		if (connect(fd, (void *)&in, sizeof in))
			return -1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	}
	return fd;
}
static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}
int main(int argc, char **argv)
{
	static char req[REQ], rep[REP];
	if (argc < 4)
		return 2;
	spin = !strcmp(argv[3], "spin");
	if (!strcmp(argv[1], "-s")) {
		int one = 1, l = sock(argv[2], 1), c;
		if (l < 0)
			return 1;
		printf("ready\n");
		fflush(stdout);
		c = accept(l, NULL, NULL);
		if (c < 0)
			return 1;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		while (!io(c, req, REQ, 1) && !io(c, rep, REP, 0))
			;
		return 0;
	}
	int n = argc > 4 ? atoi(argv[4]) : 5000, fd = sock(argv[2], 0), i;
	double *t = calloc((size_t)n, sizeof *t), sum = 0;
	if (fd < 0 || !t)
		return 1;
	memset(req, 0x5a, sizeof req);
	for (i = -n / 10; i < n; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (io(fd, req, REQ, 0) || io(fd, rep, REP, 1))
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (i >= 0)
			sum += t[i] = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
	}
	qsort(t, (size_t)n, sizeof *t, cmp);
	printf("%.1f %.1f\n", t[n / 2], sum / n);
	return 0;
}
'

# hop1 SET ROUND PATH MODE: one hop measurement, one raw line
hop1() {
	case $3 in
	unix) srv_ns=$ns_a addr=$tmp/hop.sock ;;
	link) srv_ns=$ns_b addr=$ip_b:5202 ;;
	esac
	: >"$tmp/hop.srv"
	ip netns exec "$srv_ns" "$tmp/bin/hop" -s "$addr" "$4" >"$tmp/hop.srv" 2>>"$tmp/hop.log" &
	hop_pid=$!
	j=0
	until grep -q ready "$tmp/hop.srv"; do
		j=$((j + 1))
		[ $j -lt 100 ] || { log "no hop server"; kill "$hop_pid" 2>/dev/null; hop_pid=; return 0; }
		sleep 0.05
	done
	x=$(ip netns exec "$ns_a" timeout 60 "$tmp/bin/hop" -c "$addr" "$4" "$HOP_N" 2>>"$tmp/hop.log") || x=
	wait "$hop_pid" 2>/dev/null || true
	hop_pid=
	# shellcheck disable=SC2086
	[ -z "$x" ] || { set -- "$@" $x; raw "hop set=$1 round=$2 path=$3 mode=$4 n=$HOP_N p50=$5 mean=$6"; }
}
hops() {
	for h in unix link; do
		for m in sleep spin; do hop1 "$1" "$2" "$h" "$m"; done
	done
}

# ------------------------------------------------------------------ main
log "raw results: $RAW"
printf '%s' "$HOP_C" >"$tmp/hop.c"
cc -O2 -Wall -o "$tmp/bin/hop" "$tmp/hop.c" || { echo "repl-bench: cannot build the hop probe" >&2; exit 1; }
has_target() { case " $TARGETS " in *" $1 "*) return 0 ;; esac; return 1; }
for x in a b c; do fallocate -l "${SIZE_MB}M" "$tmp/$x.img"; done
# d.img: the quorum's local child, beside alice's file (tandemd has a.img)
! has_target quorum || fallocate -l "${SIZE_MB}M" "$tmp/d.img"
# place X OWNER VAR SETTING DIR: X.img (OWNER's backing file) in DIR, as
# SETTING asks, through a symbolic link; its name goes to VAR (cleanup)
place() {
	img=$(mktemp "$5/repl-bench-$1.XXXXXX")
	rm -f "$tmp/$1.img"
	fallocate -l "${SIZE_MB}M" "$img"
	ln -s "$img" "$tmp/$1.img"
	eval "$3=\$img"
	raw "# $4: $2 backing file is $img ($(df -T "$img" | awk 'NR == 2 { print $1 " " $2 }')), a diagnostic run"
}
[ -z "${PEER_SCRATCH:-}" ] || place b "bob's" peer_img PEER_SCRATCH "$PEER_SCRATCH"
[ -z "${LOCAL_SCRATCH:-}" ] || place a "alice's" local_img LOCAL_SCRATCH "$LOCAL_SCRATCH"
[ -z "${LOCAL_SCRATCH:-}" ] || ! has_target quorum || place d "the quorum's local" quorum_img LOCAL_SCRATCH "$LOCAL_SCRATCH"
write_conf C "$DYN_NET" "$DYN_DISK"
ctl a create-md --force r0 >/dev/null 2>&1 || { log "create-md failed"; exit 1; }
ctl b create-md --force r0 >/dev/null 2>&1 || { log "create-md failed"; exit 1; }
start_node a
start_node b
ctl a up r0 >/dev/null
ctl b up r0 >/dev/null
i=0
until [ "$(js a .connection)" = Connected ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || { logtail setup; log "the nodes did not connect"; exit 1; }
	sleep 0.1
done

ip netns exec "$ns_b" nbdkit -f --exit-with-parent -i "$ip_b" -p 10809 file file="$tmp/c.img" \
	>>"$tmp/nbdkit.log" 2>&1 &
nbdkit_pid=$!
ip netns exec "$ns_b" nbdkit -f --exit-with-parent -i "$ip_b" -p 10810 file file="$tmp/c.img" \
	cache=none >>"$tmp/nbdkit.log" 2>&1 &
nbdkit_none_pid=$!

# the anchors on alice's side, relaying to bob's nbdkit (10809); each is
# checked (bytes written through it read back from every copy) before
# anything is timed
if has_target relay; then
	anchor_relay_start "$ns_a" "$tmp/relay.sock" "nbd://$ip_b:10809/" "$tmp/relay.log" ||
		{ log "the relay did not start"; exit 1; }
	anchor_check "$ns_a" "$(anchor_uri "$tmp/relay.sock")" 1048576 1048576 "nbd://$ip_b:10809/" "$tmp/c.img" ||
		{ log "the relay does not write what it is given"; exit 1; }
fi
if has_target quorum; then
	anchor_quorum_start "$ns_a" "$tmp/quorum.sock" "nbd://$ip_b:10809/" "$tmp/d.img" "$tmp/quorum.log" ||
		{ cat "$tmp/quorum.log" >&2; log "qemu-storage-daemon did not start"; exit 1; }
	anchor_check "$ns_a" "$(anchor_uri "$tmp/quorum.sock")" 4194304 1048576 "nbd://$ip_b:10809/" "$tmp/d.img" "$tmp/c.img" ||
		{ log "the quorum export does not write both children"; exit 1; }
fi

machine

# the initial full sync (primary --force), with the dyn settings, unshaped
log "initial full sync"
n0=$(wc -l <"$tmp/tandemd-b.log")
a0=$(pcpu "$pid_a") bb0=$(pcpu "$pid_b")
b0=$(busy)
t0=$(now_ms)
ctl a primary --force r0 >/dev/null
wait_file "$tmp/run-a/r0.nbd"
wait_synced 600 || { logtail initial-sync 40; log "initial sync failed"; exit 1; }
t2=$(now_ms)
b1=$(busy)
a1=$(pcpu "$pid_a") bb1=$(pcpu "$pid_b")
kt=$(tail -n +"$((n0 + 1))" "$tmp/tandemd-b.log" | sed -n 's/.*resync done (\([0-9]*\) KiB in \([0-9.]*\) s).*/\1 \2/p' | tail -1)
# shellcheck disable=SC2086
set -- ${kt:-0 0}
raw "resync set=veth name=initial kind=dyn cfg_mibs=0 cfg=$(cfg_word "primary --force; $DYN_NET $DYN_DISK") kib=$1 td_s=$2 wall_ms=$((t2 - t0)) sync_ms=0 gap_ms=0 speed_med_kibs=0 sys=$((${b1% *} - ${b0% *})) steal=$((${b1#* } - ${b0#* })) tda=$((a1 - a0)) tdb=$((bb1 - bb0))"
reconnect C "" "" || { logtail reconnect; log "reconnect failed"; exit 1; }
mode=C

# prefill the region through tandemd (protocol C), through nbdkit and
# through the quorum (its local file; c.img again): the fallocate'd extents
# are written once, tandemd's activity log is hot
prefill_uris="nbd+unix:///r0?socket=$tmp/run-a/r0.nbd nbd://$ip_b:10809/"
! has_target quorum || prefill_uris="$prefill_uris $(anchor_uri "$tmp/quorum.sock")"
for u in $prefill_uris; do
	log "prefill $u"
	t0=$(now_ms)
	ip netns exec "$ns_a" fio --name=prefill --ioengine=nbd --uri="$u" --rw=write --bs=1M \
		--size="${REGION_MB}M" --iodepth=8 --output="$tmp/prefill.json" --output-format=json \
		>>"$tmp/fio.log" 2>&1
	raw "prof prefill uri=$u ms=$(($(now_ms) - t0)) mbs=$(jq '.jobs[0].write.bw_bytes / 1e6 | floor' "$tmp/prefill.json")"
done
raw "# after the prefill: AL transactions, bitmap pages, pending of alice then bob so far: $(drain)"

for s in $LINKS; do
	log "link $s"
	shape "$s"
	idle "$s before"
	link_rate "$s"
	rounds "$s" 0 0 "$WARM_WORKLOADS" "$WARM_SECONDS"
	rounds "$s" 1 "$ROUNDS" "$WORKLOADS" "$RUN_SECONDS"
	[ "$RESYNC" != 1 ] || resyncs "$s"
	for e in "$ns_a $if_a" "$ns_b $if_b"; do
		# shellcheck disable=SC2086
		set -- $e
		raw "# tc $s $1: $(ip netns exec "$1" tc -s qdisc show dev "$2" | tr -s '\n ' '  ' | cut -c1-300)"
	done
	idle "$s after"
done
shape veth

for n in a b; do
	raw "# tandemd $(node "$n") log: $(grep -c . "$tmp/tandemd-$n.log") lines, $(grep -ci 'error\|fail\|lost' "$tmp/tandemd-$n.log") with error/fail/lost"
	grep -i 'error\|assert\|abort' "$tmp/tandemd-$n.log" | head -20 | sed "s/^/# tandemd $(node "$n"): /" >>"$RAW"
done
raw "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
raw "# elapsed $(($(date +%s) - start)) s"
report "$RAW" | tee "${RAW%.txt}.md"
log "raw results: $RAW, tables: ${RAW%.txt}.md"

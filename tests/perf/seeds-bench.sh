#!/bin/sh
# seeds-bench.sh: the drbd-user measurements that started the project,
# reproduced on tandem with the anchors in the same run (doc/perf-seeds.md).
# Two tandemd nodes, alice (Primary) and bob, in two network namespaces
# joined by a veth pair shaped with HTB to 1 Gbit/s on both ends, as in
# tests/perf/repl-bench.sh; the same workloads run against every target in
# shuffled rounds, ratios are taken within a round, medians are printed.
# Not part of make check.
#
#   targets   raw          the backing file itself: dd and fio (psync,
#                          O_DIRECT) on a preallocated file of the same size
#                          on the same disk
#             tandemd_sa   tandemd, StandAlone Primary (peer disconnected)
#             tandemd_A, tandemd_B, tandemd_C
#                          connected, protocol A / B / C over the 1 Gbit/s link
#             nbdkit       nbdkit file plugin in bob's namespace over the
#                          same link: one synchronous network write
#             relay, quorum  the anchors of tests/perf/anchors.sh (sourced
#                          when it exists; skipped with a note otherwise)
#   sections  dd           dd if=/dev/zero bs=1M and bs=4k, oflag=direct and
#                          oflag=dsync, as a user's dd sees the export: the
#                          NBD export through nbdfuse (a FUSE file) and a
#                          loop device on it (losetup --direct-io=on); with
#                          DEV=/dev/nbdN... through nbd-client instead (a
#                          host with the kernel's nbd module; untested here)
#             tio          tiobench-like: 4 KiB sequential and random
#                          writes, 1/2/4/8 threads each in its own 128 MiB
#                          region, fio psync O_DIRECT on the same block
#                          device as dd (threads of synchronous write()s into
#                          one kernel block device, as tiobench's are)
#             commit       MySQL-like: 16 KiB random write + FLUSH at QD1
#                          (fio nbd engine --fsync=1; raw: psync + fsync)
#             al           internal vs external metadata, al-extents 257,
#                          1237, 6433: 4 KiB random writes at QD1 (fio nbd
#                          engine) over the whole device (SIZE_MB, larger
#                          than the 257 and 1237 hot sets), tandemd C and
#                          StandAlone; raw, nbdkit and the anchors run the
#                          same job in every round
#             memory       tandemd's RSS per resource for sparse 1 GiB,
#                          100 GiB and 4 TiB volumes (also alone:
#                          seeds-bench.sh memory)
#
# Every run starts with nothing dirty and none of the backing files in the
# page cache (sync, then POSIX_FADV_DONTNEED through dd iflag=nocache);
# after a run on tandemd the script waits until neither node has writes
# pending (protocol A may lag). CPU: busy jiffies of the whole machine from
# /proc/stat over the run, utime + stime of both tandemd processes from
# /proc/PID/stat over run + drain + sync. The binaries are copied from
# BUILD_DIR at the start.
#
# Files: alice's two backing files (r0 internal metadata, r1 external),
# the raw file and nbdkit's file are filled with zeros (dd) so that no
# write meets an unwritten extent; bob's two are fallocate'd. The nodes
# skip the initial sync (new-current-uuid --clear-bitmap: both sides read
# zeros). About 6 x SIZE_MB of free space in SCRATCH.
#
# Environment (defaults in brackets):
#   BUILD_DIR   configured and built tree [/tmp/b-seeds]
#   SCRATCH     where the backing files go [/var/tmp]
#   SIZE_MB     every backing file [8192]   REGION_MB  tio/commit region [1536]
#   ROUNDS      timed rounds [3]            SECS       seconds per fio run [2]
#   DD1M_MB     MiB per dd bs=1M run [256]  DD4K_MB    MiB per dd bs=4k run [8]
#   TARGETS     ["raw tandemd_sa tandemd_A tandemd_B tandemd_C nbdkit relay quorum"]
#   WORKLOADS   ["dd1m_direct dd1m_dsync dd4k_direct dd4k_dsync tio_seq_j1 tio_seq_j2
#               tio_seq_j4 tio_seq_j8 tio_rand_j1 tio_rand_j2 tio_rand_j4 tio_rand_j8
#               commit16k"]
#   AL          1 = the al section [1]; AL_ROUNDS [2]; AL_EXTENTS ["257 1237 6433"]
#   AL_MODES    tandemd modes of the al section ["C SA"]
#   MEMORY      1 = the memory section [1]; MEM_SIZES ["1G 100G 4T"]
#   DEV         space-separated /dev/nbdN devices: attach the exports with
#               nbd-client instead of nbdfuse + loop (one device per export)
#   RAW         raw lines [tests/perf/results/seeds-bench-DATE.txt]
#   PLOTS       directory for the PNG charts after a run [doc/ of the tree]
#
#   seeds-bench.sh report RAWFILE       the Markdown tables from a raw file
#   seeds-bench.sh plot RAWFILE [DIR]   the PNG charts (gnuplot) into DIR
#                                       [doc/]: perf-seeds-{dd,tio,commit,al,memory}.png
#   seeds-bench.sh memory               the memory section alone
#
# Needs root, ip, tc (sch_htb), fio with the nbd engine, nbdkit, nbdfuse
# (libnbd-bin), losetup, fusermount3, jq, python3, gnuplot (plots only).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
export LC_ALL=C

# ------------------------------------------------------------------ seeds
# The seeds' own figures (doc/perf-seeds.md names the posts). One line per
# section/workload: key|ratio|text. A ratio of "-" means the seed gave no
# figure we could find.
seeds() {
	cat <<-'SEEDS'
	dd1m_direct|0.90|R04|drbd-user 2004-11-19, Philipp Reisner, "The need for speed": a 1 GB file written with sync on ext3, 41.52 MB/s on the disk, 37.16 MB/s on a connected DRBD device, protocol C, 1 GbE (0.90)
	dd1m_direct|0.35|B08|drbd-user 2008-03-01, Christian Balzer, "DRBD performance (only uses 40% of a GE link)": bonnie block writes on ext3, 120486 KiB/s on the MD RAID5, 41801 KiB/s on the UpToDate DRBD 8.0.11 device, 1 GbE (0.35)
	dd1m_direct|0.28|M11|drbd-dev 2011-07-08, Mrten, "[PATCH 2/2] expand section on throughput tuning to highlight prime usecase of external metadata": dd from /dev/zero onto DRBD with internal metadata on a RAID-0 of rotational disks, 250 MB/s raw, "as slow as 70 MB/s" with DRBD (0.28); Florian Haas's reply: 110 MB/s over GigE would be normal
	dd1m_dsync|-|-|no figure found for dd oflag=dsync on DRBD
	dd4k_direct|-|-|no figure found for 4 KiB dd on DRBD (LINBIT's blog "Benchmarking DRBD" recommends dd bs=4096 oflag=direct for IOPS, without figures)
	dd4k_dsync|-|-|no figure found
	tio|0.24|I56|no drbd-user post with tiobench figures found; nearest: LINBIT/drbd issue #56 (2023), "low performance on /dev/drbd1": fio 4k randwrite QD32, 230k IOPS on the disk, 50k-60k on DRBD 9.2.2, the same when disconnected (0.22-0.26)
	commit16k|-|G09|drbd-user 2009-07-01, Michael Gleibman, "using disk-drain with plain scsi drives?": MySQL (InnoDB, MyISAM) on DRBD 8.3.1, protocol C, GigE: only no-disk-barrier + no-disk-flushes gave "reasonable performance"; the figures pasted in the post were not in the text found
	al|0.03|L13|LINBIT blog "DRBD 8.4.3: faster than ever": random writes on SSD, protocol C, 10 GbE: 50k IOPS raw LVM, 1.5k IOPS with DRBD 8.4.2 (an AL write per write: 0.03), 25k with 8.4.3 (0.50)
	al|0.50|L13|
	SEEDS
}

# ------------------------------------------------------------------ report
# Raw lines: "run sec=S round=R target=T wl=W key=value..." (round 0 is the
# warm-up), "link ...", "mem ...", "fail ...", "# ..." comments.
# shellcheck disable=SC2016 # awk code
AWK_LIB='
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
function tname(t) {
	return t == "raw" ? "raw file" : t == "tandemd_sa" ? "tandemd StandAlone" : \
		t == "tandemd_A" ? "tandemd A" : t == "tandemd_B" ? "tandemd B" : \
		t == "tandemd_C" ? "tandemd C" : t == "nbdkit" ? "nbdkit over the link" : t
}
function unit(w) { return w ~ /^(dd|tio_seq)/ ? "MB/s" : "IOPS" }
# ratio of a to b within each round (metric m), median (min–max)
function ratio(s, w, a, b, m,    r, list) {
	list = ""
	for (r = 1; r <= 99; r++)
		if ((s, w, a, r, m) in val && (s, w, b, r, m) in val && val[s, w, b, r, m] > 0)
			list = list " " val[s, w, a, r, m] / val[s, w, b, r, m]
	stats(list)
	rmed = s_n ? s_med : ""
	return s_n ? sprintf("%.2f (%.2f–%.2f)", s_med, s_min, s_max) : "—"
}
function load(    s, w, t, r, k, gib) {
	kv()
	if (f["round"] == 0)
		return 0
	s = f["sec"]; w = f["wl"]; t = f["target"]; r = f["round"]
	val[s, w, t, r, "mbs"] = f["mbs"]; val[s, w, t, r, "iops"] = f["iops"]
	val[s, w, t, r, "m"] = unit(w) == "MB/s" ? f["mbs"] : f["iops"]
	k = s SUBSEP w SUBSEP t SUBSEP
	add(k "m", val[s, w, t, r, "m"]); add(k "mbs", f["mbs"])
	for (x in f)
		if (x ~ /^(wp50|wp99|fp50|fp99|alpw|drain_ms)$/)
			add(k x, f[x])
	gib = f["bytes"] / 1073741824
	if (gib > 0) {
		add(k "sys", f["sys"] / 100 / gib)
		add(k "tda", f["tda"] / 100 / gib)
		add(k "tdb", f["tdb"] / 100 / gib)
	}
	seen[s, w, t] = 1
	return 1
}
'

report() {
	seeds >"${TMPDIR:-/tmp}/seeds.$$"
	awk "$AWK_LIB"'
FNR == NR {
	split($0, p, "|")
	had = p[1] in sr
	if (p[2] != "-") sr[p[1]] = (had && sr[p[1]] != "" ? sr[p[1]] ", " : "") p[2] " [" p[3] "]"
	else if (!had) sr[p[1]] = ""
	if (p[4] != "") { lab[++nlab] = p[3] == "-" ? p[1] : p[3]; ltx[nlab] = p[4] }
	next
}
/^# targets / { ntg = split(substr($0, 11), tg, " ") }
/^# /   { hdr[++nhdr] = $0 }
/^run / { load() }
/^link / { kv(); add("link", f["mbs"]) }
/^mem / { mem[++nmem] = $0 }
/^fail / { fails[++nfail] = $0 }
function seedcell(w,    k) {
	k = (w in sr) ? w : (w ~ /^tio/ ? "tio" : w ~ /^al/ ? "al" : w)
	if (!(k in sr)) return "—"
	return sr[k] == "" ? "none found" : sr[k]
}
function section(s, title, wl, n,    i, j, w, line, sep, k) {
	print ""
	print "## " title
	print ""
	print "Throughput: median (min–max) over the rounds"
	print ""
	line = "| workload | unit |"; sep = "|---|---|"
	for (i = 1; i <= ntg; i++) { line = line " " tname(tg[i]) " |"; sep = sep "---|" }
	print line; print sep
	for (j = 1; j <= n; j++) {
		w = wl[j]
		line = "| " w " | " unit(w) " |"
		for (i = 1; i <= ntg; i++)
			line = line " " spread(s SUBSEP w SUBSEP tg[i] SUBSEP "m", "%.0f") " |"
		print line
	}
	print ""
	print "Fraction of the raw file (within a round, median) / of the link (MB/s ÷ the link'"'"'s TCP MB/s); the seed'"'"'s DRBD/raw ratio"
	print ""
	line = "| workload |"; sep = "|---|"
	for (i = 1; i <= ntg; i++) if (tg[i] != "raw") { line = line " " tname(tg[i]) " |"; sep = sep "---|" }
	print line " seed |"; print sep "---|"
	for (j = 1; j <= n; j++) {
		w = wl[j]
		line = "| " w " |"
		for (i = 1; i <= ntg; i++) {
			if (tg[i] == "raw") continue
			ratio(s, w, tg[i], "raw", "m"); a = rmed
			k = s SUBSEP w SUBSEP tg[i] SUBSEP "mbs"
			b = (linkmb > 0 && medv(k) != "") ? medv(k) / linkmb : ""
			line = line " " (a == "" ? "—" : sprintf("%.3f", a)) " / " (b == "" ? "—" : sprintf("%.2f", b)) " |"
		}
		print line " " seedcell(w) " |"
	}
	print ""
	print "Ratios that compare tandemd with its anchors (within a round, median (min–max))"
	print ""
	print "| workload | C / nbdkit | C / relay | C / quorum | C / StandAlone | B / StandAlone | A / StandAlone | StandAlone / raw |"
	print "|---|---|---|---|---|---|---|---|"
	for (j = 1; j <= n; j++) {
		w = wl[j]
		printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", w,
			ratio(s, w, "tandemd_C", "nbdkit", "m"), ratio(s, w, "tandemd_C", "relay", "m"),
			ratio(s, w, "tandemd_C", "quorum", "m"), ratio(s, w, "tandemd_C", "tandemd_sa", "m"),
			ratio(s, w, "tandemd_B", "tandemd_sa", "m"), ratio(s, w, "tandemd_A", "tandemd_sa", "m"),
			ratio(s, w, "tandemd_sa", "raw", "m")
	}
	print ""
	print "CPU seconds per GiB written, medians: machine during the run / alice / bob (tandemd rows)"
	print ""
	line = "| workload |"; sep = "|---|"
	for (i = 1; i <= ntg; i++) { line = line " " tname(tg[i]) " |"; sep = sep "---|" }
	print line; print sep
	for (j = 1; j <= n; j++) {
		w = wl[j]
		line = "| " w " |"
		for (i = 1; i <= ntg; i++) {
			k = s SUBSEP w SUBSEP tg[i] SUBSEP
			if (!((s, w, tg[i]) in seen)) { line = line " — |"; continue }
			line = line " " med(k "sys", "%.2f") (tg[i] ~ /^tandemd/ ? " / " med(k "tda", "%.2f") " / " med(k "tdb", "%.2f") : "") " |"
		}
		print line
	}
}
END {
	stats(acc["link"]); linkmb = s_n ? s_med : 0
	print "Setup (from the raw file):"
	print ""
	for (i = 1; i <= nhdr; i++)
		print "    " substr(hdr[i], 3)
	print ""
	printf "The link: TCP over the shaped veth (Python sender → receiver): %s MB/s, median (min–max)\n", spread("link", "%.1f")
	n = 0; delete wl
	for (x in seen) { split(x, q, SUBSEP); if (q[1] == "dd") ddw[q[2]] = 1 }
	split("dd1m_direct dd1m_dsync dd4k_direct dd4k_dsync", cand, " ")
	for (j = 1; j <= 4; j++) if (cand[j] in ddw) wl[++n] = cand[j]
	if (n) section("dd", "dd through the export (nbdfuse + loop device; raw: the file)", wl, n)
	n = 0; delete wl
	split("tio_seq_j1 tio_seq_j2 tio_seq_j4 tio_seq_j8 tio_rand_j1 tio_rand_j2 tio_rand_j4 tio_rand_j8", cand, " ")
	for (j = 1; j <= 8; j++) for (i = 1; i <= ntg; i++) if (("tio", cand[j], tg[i]) in seen) { wl[++n] = cand[j]; break }
	if (n) section("tio", "tiobench-like: 4 KiB writes, 1/2/4/8 threads (fio psync O_DIRECT on the loop device)", wl, n)
	for (i = 1; i <= ntg; i++) if (("commit", "commit16k", tg[i]) in seen) hc = 1
	if (hc) {
		delete wl; wl[1] = "commit16k"
		section("commit", "MySQL-like commits: 16 KiB write + FLUSH, QD1 (fio nbd engine)", wl, 1)
		print ""
		print "Commit latency: medians over the rounds, µs"
		print ""
		print "| target | IOPS | write p50 | write p99 | flush p50 | flush p99 |"
		print "|---|---|---|---|---|---|"
		for (i = 1; i <= ntg; i++) {
			k = "commit" SUBSEP "commit16k" SUBSEP tg[i] SUBSEP
			if (!(("commit", "commit16k", tg[i]) in seen)) continue
			printf "| %s | %s | %s | %s | %s | %s |\n", tname(tg[i]), spread(k "m", "%.0f"),
				med(k "wp50", "%.0f"), med(k "wp99", "%.0f"), med(k "fp50", "%.0f"), med(k "fp99", "%.0f")
		}
	}
	# al: targets are tandemd_<mode>_<meta>_<ext> plus the anchors
	nal = 0
	for (x in seen) { split(x, q, SUBSEP); if (q[1] == "al") { alt[q[3]] = 1; nal++ } }
	if (nal) {
		print ""
		print "## al: internal vs external metadata, al-extents (4 KiB random writes, QD1, the whole device)"
		print ""
		print "| target | IOPS median (min–max) | fraction of raw | fraction of the link | AL transactions per write | write p50 / p99 µs |"
		print "|---|---|---|---|---|---|"
		split("raw nbdkit relay quorum", an, " ")
		for (i = 1; i <= 4; i++) {
			t = an[i]
			if (!(t in alt)) continue
			k = "al" SUBSEP "al_rand4k" SUBSEP t SUBSEP
			ratio("al", "al_rand4k", t, "raw", "m")
			printf "| %s | %s | %s | %s | — | %s / %s |\n", tname(t), spread(k "m", "%.0f"),
				rmed == "" ? "—" : sprintf("%.3f", rmed), (linkmb > 0 ? sprintf("%.3f", medv(k "mbs") / linkmb) : "—"),
				med(k "wp50", "%.0f"), med(k "wp99", "%.0f")
		}
		split("C SA", md, " "); split("internal external", mt, " "); split("257 1237 6433", ex, " ")
		for (a = 1; a <= 2; a++) for (b = 1; b <= 2; b++) for (c = 1; c <= 3; c++) {
			t = "tandemd_" md[a] "_" mt[b] "_" ex[c]
			if (!(t in alt)) continue
			k = "al" SUBSEP "al_rand4k" SUBSEP t SUBSEP
			ratio("al", "al_rand4k", t, "raw", "m")
			printf "| tandemd %s, %s, al-extents %s | %s | %s | %s | %s | %s / %s |\n", md[a] == "SA" ? "StandAlone" : md[a],
				mt[b], ex[c], spread(k "m", "%.0f"), rmed == "" ? "—" : sprintf("%.3f", rmed),
				(linkmb > 0 ? sprintf("%.3f", medv(k "mbs") / linkmb) : "—"), med(k "alpw", "%.3f"),
				med(k "wp50", "%.0f"), med(k "wp99", "%.0f")
		}
		print ""
		print "Seed (DRBD/raw): " seedcell("al")
	}
	if (nmem) {
		print ""
		print "## Memory: tandemd RSS per resource (StandAlone Primary, sparse backing file, internal metadata)"
		print ""
		print "| volume | bitmap MiB | RSS of the daemon, no resource (KiB) | RSS with the resource (KiB) | RssAnon (KiB) | per resource (MiB) | goal: 16 MiB + bitmap (MiB) | within the goal |"
		print "|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= nmem; i++) {
			$0 = mem[i]; kv()
			per = (f["rss"] - f["rss0"]) / 1024; goal = 16 + f["bm_mib"]
			printf "| %s | %.0f | %s | %s | %s | %.1f | %.0f | %s |\n", f["size"], f["bm_mib"], f["rss0"], f["rss"],
				f["anon"], per, goal, per <= goal ? "yes" : "**no**"
		}
	}
	print ""
	print "The seeds (their DRBD/raw ratio, in the seed columns above):"
	print ""
	for (i = 1; i <= nlab; i++) printf "- [%s] %s\n", lab[i], ltx[i]
	if (nfail) {
		print ""
		print "## Failures"
		print ""
		for (i = 1; i <= nfail; i++) print "    " fails[i]
	}
}' "${TMPDIR:-/tmp}/seeds.$$" "$1"
	rm -f "${TMPDIR:-/tmp}/seeds.$$"
}

# ------------------------------------------------------------------ plot
# plot RAWFILE DIR: one PNG per section. Bars: each target as a fraction of
# the raw file (log scale, left) and of the link (right), per workload.
plot() {
	command -v gnuplot >/dev/null 2>&1 || { echo "seeds-bench: plot needs gnuplot" >&2; return 1; }
	out=$2
	mkdir -p "$out"
	pt=$(mktemp -d "${TMPDIR:-/tmp}/seeds-plot.XXXXXX")
	for sec in dd tio commit al; do
		# data: workload, then per target: frac_raw frac_link
		seeds >"$pt/seeds"
		awk -v sec="$sec" "$AWK_LIB"'
FNR == NR { split($0, p, "|"); if (p[2] != "-" && !(p[1] in sd)) sd[p[1]] = p[2]; next }
/^# targets / { ntg = split(substr($0, 11), tg, " ") }
/^run / { load() }
/^link / { kv(); add("link", f["mbs"]) }
END {
	stats(acc["link"]); linkmb = s_n ? s_med : 0
	if (sec == "al") {
		n = 0
		split("raw nbdkit relay quorum", an, " ")
		for (i = 1; i <= 4; i++) if (("al", "al_rand4k", an[i]) in seen) lab[++n] = an[i]
		split("C SA", md, " "); split("internal external", mt, " "); split("257 1237 6433", ex, " ")
		for (a = 1; a <= 2; a++) for (b = 1; b <= 2; b++) for (c = 1; c <= 3; c++) {
			t = "tandemd_" md[a] "_" mt[b] "_" ex[c]
			if (("al", "al_rand4k", t) in seen) lab[++n] = t
		}
		print "# label frac_raw frac_link"
		if ("al" in sd) printf "\"seed: DRBD 8.4.2\" %s NaN\n", sd["al"]
		for (i = 1; i <= n; i++) {
			ratio("al", "al_rand4k", lab[i], "raw", "m")
			k = "al" SUBSEP "al_rand4k" SUBSEP lab[i] SUBSEP "mbs"
			l = lab[i]; sub(/^tandemd_/, "", l); gsub(/_/, " ", l); sub(/internal/, "int", l); sub(/external/, "ext", l)
			printf "\"%s\" %s %s\n", l, rmed == "" ? "NaN" : rmed, (linkmb > 0 && medv(k) != "") ? medv(k) / linkmb : "NaN"
		}
		exit
	}
	nw = 0
	for (x in seen) { split(x, q, SUBSEP); if (q[1] == sec) ws[q[2]] = 1 }
	split("dd1m_direct dd1m_dsync dd4k_direct dd4k_dsync tio_seq_j1 tio_seq_j2 tio_seq_j4 tio_seq_j8 tio_rand_j1 tio_rand_j2 tio_rand_j4 tio_rand_j8 commit16k", cand, " ")
	for (j = 1; j <= 13; j++) if (cand[j] in ws) wl[++nw] = cand[j]
	line = "workload"
	for (i = 1; i <= ntg; i++) if (tg[i] != "raw") line = line " \"" tname(tg[i]) "\" \"" tname(tg[i]) "\""
	print "# " line " \"the seed: DRBD / raw\" \"the seed: DRBD / raw\""
	for (j = 1; j <= nw; j++) {
		w = wl[j]; line = w
		sk = (w in sd) ? w : (w ~ /^tio/ ? "tio" : w)
		for (i = 1; i <= ntg; i++) {
			if (tg[i] == "raw") continue
			ratio(sec, w, tg[i], "raw", "m"); a = rmed
			k = sec SUBSEP w SUBSEP tg[i] SUBSEP "mbs"
			b = (linkmb > 0 && medv(k) != "") ? medv(k) / linkmb : ""
			line = line " " (a == "" ? "NaN" : a) " " (b == "" ? "NaN" : b)
		}
		print line " " (sk in sd ? sd[sk] : "NaN") " NaN"
	}
}' "$pt/seeds" "$1" >"$pt/$sec.dat"
		[ "$(grep -vc '^#' "$pt/$sec.dat")" -gt 0 ] || continue
		if [ "$sec" = al ]; then
			cat >"$pt/$sec.gp" <<-GP
			set terminal pngcairo size 1100,520 font "sans,10"
			set output "$out/perf-seeds-al.png"
			set termoption noenhanced
			set multiplot layout 1,2 title "4 KiB random writes, QD1, whole device: internal vs external metadata, al-extents (1 Gbit/s link)"
			set style data histogram; set style fill solid 0.8 border -1; set boxwidth 0.8
			set xtics rotate by -45 font "sans,8"; set grid ytics; set key off
			set logscale y; set yrange [0.01:2]; set ylabel "fraction of the raw file (log)"
			plot "$pt/$sec.dat" using 2:xtic(1) lc rgb "#4477aa"
			unset logscale y; set yrange [0:1.2]; set ylabel "fraction of the link (MB/s)"
			plot "$pt/$sec.dat" using 3:xtic(1) lc rgb "#ee6677"
			unset multiplot
			GP
		else
			ncol=$(head -1 "$pt/$sec.dat" | awk -F'"' '{ print (NF - 1) / 4 }')
			# no seed figure for this section: no seed series
			nseed=$(awk '!/^#/ && $(NF - 1) != "NaN"' "$pt/$sec.dat" | wc -l)
			[ "$nseed" -gt 0 ] || ncol=$((ncol - 1)) nright=$ncol
			[ "$nseed" -eq 0 ] || nright=$((ncol - 1))
			title=$(case $sec in
				dd) echo "dd through the export (nbdfuse + loop): fraction of the raw file and of the 1 Gbit/s link" ;;
				tio) echo "tiobench-like 4 KiB writes, 1/2/4/8 threads: fraction of the raw file and of the link" ;;
				commit) echo "16 KiB write + FLUSH at QD1 (MySQL-like commits): fraction of the raw file and of the link" ;;
				esac)
			{
				echo "set terminal pngcairo size 1200,520 font \"sans,10\""
				echo "set output \"$out/perf-seeds-$sec.png\""
				echo "set termoption noenhanced"
				echo "set multiplot layout 1,2 title \"$title\""
				echo "set style data histogram; set style histogram clustered gap 1"
				echo "set style fill solid 0.85 border -1; set grid ytics"
				echo "set xtics rotate by -30 font \"sans,9\"; set key top right font \"sans,8\""
				echo "set logscale y; set yrange [0.005:3]; set ylabel \"fraction of the raw file (log)\""
				printf 'plot '
				i=0
				# the last series is the seed: grey
				while [ "$i" -lt "$ncol" ]; do
					c=$((2 + 2 * i))
					[ "$i" -eq 0 ] || printf ', '
					printf '"%s" using %d:xtic(1) title columnheader(%d)' "$pt/$sec.dat" "$c" "$c"
					[ "$nseed" -eq 0 ] || [ "$i" -lt $((ncol - 1)) ] || printf ' lc rgb "#888888" fs pattern 4'
					i=$((i + 1))
				done
				echo
				echo "unset logscale y; set yrange [0:1.3]; set ylabel \"fraction of the link (MB/s ÷ TCP MB/s)\""
				echo "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb \"black\""
				printf 'plot '
				i=0
				while [ "$i" -lt "$nright" ]; do
					c=$((3 + 2 * i))
					[ "$i" -eq 0 ] || printf ', '
					printf '"%s" using %d:xtic(1) title columnheader(%d)' "$pt/$sec.dat" "$c" "$c"
					i=$((i + 1))
				done
				echo
				echo "unset multiplot"
			} >"$pt/$sec.gp"
			# gnuplot reads the header line as column names
			sed -i '1s/^# //' "$pt/$sec.dat"
		fi
		gnuplot "$pt/$sec.gp" || echo "seeds-bench: gnuplot failed for $sec" >&2
	done
	# memory: RSS per resource against the goal
	if grep -q '^mem ' "$1"; then
		awk "$AWK_LIB"'/^mem / { kv(); printf "\"%s\" %.1f %.1f\n", f["size"], (f["rss"] - f["rss0"]) / 1024, 16 + f["bm_mib"] }' \
			"$1" >"$pt/mem.dat"
		cat >"$pt/mem.gp" <<-GP
		set terminal pngcairo size 700,420 font "sans,10"
		set output "$out/perf-seeds-memory.png"
		set termoption noenhanced
		set title "tandemd RSS per resource (StandAlone Primary) against the goal: 16 MiB + 32 MiB per TiB"
		set style data histogram; set style histogram clustered gap 1
		set style fill solid 0.85 border -1; set grid ytics; set logscale y; set yrange [0.5:*]
		set ylabel "MiB (log)"; set key top left
		plot "$pt/mem.dat" using 2:xtic(1) title "measured (RSS with - without the resource)" lc rgb "#4477aa", \
		     "" using 3 title "goal" lc rgb "#bbbbbb"
		GP
		gnuplot "$pt/mem.gp" || echo "seeds-bench: gnuplot failed for memory" >&2
	fi
	rm -rf "$pt"
}

case ${1:-run} in
report) report "$2"; exit 0 ;;
plot) plot "$2" "${3:-$here/../../doc}"; exit 0 ;;
memory) ONLY_MEMORY=1 ;;
run) ;;
*) echo "usage: seeds-bench.sh [run|memory|report RAWFILE|plot RAWFILE [DIR]]" >&2; exit 2 ;;
esac

# ------------------------------------------------------------------ setup
: "${BUILD_DIR:=/tmp/b-seeds}" "${SCRATCH:=/var/tmp}" "${SIZE_MB:=8192}" "${REGION_MB:=1536}"
: "${ROUNDS:=3}" "${SECS:=2}" "${DD1M_MB:=256}" "${DD4K_MB:=8}"
: "${TARGETS:=raw tandemd_sa tandemd_A tandemd_B tandemd_C nbdkit relay quorum}"
: "${WORKLOADS:=dd1m_direct dd1m_dsync dd4k_direct dd4k_dsync tio_seq_j1 tio_seq_j2 tio_seq_j4 tio_seq_j8 tio_rand_j1 tio_rand_j2 tio_rand_j4 tio_rand_j8 commit16k}"
: "${AL:=1}" "${AL_ROUNDS:=2}" "${AL_EXTENTS:=257 1237 6433}" "${AL_MODES:=C SA}"
: "${MEMORY:=1}" "${MEM_SIZES:=1G 100G 4T}" "${DEV:=}" "${ONLY_MEMORY:=}"
: "${RAW:=$here/results/seeds-bench-$(date -u +%Y%m%d-%H%M%S).txt}"
: "${PLOTS:=$here/../../doc}"

[ "$(id -u)" -eq 0 ] || { echo "seeds-bench: needs root (namespaces, loop devices)" >&2; exit 1; }
for b in tandemd tandemadm; do
	[ -x "$BUILD_DIR/replicator/$b" ] || { echo "seeds-bench: no $BUILD_DIR/replicator/$b" >&2; exit 1; }
done
for t in fio nbdkit nbdfuse losetup fusermount3 nsenter jq ip tc timeout; do
	command -v "$t" >/dev/null 2>&1 || { echo "seeds-bench: needs $t" >&2; exit 1; }
done
[ -z "$DEV" ] || command -v nbd-client >/dev/null 2>&1 || { echo "seeds-bench: DEV needs nbd-client" >&2; exit 1; }
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3) || { echo "seeds-bench: needs python3" >&2; exit 1; }

tmp=$(mktemp -d "$SCRATCH/seeds-bench.XXXXXX")
ns_a=sdb-a-$$
ns_b=sdb-b-$$
if_a=sda$$
if_b=sdb$$
ip_a=10.213.9.1
ip_b=10.213.9.2
pid_a=
pid_b=
pid_m=
nbdkit_pid=
recv_pid=
anchor_relay_pid=
anchor_quorum_pid=
ns_made=
exports=
broken=
mode_r0=none
mode_r1=none
P_r0=C
P_r1=C
AL_r0=1237
AL_r1=1237
start=$(date +%s)

log() { echo "seeds-bench: $(date -u +%T) $*" >&2; }
raw() { echo "$*" >>"$RAW"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
node() { [ "$1" = a ] && echo alice || echo bob; }
ctl() {
	n=$1
	shift
	timeout 60 "$tmp/bin/tandemadm" -c "$tmp/t.conf" --node "$(node "$n")" --run-dir "$tmp/run-$n" "$@"
}
# js a|b RES JQ-PATH: one field of status --json RES (under .resources[0])
js() { ctl "$1" status --json "$2" | jq -r ".resources[0]$3"; }

stop_pid() {
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null || true
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
stop_node() {
	eval "p=\${pid_$1:-}"
	[ -n "$p" ] || return 0
	[ "$1" = m ] || { ctl "$1" down --force r0 r1 >/dev/null 2>&1 || true; }
	stop_pid "$p"
	eval "pid_$1="
}

# ------------------------------------------------------------ the exports
# attach NAME URI: a block device for the export at URI (reached from
# alice's namespace), in $dev_NAME. nbdfuse runs in the root mount
# namespace (ip netns exec would give it a mount namespace of its own) but
# in alice's network namespace (nsenter --net), so TCP URIs of that
# namespace work too; a loop device with direct I/O on the FUSE file.
attach() {
	if [ -n "$DEV" ]; then
		set -- "$1" "$2" "$(echo "$DEV" | awk -v n="$(echo "$exports" | wc -w)" '{ print $(n + 1) }')"
		[ -n "$3" ] || { log "DEV has too few devices for $1"; return 1; }
		case $2 in
		nbd+unix:*)
			e=${2#nbd+unix:///}
			ip netns exec "$ns_a" nbd-client -unix "${2#*socket=}" "$3" -N "${e%%\?*}" >>"$tmp/nbd-client.log" 2>&1
			;;
		nbd://*)
			h=${2#nbd://}
			e=${h#*/}
			h=${h%%/*}
			ip netns exec "$ns_a" nbd-client "${h%:*}" "${h##*:}" "$3" -N "$e" >>"$tmp/nbd-client.log" 2>&1
			;;
		esac
		eval "dev_$1=$3"
		exports="$exports $1"
		raw "# export $1: $2 on $3 (nbd-client)"
		return 0
	fi
	mkdir -p "$tmp/fuse-$1"
	nsenter --net="/run/netns/$ns_a" nbdfuse "$tmp/fuse-$1" "$2" >>"$tmp/nbdfuse.log" 2>&1 &
	eval "fuse_pid_$1=$!"
	i=0
	until [ -f "$tmp/fuse-$1/nbd" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || { log "nbdfuse $1 did not mount"; return 1; }
		sleep 0.1
	done
	d=$(losetup -f --show --direct-io=on "$tmp/fuse-$1/nbd")
	eval "dev_$1=$d"
	exports="$exports $1"
	raw "# export $1: $2 through nbdfuse on $d (loop direct I/O: $(cat "/sys/block/${d#/dev/}/loop/dio" 2>/dev/null || echo '?'), $(blockdev --getsize64 "$d") bytes)"
}
detach() {
	eval "d=\${dev_$1:-}"
	[ -n "$d" ] || return 0
	if [ -n "$DEV" ]; then
		nbd-client -d "$d" >>"$tmp/nbd-client.log" 2>&1 || true
	else
		losetup -d "$d" 2>/dev/null || true
		# the loop device detaches asynchronously: EBUSY for a moment
		i=0
		until fusermount3 -u "$tmp/fuse-$1" 2>/dev/null; do
			i=$((i + 1))
			[ $i -lt 100 ] || { log "cannot unmount $tmp/fuse-$1"; break; }
			sleep 0.1
		done
		eval "p=\${fuse_pid_$1:-}"
		# nbdfuse exits once unmounted
		i=0
		while [ -n "$p" ] && kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		[ -z "$p" ] || stop_pid "$p"
	fi
	eval "dev_$1="
	exports=$(echo "$exports" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ')
}

cleanup() {
	set +e
	for x in $exports; do detach "$x"; done
	for n in a b m; do stop_node "$n"; done
	[ -z "$anchor_quorum_pid" ] || anchor_quorum_stop
	[ -z "$anchor_relay_pid" ] || anchor_relay_stop
	for p in $nbdkit_pid $recv_pid; do stop_pid "$p"; done
	if [ -n "$ns_made" ]; then
		ip netns del "$ns_a" 2>/dev/null
		ip netns del "$ns_b" 2>/dev/null
	fi
	[ -z "${KEEP_LOGS:-}" ] || { mkdir -p "$KEEP_LOGS" && cp "$tmp"/*.log "$KEEP_LOGS"/ 2>/dev/null; }
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

mkdir -p "$(dirname "$RAW")" "$tmp/bin"
: >"$RAW"
cp "$BUILD_DIR/replicator/tandemd" "$BUILD_DIR/replicator/tandemadm" "$tmp/bin/"

wait_sock() {
	i=0
	until [ -S "$1" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || { log "no socket $1"; return 1; }
		sleep 0.05
	done
}

busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $9; exit }' /proc/stat; }
pcpu() {
	if [ -n "$1" ] && [ -r "/proc/$1/stat" ]; then
		sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
	else
		echo 0
	fi
}
shuffle() { awk -v seed="$1" 'BEGIN { srand(seed) } { print rand() "\t" $0 }' | sort -n | cut -f2-; }

machine() {
	raw "# date $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	raw "# kernel $(uname -r); $(nproc) CPUs: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	raw "# memory $(free -g | awk '/^Mem:/ { print $2 " GiB" }'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	raw "# scratch $(df -T "$tmp" | awk 'NR == 2 { print $1 " " $2 }'); backing files of $SIZE_MB MiB, tio/commit region $REGION_MB MiB"
	raw "# fio $(fio --version), $(nbdkit --version), nbdfuse $(nbdfuse --version 2>/dev/null | head -1 | awk '{ print $NF }')"
	src=$(sed -n 's/^abs_top_srcdir = //p' "$BUILD_DIR/Makefile" 2>/dev/null | head -1)
	if [ -f "${src:-/nonexistent}/.tree-commit" ]; then
		# a snapshot (git archive) of a commit: its hash beside it
		tree="the snapshot of commit $(cut -c1-12 "$src/.tree-commit")"
	else
		tree="at $(git -C "${src:-$here}" rev-parse --short HEAD 2>/dev/null || echo '?') now$(git -C "${src:-$here}" diff --quiet HEAD -- replicator 2>/dev/null || echo ', replicator/ modified in the working tree')"
	fi
	raw "# tandemd from $BUILD_DIR (built $(date -u -r "$BUILD_DIR/replicator/tandemd" '+%Y-%m-%d %H:%M UTC'), sha256 $(sha256sum "$tmp/bin/tandemd" | cut -c1-12)); its source ${src:-?} is $tree"
}

# ------------------------------------------------------------ memory
# mem_one SIZE: a fresh tandemd (no network), its RSS with no resource up,
# then one resource on a sparse SIZE file, up, disconnected, primary --force
mem_one() {
	f=$tmp/m.img
	rm -f "$f"
	truncate -s "$1" "$f"
	mkdir -p "$tmp/run-m"
	cat >"$tmp/m.conf" <<-CONF
	resource m0 {
		net { cram-hmac-alg sha256; shared-secret "seeds-bench"; }
		on alice { device minor 9; disk $f; meta-disk internal; address 127.0.0.1:7799; }
		on bob { device minor 9; disk /dev/null; meta-disk internal; address 127.0.0.2:7799; }
	}
	CONF
	mctl() { timeout 120 "$tmp/bin/tandemadm" -c "$tmp/m.conf" --node alice --run-dir "$tmp/run-m" "$@"; }
	mctl create-md --force m0 >/dev/null 2>>"$tmp/mem.log" || { raw "fail sec=memory size=$1 step=create-md"; return 0; }
	rm -f "$tmp/run-m/tandemd.sock"
	"$tmp/bin/tandemd" -c "$tmp/m.conf" --node alice --run-dir "$tmp/run-m" -f >>"$tmp/tandemd-m.log" 2>&1 &
	pid_m=$!
	wait_sock "$tmp/run-m/tandemd.sock" || return 0
	sleep 0.5
	rss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid_m/status")
	anon0=$(awk '/^RssAnon/ { print $2 }' "/proc/$pid_m/status")
	t0=$(now_ms)
	if mctl up m0 >/dev/null 2>>"$tmp/mem.log" && { mctl disconnect m0 >/dev/null 2>&1 || true; } &&
		mctl primary --force m0 >/dev/null 2>>"$tmp/mem.log"; then
		t1=$(now_ms)
		sleep 1
		st=/proc/$pid_m/status
		sm=/proc/$pid_m/smaps_rollup
		bytes=$(stat -c %s "$f")
		raw "mem size=$1 bytes=$bytes bm_mib=$(echo "$bytes" | awk '{ printf "%.3f", $1 / 4096 / 8 / 1048576 }') rss0=$rss0 anon0=$anon0 rss=$(awk '/^VmRSS/ { print $2 }' "$st") anon=$(awk '/^RssAnon/ { print $2 }' "$st") file=$(awk '/^RssFile/ { print $2 }' "$st") hwm=$(awk '/^VmHWM/ { print $2 }' "$st") vsz=$(awk '/^VmSize/ { print $2 }' "$st") smaps_rss=$(awk '/^Rss:/ { print $2 }' "$sm") smaps_anon=$(awk '/^Anonymous:/ { print $2 }' "$sm") up_ms=$((t1 - t0)) disk=$(mctl dstate m0 2>/dev/null | head -1)"
		# the largest anonymous mappings: where the memory is
		awk '/^[0-9a-f]+-[0-9a-f]+ / { m = $0 } /^Rss:/ && $2 > 1024 { print $2 " kB: " m }' "/proc/$pid_m/smaps" |
			sort -rn | head -5 | sed "s/^/# mem $1 mapping: /" >>"$RAW"
		mctl down --force m0 >/dev/null 2>&1 || true
	else
		raw "fail sec=memory size=$1 step=up"
		tail -n 5 "$tmp/tandemd-m.log" | sed "s/^/# mem $1: /" >>"$RAW"
	fi
	stop_node m
	rm -f "$f"
}
memory() {
	log "memory: $MEM_SIZES"
	raw "# memory section: one resource, internal metadata, sparse file (truncate -s), create-md, up, disconnect, primary --force; RSS from /proc/PID/status 1 s later, minus the RSS of the same daemon before up"
	for s in $MEM_SIZES; do mem_one "$s"; done
}

if [ -n "$ONLY_MEMORY" ]; then
	machine
	memory
	report "$RAW"
	exit 0
fi

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
# shape on|off: HTB rate 1gbit on both ends of the veth
shape() {
	for e in "$ns_a $if_a" "$ns_b $if_b"; do
		# shellcheck disable=SC2086
		set -- $e "$1"
		ip netns exec "$1" tc qdisc del dev "$2" root 2>/dev/null || true
		[ "$3" = on ] || continue
		ip netns exec "$1" tc qdisc add dev "$2" root handle 1: htb default 10 r2q 1000
		ip netns exec "$1" tc class add dev "$2" parent 1: classid 1:10 htb rate 1gbit \
			ceil 1gbit burst 15k cburst 15k
	done
}

# ------------------------------------------------------------ the nodes
# one configuration for both nodes; P_rN and AL_rN are r0's and r1's
# protocol and al-extents
write_conf() {
	cat >"$tmp/t.conf" <<-CONF
	common {
		net { cram-hmac-alg sha256; shared-secret "seeds-bench"; connect-int 2; timeout 15; }
	}
	resource r0 {
		net { protocol $P_r0; }
		disk { al-extents $AL_r0; }
		on alice { device minor 0; disk $tmp/a0.img; meta-disk internal; address $ip_a:7789; }
		on bob { device minor 0; disk $tmp/b0.img; meta-disk internal; address $ip_b:7789; }
	}
	resource r1 {
		net { protocol $P_r1; }
		disk { al-extents $AL_r1; size $((SIZE_MB - 1))M; }
		on alice { device minor 1; disk $tmp/a1.img; meta-disk $tmp/a1.meta; address $ip_a:7790; }
		on bob { device minor 1; disk $tmp/b1.img; meta-disk internal; address $ip_b:7790; }
	}
	CONF
}
start_node() {
	mkdir -p "$tmp/run-$1"
	rm -f "$tmp/run-$1/tandemd.sock"
	ip netns exec "sdb-$1-$$" "$tmp/bin/tandemd" -c "$tmp/t.conf" --node "$(node "$1")" \
		--run-dir "$tmp/run-$1" -f >>"$tmp/tandemd-$1.log" 2>&1 &
	eval "pid_$1=$!"
	wait_sock "$tmp/run-$1/tandemd.sock"
}
logtail() {
	for n in a b; do
		echo "--- tandemd $(node "$n") (last lines)"
		tail -n "${2:-20}" "$tmp/tandemd-$n.log"
	done | sed "s/^/# $1: /" >>"$RAW"
}
alive() { kill -0 "$pid_a" 2>/dev/null && kill -0 "$pid_b" 2>/dev/null; }
# wait_synced RES SECONDS: alice Connected, both disks UpToDate
wait_synced() {
	lim=$(($2 * 10))
	i=0
	while :; do
		sa=$(ctl a status --json "$1" 2>/dev/null | jq -r '.resources[0] | .connection + " " + .volumes[0].disk + " " + .volumes[0].peer_disk') || sa=
		db=$(js b "$1" .volumes[0].disk 2>/dev/null) || db=
		[ "$sa $db" = "Connected UpToDate UpToDate UpToDate" ] && return 0
		i=$((i + 1))
		[ $i -lt "$lim" ] || { log "$1 not in sync after $2 s: alice $sa, bob $db"; return 1; }
		sleep 0.1
	done
}
# reconnect RES: the configuration again, disconnect and connect both
reconnect() {
	write_conf
	ctl a adjust "$1" >/dev/null && ctl b adjust "$1" >/dev/null || return 1
	ctl a disconnect "$1" >/dev/null 2>&1 || true
	ctl b disconnect "$1" >/dev/null 2>&1 || true
	ctl a connect "$1" >/dev/null && ctl b connect "$1" >/dev/null || return 1
	wait_synced "$1" 300
}
# set_mode RES C|B|A|SA: a connection takes its net options when it starts
set_mode() {
	[ -z "$broken" ] || return 1
	cur=
	eval "cur=\$mode_$1"
	[ "$2" != "$cur" ] || return 0
	if [ "$2" = SA ]; then
		if ctl a disconnect "$1" >/dev/null && ctl b disconnect "$1" >/dev/null &&
			[ "$(js a "$1" .connection)" = StandAlone ]; then
			eval "mode_$1=SA"
			return 0
		fi
	else
		eval "P_$1=$2"
		t0=$(now_ms)
		if reconnect "$1"; then
			[ "$cur" != SA ] || raw "catchup res=$1 to=$2 ms=$(($(now_ms) - t0))"
			eval "mode_$1=$2"
			return 0
		fi
	fi
	broken=1
	log "tandemd: cannot switch $1 to mode $2; tandemd targets are skipped from now on"
	raw "fail sec=mode res=$1 mode=$2 from=$cur alive=$(alive && echo yes || echo no)"
	logtail "mode-$1-$2"
	return 1
}
# counters RES: "al pending" of alice, then "pending" of bob
counters() {
	cx=$(ctl a status --json "$1" | jq -r '.resources[0].volumes[0].counters | "\(.al) \(.ap + .pe + .ua)"') || cx=
	cy=$(ctl b status --json "$1" | jq -r '.resources[0].volumes[0].counters | "\(.ap + .pe + .ua)"') || cy=
	echo "${cx:-0 0} ${cy:-0}"
}
# drain RES: until neither node has writes pending; prints the counters
drain() {
	i=0
	while :; do
		c=$(counters "$1")
		# shellcheck disable=SC2086
		set -- "$1" $c
		if [ "$3" = 0 ] && [ "$4" = 0 ]; then
			echo "$2"
			return 0
		fi
		i=$((i + 1))
		if [ $i -ge 300 ]; then
			log "drain: $1 still pending after 300 polls"
			echo "$2"
			return 0
		fi
		sleep 0.05
	done
}

# ------------------------------------------------------------ files
log "raw results: $RAW"
log "backing files: 6 x $SIZE_MB MiB in $tmp (zero-filling 4 of them)"
for x in a0 a1 r c; do
	dd if=/dev/zero of="$tmp/$x.img" bs=1M count="$SIZE_MB" oflag=direct conv=fsync status=none
done
fallocate -l "${SIZE_MB}M" "$tmp/b0.img"
# bob's r1 has internal metadata: 1 MiB more, and r1's size is 1 MiB less
# than SIZE_MB on both nodes (tandemd refuses a peer whose disk is smaller,
# even when neither has data yet)
fallocate -l "$((SIZE_MB + 1))M" "$tmp/b1.img"
dd if=/dev/zero of="$tmp/a1.meta" bs=1M count=16 conv=fsync status=none
write_conf
for n in a b; do
	for res in r0 r1; do
		ctl "$n" create-md --force "$res" >/dev/null 2>>"$tmp/setup.log" || { log "create-md $res failed: $(tail -1 "$tmp/setup.log")"; exit 1; }
	done
done
start_node a
start_node b
for res in r0 r1; do
	ctl a up "$res" >/dev/null
	ctl b up "$res" >/dev/null
done
for res in r0 r1; do
	i=0
	until [ "$(js a "$res" .connection)" = Connected ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || { logtail setup; log "the nodes did not connect ($res)"; exit 1; }
		sleep 0.1
	done
	# both sides read zeros: no initial sync
	ctl a new-current-uuid --clear-bitmap "$res" >/dev/null
	wait_synced "$res" 60 || { logtail setup; exit 1; }
	ctl a primary "$res" >/dev/null
	wait_sock "$tmp/run-a/$res.nbd"
done
# shellcheck disable=SC2034 # read through eval
mode_r0=C mode_r1=C
uri_r0="nbd+unix:///r0?socket=$tmp/run-a/r0.nbd"
uri_r1="nbd+unix:///r1?socket=$tmp/run-a/r1.nbd"

ip netns exec "$ns_b" nbdkit -f --exit-with-parent -i "$ip_b" -p 10809 file file="$tmp/c.img" \
	>>"$tmp/nbdkit.log" 2>&1 &
nbdkit_pid=$!
uri_nbdkit="nbd://$ip_b:10809/"
i=0
until ip netns exec "$ns_a" nbdinfo --size "$uri_nbdkit" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || { log "nbdkit did not start"; exit 1; }
	sleep 0.1
done

# the anchors of anchors.sh: the relay (nbdkit's nbd plugin in alice's
# namespace relaying to bob's nbdkit) and the quorum (qemu-storage-daemon
# in alice's namespace, a quorum of a local file and bob's nbdkit). The
# quorum's local child is the raw file: no other daemon has it open, and
# the raw target and the quorum never run at the same time.
have_relay=
have_quorum=
if [ -f "$here/anchors.sh" ]; then
	# shellcheck source=tests/perf/anchors.sh
	. "$here/anchors.sh"
	case " $TARGETS " in *" relay "*)
		if anchor_relay_start "$ns_a" "$tmp/relay.sock" "$uri_nbdkit" "$tmp/relay.log"; then
			have_relay=1
			uri_relay=$(anchor_uri "$tmp/relay.sock")
		fi ;;
	esac
	case " $TARGETS " in *" quorum "*)
		if anchor_quorum_start "$ns_a" "$tmp/quorum.sock" "$uri_nbdkit" "$tmp/r.img" "$tmp/quorum.log"; then
			have_quorum=1
			uri_quorum=$(anchor_uri "$tmp/quorum.sock")
		fi ;;
	esac
else
	raw "# no tests/perf/anchors.sh: the relay and quorum targets are left out"
fi
tg=
for t in $TARGETS; do
	case $t in
	relay) [ -n "$have_relay" ] || { raw "# target relay: not available"; continue; } ;;
	quorum) [ -n "$have_quorum" ] || { raw "# target quorum: not available"; continue; } ;;
	esac
	tg="$tg $t"
done
TARGETS=${tg# }

machine
raw "# targets $TARGETS"
raw "# workloads $WORKLOADS"
raw "# rounds $ROUNDS, fio $SECS s per run; dd: $DD1M_MB MiB per bs=1M run, $DD4K_MB MiB per bs=4k run"
raw "# tandemd: net { protocol X; connect-int 2; timeout 15; cram-hmac-alg sha256; } with the defaults otherwise (max-buffers 2048, al-extents 1237 outside the al section); r0 internal metadata, r1 external (a 16 MiB file)"
raw "# export size r0 $(js a r0 .volumes[0].size_sect) sectors, r1 $(js a r1 .volumes[0].size_sect) sectors"

# ------------------------------------------------------------ measuring
# the exports as block devices (dd and tio): tandemd's r0, nbdkit, anchors
for t in $TARGETS; do
	case $t in
	tandemd*) [ -n "${dev_td:-}" ] || attach td "$uri_r0" ;;
	nbdkit) attach nbdkit "$uri_nbdkit" ;;
	relay) attach relay "$uri_relay" ;;
	quorum) attach quorum "$uri_quorum" ;;
	esac
done

# where a target is, as a file or block device (dd, psync) or a URI (nbd)
devof() {
	case $1 in
	raw) echo "$tmp/r.img" ;;
	tandemd*) echo "$dev_td" ;;
	*) eval "echo \$dev_$1" ;;
	esac
}
uriof() {
	case $1 in
	tandemd*_external_*) echo "$uri_r1" ;;
	tandemd*) echo "$uri_r0" ;;
	*) eval "echo \$uri_$1" ;;
	esac
}
resof() { case $1 in tandemd*_external_*) echo r1 ;; *) echo r0 ;; esac; }

settle() {
	sync
	for sx in a0 a1 b0 b1 r c; do dd if="$tmp/$sx.img" iflag=nocache count=0 status=none; done
}

# fio_args TARGET WORKLOAD ROUND SECS
al_mb=$(($(js a r0 .volumes[0].size_sect) / 2048))
fio_args() {
	case $2 in
	tio_*)
		case $2 in tio_seq_*) rw="write" ;; *) rw="randwrite" ;; esac
		echo "--ioengine=psync --direct=1 --filename=$(devof "$1") --rw=$rw --bs=4k --size=128M" \
			"--offset_increment=128M --numjobs=${2##*_j} --randseed=$3 --runtime=$4 --time_based"
		;;
	commit16k)
		if [ "$1" = raw ]; then
			echo "--ioengine=psync --direct=1 --filename=$(devof raw)"
		else
			echo "--ioengine=nbd --uri=$(uriof "$1")"
		fi
		echo "--rw=randwrite --bs=16k --size=1G --iodepth=1 --fsync=1 --randseed=$3 --runtime=$4 --time_based"
		;;
	al_rand4k | al_warm)
		if [ "$1" = raw ]; then
			echo "--ioengine=psync --direct=1 --filename=$(devof raw)"
		else
			echo "--ioengine=nbd --uri=$(uriof "$1")"
		fi
		# al_warm: one 4 KiB write per 4 MiB extent, the whole device
		[ "$2" = al_warm ] && echo "--rw=write:4092k --bs=4k --size=${al_mb}M --number_ios=$((al_mb / 4))" ||
			echo "--rw=randwrite --bs=4k --size=${al_mb}M --iodepth=1 --randseed=$3 --runtime=$4 --time_based"
		;;
	*) log "unknown workload $2"; exit 1 ;;
	esac
}

# one SECTION ROUND SECS TARGET WORKLOAD: one run, one raw line (the
# variables are o_*: the callers' loops must keep theirs)
one() {
	o_sec=$1 o_r=$2 o_secs=$3 o_t=$4 o_wl=$5
	o_res=$(resof "$o_t")
	case $o_t in tandemd*) [ -z "$broken" ] || return 0 ;; esac
	settle
	case $o_t in tandemd*) o_c0=$(counters "$o_res") ;; *) o_c0="0 0 0" ;; esac
	o_a0=$(pcpu "$pid_a") o_bb0=$(pcpu "$pid_b")
	o_b0=$(busy)
	o_rc=0
	o_t0=$(now_ms)
	case $o_wl in
	dd*)
		case $o_wl in dd1m*) o_bs=1M o_n=$DD1M_MB ;; *) o_bs=4k o_n=$((DD4K_MB * 256)) ;; esac
		timeout 300 dd if=/dev/zero of="$(devof "$o_t")" bs="$o_bs" count="$o_n" oflag="${o_wl##*_}" \
			conv=notrunc,nocreat 2>"$tmp/dd.out" || o_rc=$?
		;;
	*)
		# shellcheck disable=SC2046
		timeout $((${o_secs%.*} + 120)) ip netns exec "$ns_a" fio --name=w --group_reporting \
			--output-format=json --output="$tmp/fio.json" $(fio_args "$o_t" "$o_wl" "$o_r" "$o_secs") \
			>>"$tmp/fio.log" 2>&1 || o_rc=$?
		;;
	esac
	o_t1=$(now_ms)
	o_b1=$(busy)
	if [ $o_rc -ne 0 ]; then
		log "failed (exit $o_rc): $o_t $o_wl"
		raw "fail sec=$o_sec round=$o_r target=$o_t wl=$o_wl rc=$o_rc"
		case $o_wl in dd*) sed 's/^/# dd: /' "$tmp/dd.out" >>"$RAW" ;; *) tail -n 5 "$tmp/fio.log" | sed 's/^/# fio: /' >>"$RAW" ;; esac
		case $o_t in tandemd*) logtail "$o_t-$o_wl"; alive || broken=1 ;; esac
		return 0
	fi
	o_d0=$(now_ms)
	case $o_t in tandemd*) o_al1=$(drain "$o_res") ;; *) o_al1=0 ;; esac
	o_d1=$(now_ms)
	sync
	o_a2=$(pcpu "$pid_a") o_bb2=$(pcpu "$pid_b")
	case $o_wl in
	dd*)
		# "N bytes (...) copied, S s, X MB/s"
		o_m=$(tail -1 "$tmp/dd.out" | awk -v bs="$o_bs" '{ b = $1; s = $(NF - 3); print b, (s > 0 ? b / s : 0), (s > 0 ? b / (bs == "1M" ? 1048576 : 4096) / s : 0), 0, 0, 0, 0, s * 1000 }')
		;;
	*)
		o_m=$(jq -r '.jobs[0] | [.write.io_bytes, .write.bw_bytes, .write.iops,
			(.write.clat_ns.percentile["50.000000"] // 0), (.write.clat_ns.percentile["99.000000"] // 0),
			(.sync.lat_ns.percentile["50.000000"] // 0), (.sync.lat_ns.percentile["99.000000"] // 0),
			.write.runtime] | @tsv' "$tmp/fio.json")
		;;
	esac
	echo "$o_m" | awk -v pre="run sec=$o_sec round=$o_r target=$o_t wl=$o_wl" -v sys="$((${o_b1% *} - ${o_b0% *}))" \
		-v tda="$((o_a2 - o_a0))" -v tdb="$((o_bb2 - o_bb0))" -v al="$((o_al1 - ${o_c0%% *}))" -v drain="$((o_d1 - o_d0))" \
		-v wall="$((o_t1 - o_t0))" '{
		printf "%s bytes=%s mbs=%.2f iops=%.0f wp50=%.1f wp99=%.1f fp50=%.1f fp99=%.1f ms=%s wall_ms=%s",
			pre, $1, $2 / 1e6, $3, $4 / 1000, $5 / 1000, $6 / 1000, $7 / 1000, $8, wall
		printf " sys=%d tda=%d tdb=%d al=%d alpw=%.4f drain_ms=%d\n", sys, tda, tdb, al,
			($1 > 0 ? al / ($1 / 4096) : 0), drain
	}' >>"$RAW"
}

mode_of() {
	case $1 in
	tandemd_sa) echo SA ;;
	tandemd_A) echo A ;;
	tandemd_B) echo B ;;
	tandemd_C) echo C ;;
	esac
}

# rounds FIRST LAST WORKLOADS SECS: the targets in blocks in a shuffled
# order (tandemd changes mode once per block), the workloads shuffled
# within a block; the order is read on fd 3 (no pipeline: set_mode
# changes shell variables)
rounds() {
	rd_r=$1
	while [ "$rd_r" -le "$2" ]; do
		log "round $rd_r of $2"
		raw "# round $rd_r: load average $(cut -d' ' -f1-3 /proc/loadavg)"
		for rd_blk in $(echo "$TARGETS" | tr ' ' '\n' | shuffle "$((rd_r * 7 + 1))"); do
			case $rd_blk in tandemd*) set_mode r0 "$(mode_of "$rd_blk")" || continue ;; esac
			for rd_w in $3; do
				case $rd_w in dd*) rd_sec="dd" ;; tio*) rd_sec="tio" ;; commit*) rd_sec="commit" ;; esac
				echo "$rd_sec $rd_w"
			done | shuffle "$((rd_r * 13 + ${#rd_blk}))" >"$tmp/order"
			while read -r rd_sec rd_w <&3; do
				one "$rd_sec" "$rd_r" "$4" "$rd_blk" "$rd_w"
			done 3<"$tmp/order"
		done
		rd_r=$((rd_r + 1))
	done
}

# ------------------------------------------------------------ link
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
link_rate() {
	i=1
	while [ $i -le 3 ]; do
		: >"$tmp/recv.out"
		ip netns exec "$ns_b" "$py" -c "$PY_RECV" "$ip_b" 5201 >"$tmp/recv.out" 2>>"$tmp/py.log" &
		recv_pid=$!
		j=0
		until grep -q listening "$tmp/recv.out"; do
			j=$((j + 1))
			[ $j -lt 100 ] || { log "no TCP receiver"; return 1; }
			sleep 0.05
		done
		ip netns exec "$ns_a" "$py" -c "$PY_SEND" "$ip_b" 5201 2 2>>"$tmp/py.log"
		wait "$recv_pid" || true
		recv_pid=
		tail -1 "$tmp/recv.out" | awk -v pre="link rep=$i" '{
			printf "%s bytes=%s secs=%.3f mbs=%.1f\n", pre, $1, $2, $1 / $2 / 1e6 }' >>"$RAW"
		i=$((i + 1))
	done
}

# ------------------------------------------------------------ al
# al_config RES EXTENTS: alice's RES down and up again with al-extents
# EXTENTS (read at attach); Primary again, the mode to be set anew
al_config() {
	cur=
	eval "cur=\$AL_$1"
	[ "$cur" != "$2" ] || return 0
	eval "AL_$1=$2"
	# tandemd reads the configuration at start and on adjust; a resource
	# that is down takes the new settings at once
	if ctl a down "$1" >/dev/null 2>>"$tmp/al.log" && write_conf && ctl a adjust "$1" >/dev/null 2>>"$tmp/al.log" &&
		ctl a up "$1" >/dev/null 2>>"$tmp/al.log" &&
		ctl a primary "$1" >/dev/null 2>>"$tmp/al.log" && wait_sock "$tmp/run-a/$1.nbd"; then
		eval "mode_$1=none"
		return 0
	fi
	broken=1
	raw "fail sec=al res=$1 step=al-extents-$2 $(tail -1 "$tmp/al.log")"
	logtail "al-$1-$2"
	return 1
}
al_section() {
	al_r=1
	while [ "$al_r" -le "$AL_ROUNDS" ]; do
		log "al round $al_r of $AL_ROUNDS"
		raw "# al round $al_r: load average $(cut -d' ' -f1-3 /proc/loadavg)"
		{
			for t in $TARGETS; do
				case $t in tandemd*) ;; *) echo "anchor $t" ;; esac
			done
			for meta in internal external; do
				for e in $AL_EXTENTS; do echo "cell $meta $e"; done
			done
		} | shuffle "$((al_r * 17 + 3))" >"$tmp/al-order"
		while read -r al_kind al_x al_e <&4; do
			if [ "$al_kind" = anchor ]; then
				one al "$al_r" "$SECS" "$al_x" al_rand4k
				continue
			fi
			[ "$al_x" = internal ] && al_res=r0 || al_res=r1
			al_config "$al_res" "$al_e" || continue
			for al_m in $(echo "$AL_MODES" | tr ' ' '\n' | shuffle "$((al_r * 5 + al_e))"); do
				set_mode "$al_res" "$al_m" || continue
				# warm: every extent once (discarded), then the timed run
				one al 0 0 "tandemd_${al_m}_${al_x}_$al_e" al_warm
				one al "$al_r" "$SECS" "tandemd_${al_m}_${al_x}_$al_e" al_rand4k
			done
		done 4<"$tmp/al-order"
		al_r=$((al_r + 1))
	done
}

# ------------------------------------------------------------ main
shape on
link_rate
raw "# link: veth between two network namespaces, tc HTB rate 1gbit ceil 1gbit burst 15k on both ends"
rounds 0 0 "dd1m_direct commit16k" 1
rounds 1 "$ROUNDS" "$WORKLOADS" "$SECS"
for x in $exports; do detach "$x"; done
if [ "$AL" = 1 ]; then
	raw "# al section: al-extents $AL_EXTENTS, modes $AL_MODES, $AL_ROUNDS rounds, the whole device ($al_mb MiB, $((al_mb / 4)) extents of 4 MiB)"
	al_section
fi
for n in a b; do
	raw "# tandemd $(node "$n") log: $(grep -c . "$tmp/tandemd-$n.log") lines, $(grep -ci 'error\|fail\|lost' "$tmp/tandemd-$n.log") with error/fail/lost"
	grep -i 'error\|assert\|abort' "$tmp/tandemd-$n.log" | head -10 | sed "s/^/# tandemd $(node "$n"): /" >>"$RAW"
done
[ "$MEMORY" != 1 ] || memory
raw "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
raw "# elapsed $(($(date +%s) - start)) s"
report "$RAW" | tee "${RAW%.txt}.md"
if command -v gnuplot >/dev/null 2>&1; then
	plot "$RAW" "$PLOTS" && log "plots in $PLOTS"
fi
log "raw results: $RAW, tables: ${RAW%.txt}.md"

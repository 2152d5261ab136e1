# al-report.awk: the Markdown tables of doc/perf-al.md from the raw lines of
# run-al-bench.sh (key=value pairs; round 0 is the discarded warm-up).
#
#   al-bench ... set=main|side round=R   one timed run
#   cg scenario=S al=N writes=W ir_*=... one callgrind run
#
# Per cell: the median over rounds and the min-max spread of each number;
# ratios are taken within a round (cell / anchor of the same workload and
# round), then their median.

function kv(    i, p) {
	delete f
	for (i = 1; i <= NF; i++)
		if ((p = index($i, "=")) > 0)
			f[substr($i, 1, p - 1)] = substr($i, p + 1)
}

# Median and spread of the values in list (space-separated).
function stats(list,    v, n, i, j, t) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	s_min = v[1]; s_max = v[n]; s_n = n
	s_med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}

function add(key, name, val) {
	acc[key, name] = acc[key, name] " " val
}

function show(key, name, fmt) {
	stats(acc[key, name])
	return sprintf(fmt " (" fmt "–" fmt ")", s_med, s_min, s_max)
}

# show(), or a dash when the cell wrote no transaction at all
function show_tr(key) {
	stats(acc[key, "trus"])
	return s_max + 0 == 0 ? "—" : show(key, "trus", "%.0f")
}

function med(key, name, fmt) {
	stats(acc[key, name])
	return sprintf(fmt, s_med)
}

function wl_rank(w) {
	return (w ~ /^rand/) + 2 * (w ~ /-b/)
}

function md_rank(m) {
	return m == "none" ? 0 : m == "internal" ? 1 : 2
}

# order[] by rank[], insertion sort
function sort_cells(    i, j, t) {
	for (i = 2; i <= ncell; i++)
		for (j = i; j > 1 && rank[order[j - 1]] > rank[order[j]]; j--) {
			t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
		}
}

$1 == "al-bench" {
	kv()
	if (f["round"] == 0)
		next
	key = f["set"] SUBSEP f["workload"] SUBSEP f["md"] SUBSEP f["al"] SUBSEP f["opts"]
	if (!(key in seen)) {
		seen[key] = 1
		order[++ncell] = key
		rank[key] = sprintf("%s %d %d %d %05d", f["set"], wl_rank(f["workload"]),
				    f["opts"] ~ /buffered/, md_rank(f["md"]) + 3 * (f["opts"] ~ /dsync/),
				    f["al"])
	}
	add(key, "wps", f["wps"])
	add(key, "mean", f["mean_us"])
	add(key, "p99", f["p99_us"])
	add(key, "tpw", f["tr_per_write"])
	add(key, "trus", f["tr_mean_us"])
	run[key, f["round"]] = f["wps"] " " f["p99_us"]
	if (!((f["set"], f["round"]) in rounds))
		nrounds[f["set"]]++
	rounds[f["set"], f["round"]] = 1
	next
}

$1 == "flush" {
	kv()
	if (!(f["kib"] in fl_seen)) {
		fl_seen[f["kib"]] = 1
		fl_kib[++nfl] = f["kib"]
	}
	fl[f["kib"], f["when"]] = sprintf("%d (%d–%d)", f["median_us"], f["min_us"], f["max_us"])
	next
}

$1 == "cg" {
	kv()
	cg[++ncg] = sprintf("| %s | %s | %d | %.0f | %.0f | %.0f | %.0f | %s |", f["al"],
			    f["scenario"], f["writes"], f["ir_total"] / f["writes"],
			    f["ir_begin"] / f["writes"], f["ir_commit"] / f["writes"],
			    f["ir_complete"] / f["writes"], f["native_ns"] == "" ? "—" : f["native_ns"])
	next
}

END {
	for (i = 1; i <= ncell; i++) {
		split(order[i], k, SUBSEP)
		ao = k[5]
		sub(/,?al-dsync/, "", ao)
		anchor = k[1] SUBSEP k[2] SUBSEP "none" SUBSEP 0 SUBSEP (ao == "" ? "-" : ao)
		for (r = 1; r <= nrounds[k[1]]; r++) {
			if (!((order[i], r) in run) || !((anchor, r) in run))
				continue
			split(run[order[i], r], a, " ")
			split(run[anchor, r], b, " ")
			add(order[i], "ratio", a[1] / b[1])
			add(order[i], "p99ratio", a[2] / b[2])
		}
	}

	sort_cells()
	print "### Timed runs (median of " nrounds["main"] " rounds, min–max in parentheses)"
	print ""
	print "| workload | metadata | al-extents | AL tr/write | writes/s | writes/s ÷ anchor | mean µs | p99 µs | p99 ÷ anchor | µs per AL tr |"
	print "|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= ncell; i++) {
		split(order[i], k, SUBSEP)
		if (k[1] != "main")
			continue
		none = k[3] == "none"
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k[2],
		       none ? "**anchor** (no AL)" : k[3], none ? "—" : k[4],
		       none ? "—" : med(order[i], "tpw", "%.4f"), show(order[i], "wps", "%.0f"),
		       none ? "1" : show(order[i], "ratio", "%.3f"), show(order[i], "mean", "%.1f"),
		       show(order[i], "p99", "%.0f"), none ? "1" : show(order[i], "p99ratio", "%.2f"),
		       none ? "—" : show_tr(order[i])
	}

	side = 0
	for (i = 1; i <= ncell; i++) {
		split(order[i], k, SUBSEP)
		if (k[1] != "side")
			continue
		if (!side++) {
			print ""
			print "### Side experiment: how a transaction is made durable (median of " \
			      nrounds["side"] " rounds)"
			print ""
			print "| workload | data writes | metadata | AL write | al-extents | AL tr/write | writes/s | writes/s ÷ anchor | µs per AL tr |"
			print "|---|---|---|---|---|---|---|---|---|"
		}
		none = k[3] == "none"
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k[2],
		       k[5] ~ /buffered/ ? "buffered" : "O_DIRECT", none ? "**anchor** (no AL)" : k[3],
		       none ? "—" : k[5] ~ /al-dsync/ ? "O_DIRECT + RWF_DSYNC" : "md_write_al_block",
		       none ? "—" : k[4], none ? "—" : med(order[i], "tpw", "%.4f"),
		       show(order[i], "wps", "%.0f"), none ? "1" : show(order[i], "ratio", "%.3f"),
		       none ? "—" : show_tr(order[i])
	}

	if (nfl) {
		print ""
		print "### fdatasync after N KiB of O_DIRECT writes (µs, median and min–max of 15)"
		print ""
		print "| KiB written before the flush | before the rounds | after the rounds |"
		print "|---|---|---|"
		for (i = 1; i <= nfl; i++)
			printf "| %s | %s | %s |\n", fl_kib[i], fl[fl_kib[i], "before"],
			       fl[fl_kib[i], "after"]
	}

	if (ncg) {
		print ""
		print "### CPU cost of the bookkeeping (callgrind, Ir per write)"
		print ""
		print "| al-extents | scenario | writes | Ir/write (all) | al_begin_io | al_commit | al_complete_io | ns/write native (one run, noisy) |"
		print "|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= ncg; i++)
			print cg[i]
	}
}

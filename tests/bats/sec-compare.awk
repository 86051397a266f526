# The comparison of 85-security's sec_attack, in one process (a bash loop
# over the rows costs a minute in the guest: bats traces its every step).
#   awk -v subject=NAME -v nested=0|1 -v exact=0|1 -v gapfile=PATH \
#       -v stricterfile=PATH -v notes=PATH [-v userns=1] \
#       -f sec-compare.awk WANT REF SUBJ
# WANT is the table (lfs-attack expect), REF overlay's run and SUBJ the
# subject's (lfs-attack run): a block per row, "ROW: results" and then
# lines of state that start with two spaces.  Overlay's results must be
# the table's; the subject's blocks must be overlay's, or stricter: a call
# refused (an errno) where overlay's was "ok" or refused with another
# errno, every other call the same, and the mount unchanged.  Through
# the nested stacks (nested=1), a row where overlay over overlay cannot
# change an ACL (EOPNOTSUPP where the table has none) is checked against
# the table and its name appended to gapfile; the names of the rows where
# the subject was stricter are appended to stricterfile.  With exact=1 the
# subject may not be stricter: its blocks must be overlay's (where the
# errno itself is the answer: ENOENT for EACCES would tell that a name
# the caller may not look up is not there).  With userns=1 (the rows ran
# inside a user namespace, where root's rows and trusted.* differ from the
# table by the kernel's rules) overlay is the reference alone: a row where
# it differs from the table is a note, and its name goes to gapfile.
# Prints what differs; notes go to notes; exits 1 on any difference.

function add(file, line,    row) {
	if (line ~ /^  /) {
		block[file, cur[file]] = block[file, cur[file]] "\n" line
		return
	}
	row = line
	sub(/: .*/, "", row)
	cur[file] = row
	n[file]++
	order[file, n[file]] = row
	block[file, row] = line
	first[file, row] = line
}

function show(title, a, b,    i, k, la, lb) {
	print "--- row " title
	k = split(a, la, "\n")
	for (i = 1; i <= k; i++)
		print "-" la[i]
	k = split(b, lb, "\n")
	for (i = 1; i <= k; i++)
		print "+" lb[i]
}

function gap(w, r) {
	return r ~ / (setacl|rmacl):EOPNOTSUPP/ && w !~ / (setacl|rmacl):EOPNOTSUPP/
}

# the subject's block s refused at least one call of the reference's
# block r that r made or refused otherwise, agreed on every other one, and
# left the mount unchanged
function stricter(r, s,    fr, fs, nr, ns, i, p, refused) {
	if (index(s, "\n  mount: unchanged") == 0)
		return 0
	nr = split(substr(r, 1, index(r "\n", "\n") - 1), fr, " ")
	ns = split(substr(s, 1, index(s "\n", "\n") - 1), fs, " ")
	if (nr != ns)
		return 0
	refused = 0
	for (i = 2; i <= nr; i++) {
		if (fr[i] == fs[i])
			continue
		# a call refused where overlay's worked, or refused for
		# another reason where overlay's was refused too
		p = fr[i]
		if (p !~ /:(ok|E[A-Z0-9]+)$/)
			return 0
		sub(/:[^:]*$/, "", p)
		if (index(fs[i], p ":E") != 1)
			return 0
		refused = 1
	}
	return refused
}

BEGIN {
	for (i = 1; i <= 3; i++)
		idx[ARGV[i]] = i
}
{ add(idx[FILENAME], $0) }

END {
	bad = 0
	if (n[2] != n[1] || n[3] != n[1]) {
		printf "the table has %d rows, overlay ran %d, %s %d\n", n[1], n[2], subject, n[3]
		bad = 1
	}
	for (i = 1; i <= n[1]; i++) {
		row = order[1, i]
		w = block[1, row]
		r = block[2, row]
		s = block[3, row]
		g = 0
		if (first[2, row] != w) {
			if (userns) {
				rl = first[2, row]
				sub(/^[^:]*: /, "", rl)
				printf "# %s: overlay in the user namespace gives %s\n", row, rl >>notes
				print row >>gapfile
			} else if (nested && gap(w, first[2, row])) {
				g = 1
				print row >>gapfile
			} else {
				show(row ": the table (-) and overlay (+) differ", w, first[2, row])
				bad = 1
			}
		}
		if (r == s)
			continue
		if (g) {
			rl = first[2, row]
			sub(/^[^:]*: /, "", rl)
			printf "# %s: overlay over overlay gives %s; %s checked against the table\n", row, rl, subject >>notes
			if (first[3, row] == w)
				continue
			show(row ": the table (-) and " subject " (+) differ", w, first[3, row])
			bad = 1
			continue
		}
		if (!exact && stricter(r, s)) {
			printf "# %s: %s refuses what overlay allows\n", row, subject >>notes
			print row >>stricterfile
			continue
		}
		show(row ": overlay (-) and " subject " (+) differ", r, s)
		bad = 1
	}
	exit bad
}

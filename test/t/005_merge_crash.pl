# A crash at every step of a merge (simhash.debug_merge_crash_step makes the merging backend PANIC
# right after it): after recovery the index verifies and answers exactly like a sequential scan;
# the pages a crashed merge leaves behind (a new run written before the swap, step 3, or a retired
# set half freed when it was recycled, step 5) are accounted for by nothing until the next VACUUM,
# which reclaims them; a crash at the other steps leaves nothing behind. A stale free space map
# and all-zero pages at the end of the file are reclaimed too. The same for the rewrite of a run
# whose directory is wider than 16 bits.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('merge_crash');
$node->init;
$node->append_conf('postgresql.conf', "fsync = on\nautovacuum = off\nrestart_after_crash = on\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION simhash;
CREATE TABLE docs (id int, fp bigint);
INSERT INTO docs SELECT g, hashtextextended('doc' || g, 0) FROM generate_series(1, 20000) g;
CREATE INDEX docs_fp ON docs USING simhash (fp);
});

my $cmp = q{
SELECT string_agg(n::text, ',' ORDER BY q, k) FROM (
    SELECT q, k, (SELECT count(*) FROM docs WHERE hamming(fp, hashtextextended('doc' || q, 0)) <= k) AS n
    FROM generate_series(1, 20) q, generate_series(0, 6) k) x;
};
my $orphans = q{SELECT unaccounted_pages FROM simhash_index_info('docs_fp')};

# Waits for the server to accept queries again after a crash. A psql started while the
# postmaster restarts can exit before reading its query, and IPC::Run then dies writing it
# ("ack Broken pipe"): such an attempt is retried.
sub wait_for_restart {
	my ($label) = @_;
	for my $attempt (1 .. 5) {
		return if eval { $node->poll_query_until('postgres', 'SELECT true') };
		sleep(1);
	}
	die "server did not come back: $label";
}

# VACUUM `table` with the merge crashing after `step`; waits for the server to come back.
sub vacuum_crashing {
	my ($table, $step, $label) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "SET simhash.debug_merge_crash_step = $step; VACUUM $table;");
	like($err, qr/server closed the connection|terminating connection|crashing after merge step/,
		"$label: the merging backend crashed");
	wait_for_restart($label);
}

# The index verifies and answers `cmp` as a sequential scan does; returns the sequential answer.
sub index_sound {
	my ($index_name, $cmp, $label) = @_;
	is($node->safe_psql('postgres', "SELECT simhash_index_check('$index_name')"), '', "$label: index verifies");
	my $index = $node->safe_psql('postgres', "SET enable_seqscan = off; $cmp");
	my $seq = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $cmp");
	is($index, $seq, "$label: index answers equal a seq scan");
}

for my $step (1 .. 5) {
	# Something to merge: pending entries (inserts) and dead entries (deletes); the transaction IDs
	# they take let the sets retired by the previous VACUUM be recycled in this one.
	$node->safe_psql('postgres', qq{
INSERT INTO docs SELECT 100000 * $step + g, hashtextextended('doc' || g, $step) # (1::bigint << (g % 64))
    FROM generate_series(1, 2000) g;
DELETE FROM docs WHERE id % 50 = $step;
});
	vacuum_crashing('docs', $step, "step $step");
	index_sound('docs_fp', $cmp, "step $step, after recovery");
	my $left = $node->safe_psql('postgres', $orphans);
	ok(($step == 3 || $step == 5) ? $left > 0 : $left == 0, "step $step: $left unaccounted pages after the crash");

	$node->safe_psql('postgres', 'VACUUM docs');
	is($node->safe_psql('postgres', $orphans), '0', "step $step: VACUUM reclaimed the unaccounted pages");
	index_sound('docs_fp', $cmp, "step $step, after VACUUM");
}

# Freed pages are reused: once what is retired has been recycled, the next merge takes its pages
# from the FSM instead of extending the index.
$node->safe_psql('postgres', 'SELECT txid_current(); VACUUM docs;');
my ($free_before, $total_before) = split /\|/,
	$node->safe_psql('postgres', "SELECT free_pages, total_pages FROM simhash_index_info('docs_fp')");
ok($free_before > 0, "free pages after recycling ($free_before)");
$node->safe_psql('postgres', 'INSERT INTO docs SELECT 900000 + g, hashtextextended(g::text, 9) FROM generate_series(1, 2000) g; VACUUM docs;');
my ($free_after, $total_after) = split /\|/,
	$node->safe_psql('postgres', "SELECT free_pages, total_pages FROM simhash_index_info('docs_fp')");
ok($free_after < $free_before, "the merge reused free pages ($free_before free before, $free_after after)");

# The FSM is not WAL-logged: a checkpoint writes it listing free pages, an insert's merge then
# writes its new run into some of them and crashes before the swap, and after recovery the FSM
# still lists those pages as free. VACUUM must not take its word for it.
$node->safe_psql('postgres', q{
CREATE TABLE fsm_docs (id bigint, fp bigint);
INSERT INTO fsm_docs SELECT g, hashint8extended(g, 1) FROM generate_series(1, 200000) g;
CREATE INDEX fsm_docs_fp ON fsm_docs USING simhash (fp);
INSERT INTO fsm_docs SELECT g, hashint8extended(g, 1) FROM generate_series(200001, 260000) g;
DELETE FROM fsm_docs WHERE id <= 60000;
});
$node->safe_psql('postgres', 'VACUUM fsm_docs;');
$node->safe_psql('postgres', 'SELECT txid_current(); VACUUM fsm_docs; CHECKPOINT;');
my $fsm_orphans = q{SELECT unaccounted_pages FROM simhash_index_info('fsm_docs_fp')};
my ($ret, $out, $err) = $node->psql('postgres',
	'SET simhash.debug_merge_crash_step = 3; INSERT INTO fsm_docs SELECT g, hashint8extended(g, 1) FROM generate_series(300001, 330000) g;');
like($err, qr/server closed the connection|terminating connection|crashing after merge step/,
	'a merge writing into pages from the FSM crashed');
wait_for_restart('the merge writing into pages from the FSM');
my $left = $node->safe_psql('postgres', $fsm_orphans);
ok($left > 0, "$left unaccounted pages after the crash");
$node->safe_psql('postgres', 'SELECT txid_current(); VACUUM fsm_docs;');
is($node->safe_psql('postgres', $fsm_orphans), '0', 'VACUUM reclaimed them although the FSM lists them as free');
is($node->safe_psql('postgres', "SELECT simhash_index_check('fsm_docs_fp')"), '', 'that index verifies');

# A server stopped after extending the index and before the new page's WAL was flushed leaves an
# all-zero page at the end of the file (smgrextend writes zeros at once). Such pages, made here by
# appending them to the stopped server's file, are reused: VACUUM's reclaim walk records them in the
# free space map, where inserts and merges look for pages.
SKIP: {
	# pg_freespacemap (contrib) shows what the free space map lists.
	skip 'pg_freespacemap is not installed', 4
		unless $node->safe_psql('postgres', "SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_freespacemap'");
	my $zero_pages = 24;
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_freespacemap');
	my $first_zero = $node->safe_psql('postgres', "SELECT pg_relation_size('fsm_docs_fp') / 8192");
	my $index_file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('fsm_docs_fp')");
	$node->stop;
	open(my $fh, '>>', $index_file) or die "cannot open $index_file: $!";
	binmode $fh;
	print $fh "\0" x (8192 * $zero_pages);
	close($fh);
	$node->start;
	my $zero_listed = qq{SELECT count(*) FROM generate_series($first_zero, $first_zero + $zero_pages - 1) b
	    WHERE pg_freespace('fsm_docs_fp', b) > 0};
	is($node->safe_psql('postgres', $zero_listed), '0', "the $zero_pages all-zero pages are not in the free space map");
	$node->safe_psql('postgres', 'VACUUM fsm_docs;');
	is($node->safe_psql('postgres', $zero_listed), $zero_pages, 'VACUUM recorded them there');
	is($node->safe_psql('postgres', "SELECT unaccounted_pages FROM simhash_index_info('fsm_docs_fp')"), '0',
		'no page is unaccounted for');
	$node->safe_psql('postgres', 'INSERT INTO fsm_docs SELECT g, hashint8extended(g, 2) FROM generate_series(400001, 410000) g; VACUUM fsm_docs;');
	is($node->safe_psql('postgres', "SELECT simhash_index_check('fsm_docs_fp')"), '', 'that index verifies after more inserts and a merge');
}

# Runs with directories wider than 16 bits (3 tables: log2(entries / 4) bits, 19 at 1.2M entries):
# VACUUM rewrites such a run once a fifth of it is dead, writing a new wide run; a crash at every
# step of that rewrite leaves an index that verifies and answers like a sequential scan, and the
# next VACUUM completes the rewrite.
$node->safe_psql('postgres', q{
CREATE TABLE wide (id int, fp bigint);
INSERT INTO wide SELECT g, hashint8extended(g, 3) FROM generate_series(1, 1200000) g;
CREATE INDEX wide_fp ON wide USING simhash (fp) WITH (tables = 3);
});
my $wide_cmp = q{
SELECT string_agg(n::text, ',' ORDER BY q, k) FROM (
    SELECT q, k, (SELECT count(*) FROM wide WHERE hamming(fp, hashint8extended(q, 3) # 5) <= k) AS n
    FROM generate_series(1, 200000, 9973) q, generate_series(0, 8, 2) k) x;
};
my $wide_dirbits = q{SELECT max(dirbits) FROM simhash_index_runs('wide_fp')};
is($node->safe_psql('postgres', $wide_dirbits), '19', 'the built run has a 19-bit directory');
for my $step (1 .. 5) {
	$node->safe_psql('postgres', "DELETE FROM wide WHERE hashint4(id + $step) % 4 = 0");
	vacuum_crashing('wide', $step, "wide run, step $step");
	index_sound('wide_fp', $wide_cmp, "wide run, step $step, after recovery");
	$node->safe_psql('postgres', 'VACUUM wide');
	index_sound('wide_fp', $wide_cmp, "wide run, step $step, after VACUUM");
	cmp_ok($node->safe_psql('postgres', $wide_dirbits), '>', 16, "wide run, step $step: the rewritten run's directory is wider than 16 bits");
}

is($node->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'index verifies at the end');
$node->stop;
done_testing();

# A crash at every step of a merge (simhash.debug_merge_crash_step makes the merging backend PANIC
# right after it): after recovery the index verifies and answers exactly like a sequential scan,
# the pages the crashed merge left behind (new tables before the swap, old ones after it) are
# unreachable until the next VACUUM, and that VACUUM reclaims them.
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
my $orphans = q{SELECT data_pages + ref_pages + directory_pages + map_pages - table_pages FROM simhash_index_info('docs_fp')};

for my $step (1 .. 5) {
	# Something to merge: pending entries (inserts) and dead entries (deletes).
	$node->safe_psql('postgres', qq{
INSERT INTO docs SELECT 100000 * $step + g, hashtextextended('doc' || g, $step) # (1::bigint << (g % 64))
    FROM generate_series(1, 2000) g;
DELETE FROM docs WHERE id % 50 = $step;
});
	my ($ret, $out, $err) = $node->psql('postgres', "SET simhash.debug_merge_crash_step = $step; VACUUM docs;");
	like($err, qr/server closed the connection|terminating connection|crashing after merge step/,
		"step $step: the merging backend crashed");
	$node->poll_query_until('postgres', 'SELECT true') or die "server did not come back after step $step";

	is($node->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', "step $step: index verifies after recovery");
	my $index = $node->safe_psql('postgres', "SET enable_seqscan = off; $cmp");
	my $seq = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $cmp");
	is($index, $seq, "step $step: index answers equal a seq scan after recovery");
	my $left = $node->safe_psql('postgres', $orphans);
	ok($step >= 3 ? $left > 0 : $left == 0, "step $step: $left unreachable table pages after the crash");

	$node->safe_psql('postgres', 'VACUUM docs');
	is($node->safe_psql('postgres', $orphans), '0', "step $step: VACUUM reclaimed the unreachable pages");
	is($node->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', "step $step: index verifies after VACUUM");
	$index = $node->safe_psql('postgres', "SET enable_seqscan = off; $cmp");
	$seq = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $cmp");
	is($index, $seq, "step $step: index answers equal a seq scan after VACUUM");
}

# Freed pages are reused: inserting and merging again does not grow the index past what the
# reclaimed space holds.
my $before = $node->safe_psql('postgres', "SELECT total_pages FROM simhash_index_info('docs_fp')");
$node->safe_psql('postgres', 'INSERT INTO docs SELECT 900000 + g, hashtextextended(g::text, 9) FROM generate_series(1, 2000) g; VACUUM docs;');
my $after = $node->safe_psql('postgres', "SELECT total_pages FROM simhash_index_info('docs_fp')");
ok($after <= $before, "merges reuse freed pages ($before pages before, $after after)");
$node->stop;
done_testing();

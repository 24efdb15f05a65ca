# Bulk near-dedup loads (simhash_insert_distinct) under stress and across a crash:
#  - four loaders at once, two loading batches with simhash_insert_distinct and two loading rows
#    through the simhash_dedup trigger, all offering near-duplicates of one shared pool of
#    fingerprints: no transaction fails (no deadlock), and afterwards no two rows of the table lie
#    within the radius;
#  - an immediate stop in the middle of a load: after recovery none of its rows is there, the
#    index verifies and answers like a sequential scan, and the same load then runs to its end.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('bulk');
$node->init;
$node->append_conf('postgresql.conf', "fsync = on\nautovacuum = off\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION simhash;
CREATE TABLE lib (id bigserial PRIMARY KEY, fp bigint NOT NULL);
CREATE INDEX lib_fp ON lib USING simhash (fp) WITH (pending_limit = 64);
CREATE TRIGGER lib_dedup BEFORE INSERT ON lib FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
});

# Every transaction offers fingerprints within 0-2 bits of members of a pool of 3000.
my $dir = PostgreSQL::Test::Utils::tempdir();
open(my $fh, '>', "$dir/bulk.sql") or die;
print $fh q{SELECT * FROM simhash_insert_distinct('lib',
    'SELECT hashtextextended(''pool'' || (random() * 3000)::int, 0) # (1::bigint << (random() * 63)::int)
            # (1::bigint << (random() * 63)::int) AS fp FROM generate_series(1, 200)', 3);
};
close $fh;
open($fh, '>', "$dir/rows.sql") or die;
print $fh q{BEGIN;
INSERT INTO lib (fp) VALUES (hashtextextended('pool' || (random() * 3000)::int, 0) # (1::bigint << (random() * 63)::int));
INSERT INTO lib (fp) VALUES (hashtextextended('pool' || (random() * 3000)::int, 0) # (1::bigint << (random() * 63)::int));
INSERT INTO lib (fp) VALUES (hashtextextended('pool' || (random() * 3000)::int, 0) # (1::bigint << (random() * 63)::int));
COMMIT;
};
close $fh;

# pgbench stops a client at its first failed transaction and exits non-zero: a deadlock (40P01)
# or any other error fails the run. deadlock_timeout is short so that a deadlock would show.
$node->safe_psql('postgres', "ALTER SYSTEM SET deadlock_timeout = '20ms'");
$node->reload;
$node->pgbench(
	"-n -c 4 -j 2 -T 20 -f $dir/bulk.sql\@1 -f $dir/rows.sql\@1",
	0,
	[qr{processed: [1-9]}],
	[qr{^$}],
	'bulk and trigger loaders of near-duplicates run together without an error');

my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM lib');
ok($rows > 500, "the loaders inserted rows ($rows)");
is($node->safe_psql('postgres', q{
SET enable_seqscan = off;
SELECT count(*) FROM lib a JOIN lib b ON hamming(a.fp, b.fp) <= 3 AND a.id < b.id}),
	'0', 'no two rows within 3 bits after the concurrent loads');
is($node->safe_psql('postgres', "SELECT simhash_index_check('lib_fp')"), '', 'index verifies after the loads');

# A crash in the middle of a load: the source sleeps a little every 100 rows and memory_limit makes
# chunks of a few hundred rows, so the load has inserted several chunks when the server stops.
$node->safe_psql('postgres', q{
CREATE TABLE staged AS SELECT g AS id, hashtextextended('crash' || g, 0) AS fp FROM generate_series(1, 20000) g;
CREATE FUNCTION slow(g bigint) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN IF g % 100 = 0 THEN PERFORM pg_sleep(0.01); END IF; RETURN true; END $$;
});
my $before = $node->safe_psql('postgres', 'SELECT count(*) FROM lib');
my ($out, $err) = ('', '');
my $load = IPC::Run::start(
	[ 'psql', '-X', '-h', $node->host, '-p', $node->port, '-d', 'postgres', '-c',
	  q{SELECT * FROM simhash_insert_distinct('lib', 'SELECT id + 1000000 AS id, fp FROM staged WHERE slow(id) ORDER BY id', 3, memory_limit => '64kB')} ],
	'>', \$out, '2>', \$err);
# Wait until the load holds its locks (it has begun), then let it insert some chunks (visible to
# nobody yet: it runs in one transaction).
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1024 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 21320 AND granted})
  or diag('the load did not get going');
sleep 1;
$node->stop('immediate');
$load->finish;
$node->start;

is($node->safe_psql('postgres', 'SELECT count(*) FROM lib'), $before, 'none of the crashed load\'s rows is there');
is($node->safe_psql('postgres', "SELECT simhash_index_check('lib_fp')"), '', 'index verifies after crash recovery');
my $cmp = q{
SELECT string_agg(n::text, ',' ORDER BY q, k) FROM (
    SELECT q, k, (SELECT count(*) FROM lib WHERE hamming(fp, hashtextextended('crash' || q, 0)) <= k) AS n
    FROM generate_series(1, 300, 7) q, generate_series(0, 6) k) x;
};
my $index = $node->safe_psql('postgres', "SET enable_seqscan = off; $cmp");
my $seq = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $cmp");
is($index, $seq, 'index answers equal a seq scan after recovery');

# The same load now runs to its end and leaves no pair within the radius.
my $result = $node->safe_psql('postgres',
	q{SELECT inserted + skipped FROM simhash_insert_distinct('lib', 'SELECT id + 1000000 AS id, fp FROM staged ORDER BY id', 3)});
is($result, '20000', 'the load reads every staged row after recovery');
is($node->safe_psql('postgres', q{
SET enable_seqscan = off;
SELECT count(*) FROM lib a JOIN lib b ON hamming(a.fp, b.fp) <= 3 AND a.id < b.id}),
	'0', 'no two rows within 3 bits after the load');
is($node->safe_psql('postgres', "SELECT simhash_index_check('lib_fp')"), '', 'index verifies after the load');
$node->stop;
done_testing();

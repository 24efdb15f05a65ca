# A streaming standby replays the simhash index (build, inserts, merges, VACUUM) and answers the
# same queries as the primary, through the index. With wal_consistency_checking every generic WAL
# record carries the primary's page images and the standby's replay stops at the first page that
# differs from them (the inserts' records are built by the extension, in generic WAL's format).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "wal_consistency_checking = 'generic'");
$primary->start;
# A slot keeps the primary's WAL until the standby has it: the test writes WAL fast (page images)
# and a standby slowed by a busy machine would otherwise ask for segments already removed.
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('standby')");
$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby'");
$standby->start;

my $queries = q{
SET enable_seqscan = off;
SELECT string_agg(q || ':' || k || ':' || n, ',' ORDER BY q, k) FROM (
    SELECT q, k, (SELECT count(*) FROM docs WHERE hamming(fp, hashtextextended('doc' || q, 0)) <= k) AS n
    FROM generate_series(1, 40) q, generate_series(0, 9) k) x;
};
my $truth_query = $queries =~ s/enable_seqscan = off/enable_indexscan = off; SET enable_bitmapscan = off/r;

sub check_same {
	my ($label) = @_;
	$primary->wait_for_catchup($standby);
	my $on_primary = $primary->safe_psql('postgres', $queries);
	my $truth = $primary->safe_psql('postgres', $truth_query);
	my $on_standby = $standby->safe_psql('postgres', $queries);
	is($on_primary, $truth, "$label: primary index answers equal a seq scan");
	is($on_standby, $on_primary, "$label: standby answers equal the primary");
	my $plan = $standby->safe_psql('postgres',
		"SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT * FROM docs WHERE hamming(fp, 1) <= 3");
	like($plan, qr/docs_fp/, "$label: standby uses the index");
}

$primary->safe_psql('postgres', q{
CREATE EXTENSION simhash;
CREATE TABLE docs (id int, fp bigint);
INSERT INTO docs SELECT g, hashtextextended('doc' || g, 0) FROM generate_series(1, 20000) g;
INSERT INTO docs SELECT 100000 + g * 64 + b, hashtextextended('doc' || g, 0) # (1::bigint << b)
    FROM generate_series(1, 40) g, generate_series(0, 63, 7) b;
CREATE INDEX docs_fp ON docs USING simhash (fp) WITH (pending_limit = 64);
});
check_same('after build');

$primary->safe_psql('postgres', q{
INSERT INTO docs SELECT 200000 + g, hashtextextended('doc' || (g % 40 + 1), 0) # (3::bigint << (g % 60))
    FROM generate_series(1, 10000) g;
});
check_same('after inserts and insert-triggered merges');

$primary->safe_psql('postgres', q{DELETE FROM docs WHERE id % 4 = 0; VACUUM docs;});
check_same('after DELETE and VACUUM');

$primary->safe_psql('postgres', q{UPDATE docs SET fp = fp # 1 WHERE id % 5 = 0; INSERT INTO docs VALUES (1, NULL);});
check_same('after UPDATE (pending list)');

is($primary->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'primary index verifies');

# Runs with directories wider than 16 bits (3 tables of 21-22-bit blocks): one the build writes
# (log_newpages), and its rewrite by VACUUM once a third of it is dead, through Generic WAL.
# (No autovacuum on it: an ANALYZE holding one of its heap pages makes the VACUUM below skip that
# page's dead rows, and the rewritten run keeps them.)
$primary->safe_psql('postgres', q{
CREATE TABLE wide (id int, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO wide SELECT g, hashint8extended(g, 5) FROM generate_series(1, 600000) g;
CREATE INDEX wide_fp ON wide USING simhash (fp) WITH (tables = 3);
});
is($primary->safe_psql('postgres', "SELECT tables || '/' || dirbits FROM simhash_index_runs('wide_fp')"),
	'3/18', 'the build writes a run of 3 tables with an 18-bit directory');
$primary->safe_psql('postgres', 'DELETE FROM wide WHERE id % 3 = 0; VACUUM wide;');
is($primary->safe_psql('postgres', "SELECT entries || ' ' || tables || '/' || dirbits FROM simhash_index_runs('wide_fp')"),
	'400000 3/17', 'VACUUM rewrites it as a run with a 17-bit directory');
my $wide_queries = q{
SET enable_seqscan = off;
SELECT string_agg(q || ':' || k || ':' || n, ',' ORDER BY q, k) FROM (
    SELECT q, k, (SELECT count(*) FROM wide WHERE hamming(fp, hashint8extended(q, 5) # 5) <= k) AS n
    FROM generate_series(1, 600000, 15001) q, generate_series(0, 9, 3) k) x;
};
$primary->wait_for_catchup($standby);
my $wide_primary = $primary->safe_psql('postgres', $wide_queries);
is($wide_primary, $primary->safe_psql('postgres', $wide_queries =~ s/enable_seqscan = off/enable_indexscan = off; SET enable_bitmapscan = off/r),
	'wide directories: primary index answers equal a seq scan');
is($standby->safe_psql('postgres', $wide_queries), $wide_primary, 'wide directories: standby answers equal the primary');
is($standby->safe_psql('postgres', "SELECT simhash_index_check('wide_fp', concurrently => true)"), '',
	'wide directories: standby index verifies');
# Nearest first: the primary searches each ball ring by ring across calls; a standby, whose scans
# hold the metapage's lock only within a call, searches it at once. The same ids, in the order of a
# sort (ties by heap position).
my $order_queries = q{
SET enable_seqscan = off; SET enable_sort = off;
SELECT string_agg(q || ':' || ids, ',' ORDER BY q) FROM (
    SELECT q, (SELECT array_agg(id)::text FROM (SELECT id FROM wide ORDER BY fp <~> (hashint8extended(q, 5) # 7) LIMIT 30) s) AS ids
    FROM generate_series(1, 600000, 60001) q) x;
};
my $order_primary = $primary->safe_psql('postgres', $order_queries);
is($order_primary,
	$primary->safe_psql('postgres', $order_queries =~ s/SET enable_seqscan = off; SET enable_sort = off;/SET enable_indexscan = off; SET enable_bitmapscan = off;/r =~ s/ LIMIT 30/, ctid LIMIT 30/r),
	'nearest first: primary index answers equal a sort');
is($standby->safe_psql('postgres', $order_queries), $order_primary, 'nearest first: standby answers equal the primary');

# On the hot standby the concurrent check (AccessShareLock, MVCC snapshot) runs; the blocking one
# needs a ShareLock, which recovery does not allow.
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "SELECT simhash_index_check('docs_fp', concurrently => true)"), '',
	'standby index verifies concurrently');
my ($ret, $stdout, $stderr) = $standby->psql('postgres', "SELECT simhash_index_check('docs_fp')");
like($stderr, qr/cannot acquire lock mode ShareLock/, 'blocking check refused on a standby');

# simhash_index_runs on the standby reads run headers after the metapage. A merge and a recycle
# replayed in between would hand a run's header block to other data (the primary cannot see the
# standby's snapshot): the call pauses there (simhash.debug_pause_lock) while the primary retires,
# recycles and reuses the runs' pages, and must still answer.
$primary->safe_psql('postgres', q{
CREATE TABLE r (id bigint, fp bigint);
INSERT INTO r SELECT g, hashint8extended(g, 3) FROM generate_series(1, 20000) g;
CREATE INDEX r_fp ON r USING simhash (fp) WITH (pending_limit = 64);
DELETE FROM r WHERE id % 3 = 0 OR id % 5 = 0;
});
$primary->wait_for_catchup($standby);
my ($holder_in, $holder_out, $reader_in, $reader_out, $reader_err) = ('', '', '', '', '');
my @standby_psql = ('psql', '-X', '-At', '-v', 'ON_ERROR_STOP=0', '-d', $standby->connstr('postgres'));
my $holder = IPC::Run::start(\@standby_psql, '<', \$holder_in, '>', \$holder_out,
	IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default));
$holder_in .= "SELECT pg_advisory_lock(4242); SELECT 'held';\n";
$holder->pump until $holder_out =~ /held/;
my $reader = IPC::Run::start(\@standby_psql, '<', \$reader_in, '>', \$reader_out, '2>', \$reader_err,
	IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default));
$reader_in .= "SET simhash.debug_pause_lock = 4242; SELECT 'runs: ' || count(*) FROM simhash_index_runs('r_fp');\n";
$reader->pump_nb while length $reader_in;
$standby->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted")
	or die 'the standby reader did not pause';
$primary->safe_psql('postgres', 'VACUUM r');
$primary->safe_psql('postgres', 'SELECT txid_current()');
$primary->safe_psql('postgres', q{
VACUUM r;
INSERT INTO r SELECT 100000 + g, hashint8extended(g, 4) FROM generate_series(1, 20000) g;
VACUUM r;
});
# Give replay time to run past the recycling if nothing holds it (it waits while the call holds
# the metapage).
sleep(2);
$holder_in .= "SELECT pg_advisory_unlock(4242); SELECT 'released';\n";
$holder->pump until $holder_out =~ /released/;
$reader->pump until $reader_out =~ /runs: \d+/ || $reader_err =~ /ERROR/;
unlike($reader_err, qr/ERROR/, 'simhash_index_runs on the standby answers while the runs it read are recycled');
like($reader_out, qr/runs: [1-9]/, 'it lists the runs of the metapage it read');
$holder_in .= "\\q\n";
$reader_in .= "\\q\n";
$holder->finish;
$reader->finish;
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "SELECT simhash_index_check('r_fp', concurrently => true)"), '',
	'and the standby replays the rest once it returns');

# An unlogged table's index has no contents on a standby: the inspection and check functions
# refuse it as PostgreSQL refuses the table (instead of failing on the missing file).
$primary->safe_psql('postgres', q{
CREATE UNLOGGED TABLE u (fp bigint);
INSERT INTO u SELECT g FROM generate_series(1, 1000) g;
CREATE INDEX u_fp ON u USING simhash (fp);
});
$primary->wait_for_catchup($standby);
for my $call ("simhash_index_info('u_fp')", "simhash_index_runs('u_fp')", "simhash_index_check('u_fp', concurrently => true)") {
	($ret, $stdout, $stderr) = $standby->psql('postgres', "SELECT $call");
	like($stderr, qr/cannot access temporary or unlogged relations during recovery/, "$call refused on a standby");
}

# Promote the standby: its replayed index verifies and keeps working.
$standby->promote;
is($standby->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'promoted standby index verifies');
$standby->safe_psql('postgres', "INSERT INTO docs SELECT 900000 + g, g FROM generate_series(1, 100) g; VACUUM docs;");
is($standby->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'promoted standby index verifies after writes');

$standby->stop;
$primary->stop;
done_testing();

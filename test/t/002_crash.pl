# Crash (immediate stop) during concurrent inserts and merges; after recovery the index verifies and
# answers exactly like a sequential scan.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', "fsync = on\nautovacuum = off\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION simhash;
CREATE TABLE docs (id bigserial, fp bigint);
INSERT INTO docs (fp) SELECT hashtextextended('doc' || g, 0) FROM generate_series(1, 20000) g;
CREATE INDEX docs_fp ON docs USING simhash (fp) WITH (pending_limit = 64);
CREATE UNLOGGED TABLE udocs (id int, fp bigint);
CREATE INDEX udocs_fp ON udocs USING simhash (fp);
INSERT INTO udocs SELECT g, g FROM generate_series(1, 1000) g;
});

my $script = PostgreSQL::Test::Utils::tempdir() . '/insert.sql';
open(my $fh, '>', $script) or die;
print $fh q{INSERT INTO docs (fp) SELECT hashtextextended(random()::text, 0) # (1::bigint << (g % 64)) FROM generate_series(1, 50) g;
};
close $fh;
my $vacuum_script = PostgreSQL::Test::Utils::tempdir() . '/vacuum.sql';
open($fh, '>', $vacuum_script) or die;
print $fh q{DELETE FROM docs WHERE id BETWEEN (random() * 20000)::int AND (random() * 20000)::int + 30;
VACUUM docs;
};
close $fh;

# Four clients insert (and merge) while a fifth deletes and vacuums; crash in the middle.
my ($out, $err) = ('', '');
my $bench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', '30', '-f', "$script\@5", '-f', "$vacuum_script\@1",
	  '-p', $node->port, '-h', $node->host, 'postgres' ],
	'>', \$out, '2>', \$err);
sleep 6;
$node->stop('immediate');
$bench->finish;
$node->start;

is($node->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'index verifies after crash recovery');
my $cmp = q{
SELECT string_agg(n::text, ',' ORDER BY q, k) FROM (
    SELECT q, k, (SELECT count(*) FROM docs WHERE hamming(fp, hashtextextended('doc' || q, 0)) <= k) AS n
    FROM generate_series(1, 30) q, generate_series(0, 8) k) x;
};
my $index = $node->safe_psql('postgres', "SET enable_seqscan = off; $cmp");
my $seq = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $cmp");
is($index, $seq, 'index answers equal a seq scan after recovery');
ok($node->safe_psql('postgres', 'SELECT max(id) FROM docs') > 20000, 'inserts happened before the crash')
  or diag("pgbench: $out $err");

# The unlogged table and its index come back empty (init fork) and work.
is($node->safe_psql('postgres', 'SELECT count(*) FROM udocs'), '0', 'unlogged table is empty after crash');
$node->safe_psql('postgres', 'INSERT INTO udocs SELECT g, g FROM generate_series(1, 500) g');
is($node->safe_psql('postgres', "SET enable_seqscan = off; SELECT count(*) FROM udocs WHERE hamming(fp, 1) <= 1"),
	$node->safe_psql('postgres', "SELECT count(*) FROM udocs WHERE bit_count((fp # 1)::bit(64)) <= 1"),
	'unlogged index works after crash');
is($node->safe_psql('postgres', "SELECT simhash_index_check('udocs_fp')"), '', 'unlogged index verifies');

# After VACUUM merges everything the index still verifies.
$node->safe_psql('postgres', 'VACUUM docs');
is($node->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'index verifies after VACUUM');
$node->stop;
done_testing();

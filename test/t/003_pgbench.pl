# A pgbench mix of inserts, deletes, updates, queries and VACUUM on several clients, then the index
# verifies and answers like a sequential scan.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('bench');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION simhash;
CREATE TABLE docs (id bigserial PRIMARY KEY, fp bigint);
INSERT INTO docs (fp) SELECT hashtextextended('doc' || g, 0) FROM generate_series(1, 30000) g;
CREATE INDEX docs_fp ON docs USING simhash (fp) WITH (pending_limit = 128);
});

$node->pgbench(
	'-n -c 5 -j 2 -T 25',
	0,
	[qr{processed: [1-9]}],
	[qr{^$}],
	'concurrent insert/delete/update/query/vacuum mix',
	{
		'001_insert' => q{INSERT INTO docs (fp) SELECT hashtextextended(random()::text, 0) # (1::bigint << (g % 64)) FROM generate_series(1, 20) g;},
		'002_query@4' => q{
\set q random(1, 30000)
SELECT count(*) FROM docs WHERE hamming(fp, hashtextextended('doc' || :q, 0)) <= 3;
SELECT count(*) FROM docs WHERE hamming(fp, hashtextextended('doc' || :q, 0)) <= 7;
},
		'003_delete' => q{
\set d random(1, 100000)
DELETE FROM docs WHERE id BETWEEN :d AND :d + 20;
},
		'004_update' => q{
\set u random(1, 100000)
UPDATE docs SET fp = fp # 5 WHERE id BETWEEN :u AND :u + 10;
},
		'005_vacuum@1' => q{VACUUM docs;},
	});

is($node->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'index verifies after the mix');
my $cmp = q{
SELECT string_agg(n::text, ',' ORDER BY q, k) FROM (
    SELECT q, k, (SELECT count(*) FROM docs WHERE hamming(fp, hashtextextended('doc' || q, 0)) <= k) AS n
    FROM generate_series(1, 50) q, generate_series(0, 10) k) x;
};
my $index = $node->safe_psql('postgres', "SET enable_seqscan = off; $cmp");
my $seq = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $cmp");
is($index, $seq, 'index answers equal a seq scan after the mix');
$node->safe_psql('postgres', 'VACUUM docs');
is($node->safe_psql('postgres', "SELECT simhash_index_check('docs_fp')"), '', 'index verifies after a final VACUUM');
$index = $node->safe_psql('postgres', "SET enable_seqscan = off; $cmp");
is($index, $seq, 'index answers equal a seq scan after the final VACUUM');
$node->stop;
done_testing();
